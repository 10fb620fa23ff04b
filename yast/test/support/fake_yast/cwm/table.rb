# SPDX-License-Identifier: LGPL-2.1-or-later
# FAKE: see ../yast.rb. Mirrors the public behaviour of yast2's CWM::Table.

require "cwm/abstract_widget"

module CWM
  class Table < AbstractWidget
    def items
      []
    end

    def change_items(items_list)
      Yast::UI.ChangeWidget(Id(widget_id), :Items, items_list)
    end

    def value
      Array(Yast::UI.QueryWidget(Id(widget_id), :SelectedItems)).first
    end

    def value=(id)
      Yast::UI.ChangeWidget(Id(widget_id), :SelectedItems, [id])
    end
  end
end
