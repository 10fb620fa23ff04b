# SPDX-License-Identifier: LGPL-2.1-or-later

require "yast"
require "cgi"
require "cwm/common_widgets"

module Y2Fsgate
  module Widgets
    # Plain text as rich text: each paragraph (separated by a blank line) one <p>, the
    # rest escaped.
    # @param text [String]
    # @return [String]
    def self.paragraphs(text)
      text.split(/\n\s*\n/).map { |p| "<p>#{CGI.escapeHTML(p.strip).gsub("\n", "<br>")}</p>" }.join
    end

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
        _("Only until re&boot")
      end

      def init
        self.value = false
      end
    end

    # Filters the table by module or type name. The label sits left of the field, not
    # above it as an InputField's own label does in the text UI: that line is what lets the
    # table keep 10 rows at 80x24. A Label has no shortcut; the field is the dialog's first
    # widget, focused when it opens (Tab reaches it later).
    class FilterField < CWM::CustomWidget
      # Its value is the field's (the field has the widget's id).
      include CWM::ValueBasedWidget

      # @param on_change [#call] called with the text
      def initialize(on_change)
        super()
        textdomain "fsgate"
        @on_change = on_change
        self.widget_id = "fsgate_filter"
      end

      def contents
        HBox(
          Label(_("Filter:")),
          HSpacing(1),
          InputField(Id(widget_id), Opt(:notify, :hstretch), "")
        )
      end

      def handle
        @on_change.call(value)
        nil
      end
    end

    # The last outcome, the selected row, why actions are disabled, where changes go.
    # A RichText inside a CustomWidget, not a CWM::RichText: CWM's validation wants a label
    # with one shortcut on every :richtext widget (its exemption is spelt :rich_text) and
    # logs "Empty label" otherwise, though a RichText shows no label.
    class Details < CWM::CustomWidget
      def initialize
        super()
        self.widget_id = "fsgate_details"
      end

      def contents
        RichText(Id(widget_id), "")
      end

      # @param lines [Array<String>] plain text
      def lines=(lines)
        Yast::UI.ChangeWidget(Id(widget_id), :Value, lines.map { |l| CGI.escapeHTML(l) }.join("<br>"))
      end
    end
  end
end
