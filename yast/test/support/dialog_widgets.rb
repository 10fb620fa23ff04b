# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The dialog's widgets as CWM.show finds them: used by dialog_test.rb and by
# tests/yast-tui/expected-texts.rb, so that the labels the rspec suite checks are the ones
# the text-UI test looks for on the screen.

module DialogWidgets
  module_function

  # Every CWM widget in a term tree.
  def collect(term)
    case term
    when CWM::AbstractWidget then [term]
    when Yast::Term then term.params.flat_map { |p| collect(p) }
    else []
    end
  end

  # The labels (with their & shortcuts) of the widgets that have one.
  def labels(term)
    collect(term).select { |w| w.respond_to?(:label) }.map(&:label)
  end
end
