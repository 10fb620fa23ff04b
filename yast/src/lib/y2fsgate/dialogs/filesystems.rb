# SPDX-License-Identifier: LGPL-2.1-or-later

require "yast"
require "cwm/dialog"
require "y2fsgate/filesystems_presenter"
require "y2fsgate/widgets/filesystems_table"
require "y2fsgate/widgets/controls"

Yast.import "Label"
Yast.import "Popup"

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
        @table = Widgets::FilesystemsTable.new(presenter, method(:update))
        @filter = Widgets::FilterField.new(method(:filter))
        @details = Widgets::Details.new
        @runtime = presenter.runtime_available? ? Widgets::RuntimeCheckBox.new : nil
        @buttons = presenter.actions(nil).map do |a|
          Widgets::ActionButton.new(a.id, a.label, method(:run_action))
        end
      end

      def title
        _("Filesystem Autoload")
      end

      def contents
        VBox(
          Left(@filter),
          @table,
          HBox(*@buttons, HStretch(), @runtime || Empty()),
          MinHeight(6, @details)
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
        result = @presenter.execute(id, action, runtime: runtime) { |text| Yast::Popup.YesNo(text) }
        Yast::Popup.Error(result.message) if result.error
        @message = result.message
        @table.refresh(id)
        update
      end

      def filter(text)
        @presenter.filter = text
        @table.refresh(@table.value)
        update
      end

      # Enables the buttons the selected row allows and shows why the others are not.
      def update
        id = @table.value
        @presenter.actions(id).zip(@buttons).each do |action, button|
          action.enabled? ? button.enable : button.disable
        end
        @details.lines = @presenter.details(id) + [@message].compact
      end
    end
  end
end
