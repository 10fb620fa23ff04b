# SPDX-License-Identifier: LGPL-2.1-or-later

require "yast"
require "cgi"
require "cwm/common_widgets"

module Y2Fsgate
  module Widgets
    # Allow / Deny / Reset / Load Now: one button per presenter action.
    class ActionButton < CWM::PushButton
      attr_reader :action

      # @param action [Symbol] :allow, :deny, :reset or :load
      # @param label [String]
      # @param on_click [#call] called with the action
      def initialize(action, label, on_click)
        super()
        @action = action
        @label = label
        @on_click = on_click
        self.widget_id = "fsgate_#{action}"
      end

      def label
        @label
      end

      def handle
        @on_click.call(action)
        nil
      end
    end

    # Only until reboot (RUNTIME, in /run/modprobe.d).
    class RuntimeCheckBox < CWM::CheckBox
      def initialize
        super()
        textdomain "fsgate"
        self.widget_id = "fsgate_runtime"
      end

      def label
        _("Only until &reboot")
      end

      def init
        self.value = false
      end
    end

    # Filters the table by module or type name.
    class FilterField < CWM::InputField
      # @param on_change [#call] called with the text
      def initialize(on_change)
        super()
        textdomain "fsgate"
        @on_change = on_change
        self.widget_id = "fsgate_filter"
      end

      def label
        _("&Filter")
      end

      def opt
        [:notify, :hstretch]
      end

      def handle
        @on_change.call(value)
        nil
      end
    end

    # Where changes go, the selected row, why actions are disabled, the last outcome.
    class Details < CWM::RichText
      def initialize
        super()
        self.widget_id = "fsgate_details"
      end

      # @param lines [Array<String>] plain text
      def lines=(lines)
        self.value = lines.map { |l| CGI.escapeHTML(l) }.join("<br>")
      end
    end
  end
end
