# SPDX-License-Identifier: LGPL-2.1-or-later

require "yast"
require "cwm/table"

module Y2Fsgate
  module Widgets
    # The table of filesystem modules; rows and header come from the presenter.
    class FilesystemsTable < CWM::Table
      # @param presenter [FilesystemsPresenter]
      # @param on_select [#call] called when the selection changes
      def initialize(presenter, on_select)
        super()
        textdomain "fsgate"
        @presenter = presenter
        @on_select = on_select
        self.widget_id = "fsgate_filesystems"
      end

      def header
        @presenter.table_header
      end

      def items
        @presenter.table_items
      end

      def opt
        [:notify, :immediate, :keepSorting]
      end

      # Short enough to be read whole in the text UI's help popup at 80x24.
      def help
        _("<p>The kernel loads a filesystem module on its own when something mounts that " \
          "filesystem, for example a USB stick. Rarely used filesystems are old, little audited " \
          "code: <b>Deny</b> stops the automatic loading, <b>Allow</b> permits it again, " \
          "<b>Reset</b> returns to the distribution's default.</p>" \
          "<p><b>Load Now</b> loads the module once, for this boot. <b>Only until reboot</b> " \
          "makes the change in /run/modprobe.d, which the next boot forgets.</p>" \
          "<p>Denying a filesystem that is mounted now asks first: the next boot could not " \
          "mount it.</p>")
      end

      def init
        first = items.first
        self.value = first.first if first
        @on_select.call
      end

      def handle
        @on_select.call
        nil
      end

      # Redraws the rows, keeping the selection while that row is still shown.
      def refresh(selected)
        rows = items
        change_items(rows)
        keep = rows.find { |r| r.first == selected } || rows.first
        self.value = keep.first if keep
      end
    end
  end
end
