# SPDX-License-Identifier: LGPL-2.1-or-later
# FAKE: see ../yast.rb. Mirrors the public behaviour of yast2's CWM::Dialog; run shows
# nothing and returns :next, remembering the dialog for the test.

require "yast"

module CWM
  class Dialog
    include Yast::I18n
    include Yast::UIShortcuts
    include Yast::Logger

    class << self
      attr_accessor :last
    end

    def self.run(*args)
      new(*args).run
    end

    def run
      Dialog.last = self
      :next
    end

    def title
      nil
    end
  end
end
