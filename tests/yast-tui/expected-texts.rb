# SPDX-License-Identifier: LGPL-2.1-or-later
#
# ruby expected-texts.rb YAST_SRC_LIB FAKE_YAST_DIR [CATALOG.mo]
#
# Prints, as JSON, the texts the TUI test expects to see whole on the screen (popups, the
# risk card, the table's cells) and the labels of the dialog's widgets (with their &
# shortcuts), computed by the module's own code
# (the presenter, the table's help, the dialog) against the running fsgated on
# $DBUS_SYSTEM_BUS_ADDRESS: what the screen shows is then compared with what the module
# meant to show. Runs on Debian's ruby with the FAKE yast of the rspec suite (the help text
# needs only its I18n), never with the real YaST, and changes nothing: the ForeignConfig
# error comes from an Allow that the service refuses.

require "json"

$LOAD_PATH.unshift(ARGV.fetch(0), ARGV.fetch(1))
require "yast"
# With a catalog (the build's LANG/LC_MESSAGES/fsgate.mo): the texts in that language, as
# YaST's FastGettext finds them there (an untranslated text stays as it is).
if ARGV[2]
  require "fast_gettext"
  catalog = FastGettext::MoFile.new(ARGV[2])
  Yast::I18n.send(:define_method, :_) { |str| (t = catalog[str]).is_a?(String) && !t.empty? ? t : str }
end
require "y2fsgate/client"
require "y2fsgate/filesystems_presenter"
require "y2fsgate/widgets/filesystems_table"
require "y2fsgate/dialogs/filesystems"
require_relative "../../yast/test/support/dialog_widgets"

client = Y2Fsgate::Client.new
abort "expected-texts.rb: not on the service (#{client.fallback_reason})" unless client.mode == :bus
presenter = Y2Fsgate::FilesystemsPresenter.new(client).refresh

foreign = begin
  client.allow("ufs")
  abort "expected-texts.rb: allowing ufs succeeded; the fixture's foreign file is missing"
rescue Y2Fsgate::ForeignConfigError => e
  presenter.error_text(e)
end

# Load for a While of hfs: the grant's load fails on this host (fsgated over an image never
# loads into the running kernel); nothing stays granted. Only while hfs is denied (the Qt
# test reads the texts again after it allowed hfs): otherwise there is nothing to grant.
grant_failed = if presenter.find("hfs").denied?
  begin
    client.grant("hfs", seconds: Y2Fsgate::FilesystemsPresenter::GRANT_SECONDS)
    abort "expected-texts.rb: a grant of hfs succeeded; this host loads no module"
  rescue Y2Fsgate::LoadFailedError => e
    presenter.error_text(e)
  end
end

texts = {
  "confirm_deny_minix" => presenter.confirmation_text(presenter.find("minix")),
  "foreign_config_ufs" => foreign,
  "grant_failed_hfs"   => grant_failed,
  "lift_labels"        => presenter.lift_actions(nil).map(&:label),
  "help"               => Y2Fsgate::Widgets::FilesystemsTable.new(presenter, nil).help,
  "risk_hfs"           => presenter.risk_text("hfs"),
  # The table as the presenter fills it: its header and each row's cells (the module
  # name first), by module.
  "table"              => { "header" => presenter.table_header,
                            "rows"   => presenter.table_items.to_h { |id, *cells| [id, cells] } },
  "labels"             => DialogWidgets.labels(Y2Fsgate::Dialogs::Filesystems.new(presenter).contents)
}
client.close
puts JSON.pretty_generate(texts)
