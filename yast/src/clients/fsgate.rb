# SPDX-License-Identifier: LGPL-2.1-or-later
#
# YaST client: `yast2 fsgate` (or `yast fsgate` in a terminal).

require "y2fsgate/clients/main"

Y2Fsgate::Clients::Main.new.run
