# SPDX-License-Identifier: LGPL-2.1-or-later

require "yast"
require "y2fsgate/client"
require "y2fsgate/filesystems_presenter"
require "y2fsgate/dialogs/filesystems"
require "y2fsgate/widgets/controls"
require "yast2/popup"

Yast.import "Stage"
Yast.import "Installation"

module Y2Fsgate
  module Clients
    # `yast2 fsgate`: the running system through the service; during installation the
    # target system, offline (fsgatectl --root=TARGET).
    class Main
      include Yast::I18n

      def run
        textdomain "fsgate"
        presenter = FilesystemsPresenter.new(Client.new(target: target))
        presenter.refresh
        Dialogs::Filesystems.run(presenter)
      rescue Y2Fsgate::Error => e
        text = presenter ? presenter.error_text(e) : e.message
        Yast2::Popup.show(Widgets.paragraphs(text), richtext: true, headline: :error)
        :abort
      end

    private

      def target
        Yast::Stage.initial ? Yast::Installation.destdir : "/"
      end
    end
  end
end
