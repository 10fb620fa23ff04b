# SPDX-License-Identifier: LGPL-2.1-or-later
# FAKE: see ../yast.rb. Mirrors the public behaviour of yast2's cwm/common_widgets.

require "cwm/abstract_widget"

module CWM
  module ValueBasedWidget
    def value
      Yast::UI.QueryWidget(Id(widget_id), :Value)
    end

    def value=(val)
      Yast::UI.ChangeWidget(Id(widget_id), :Value, val)
    end
  end

  class PushButton < AbstractWidget; end

  class InputField < AbstractWidget
    include ValueBasedWidget
  end

  class CheckBox < AbstractWidget
    include ValueBasedWidget

    def checked?
      value == true
    end
  end

  class RichText < AbstractWidget
    include ValueBasedWidget
  end

  class CustomWidget < AbstractWidget; end
end
