# SPDX-License-Identifier: LGPL-2.1-or-later

require "yast"
require "cwm/dialog"
require "yast2/popup"
require "y2fsgate/filesystems_presenter"
require "y2fsgate/widgets/filesystems_table"
require "y2fsgate/widgets/controls"

Yast.import "Label"

module Y2Fsgate
  module Dialogs
    # The filesystems dialog: a table and a button per action. Deliberately thin: what
    # to show and what is allowed is decided by FilesystemsPresenter (tested against the
    # real service); this class only connects widgets to it.
    class Filesystems < CWM::Dialog
      # @param presenter [FilesystemsPresenter]
      def initialize(presenter)
        super()
        textdomain "fsgate"
        @presenter = presenter
        @message = nil
        @message_for = nil
        @table = Widgets::FilesystemsTable.new(presenter, method(:update))
        @filter = Widgets::FilterField.new(method(:filter))
        @details = Widgets::Details.new
        @runtime = presenter.runtime_available? ? Widgets::RuntimeCheckBox.new : nil
        @buttons = presenter.actions(nil).map do |a|
          Widgets::ActionButton.new(a.id, a.label, method(:run_action))
        end
      end

      # Names the system changed when it is not this one (the installation target).
      def title
        target = @presenter.client.target
        return _("Filesystem Autoload") if target == "/"

        format(_("Filesystem Autoload: System at %s"), target)
      end

      # Two lines of buttons above the table: the filter, Deny, Reset, End Grant and the
      # check box; below them the ways to use a denied filesystem in the order the
      # presenter gives them, the safest first and the permanent Allow last (issue 41). At
      # 80x24 in the text UI the table keeps 9 rows, and the details panel gets a fifth of
      # the height (at least one line of text, scrollable; its most pressing line first).
      def contents
        lift, other = @buttons.partition { |b| FilesystemsPresenter::LIFT_ACTIONS.include?(b.action) }
        VBox(
          HBox(HWeight(1, @filter), HSpacing(1), *other, HSpacing(1), @runtime || Empty()),
          Left(HBox(*lift)),
          VWeight(4, @table),
          VWeight(1, MinHeight(3, @details))
        )
      end

      def back_button
        ""
      end

      def abort_button
        ""
      end

      def next_button
        Yast::Label.CloseButton
      end

    private

      def run_action(action)
        id = @table.value
        runtime = @runtime ? @runtime.checked? : false
        result = @presenter.execute(id, action, runtime: runtime) { |text| ask(text) }
        show_error(result.message) if result.error
        @message = result.message
        @message_for = id
        @table.refresh(id)
        update
      end

      # Popups show the text as rich text: wrapped, paragraphs kept. Yast::Popup.YesNo and
      # .Error cut long lines off at the screen's edge in the text UI, and a Label with
      # autoWrap runs the paragraphs together.
      def ask(text)
        Yast2::Popup.show(Widgets.paragraphs(text), richtext: true, buttons: :yes_no) == :yes
      end

      def show_error(text)
        Yast2::Popup.show(Widgets.paragraphs(text), richtext: true, headline: :error)
      end

      def filter(text)
        @presenter.filter = text
        @table.refresh(@table.value)
        update
      end

      # Enables the buttons the selected row allows and shows why the others are not,
      # after the outcome of the last action while its row is still selected.
      def update
        id = @table.value
        @presenter.actions(id).zip(@buttons).each do |action, button|
          action.enabled? ? button.enable : button.disable
        end
        @message = nil if @message_for != id
        @details.lines = [@message].compact + @presenter.details(id)
      end
    end
  end
end
