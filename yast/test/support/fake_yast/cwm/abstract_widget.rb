# SPDX-License-Identifier: LGPL-2.1-or-later
# FAKE: see ../yast.rb. Mirrors the public behaviour of yast2's CWM::AbstractWidget.

require "yast"

module CWM
  class AbstractWidget
    include Yast::UIShortcuts
    include Yast::I18n
    include Yast::Logger

    attr_writer :widget_id

    def widget_id
      @widget_id || self.class.to_s
    end

    def enabled?
      Yast::UI.QueryWidget(Id(widget_id), :Enabled) != false
    end

    def enable
      Yast::UI.ChangeWidget(Id(widget_id), :Enabled, true)
    end

    def disable
      Yast::UI.ChangeWidget(Id(widget_id), :Enabled, false)
    end
  end
end
