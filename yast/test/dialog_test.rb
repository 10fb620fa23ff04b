# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The dialog's wiring, on a FAKE of YaST's UI and CWM (test/support/fake_yast: yast2 and
# libyui are not in Debian), over the presenter and the real fsgated. This proves the
# dialog calls the presenter correctly and reacts to the results; it does not prove that
# it looks right in YaST (tests/yast-tui runs it in YaST's real text UI). Those examples
# are skipped where the real YaST libraries are on the load path; the widgets' labels and
# (with real YaST) CWM's own validation of the widgets are checked on both.

require_relative "test_helper"

REAL_YAST = begin
  require "yast"
  !defined?(Yast::FAKE)
rescue LoadError
  $LOAD_PATH.unshift(File.expand_path("support/fake_yast", __dir__))
  require "yast"
  false
end

require "y2fsgate/dialogs/filesystems"
require "y2fsgate/clients/main"
require_relative "support/dialog_widgets"

RSpec.describe "Y2Fsgate::Dialogs::Filesystems's widgets (#{REAL_YAST ? "real YaST" : "fake UI"})" do
  include DialogWidgets

  before { TestEnv.restore(TestEnv::ROOT) }
  after { client.close }

  let(:client) { Y2Fsgate::Client.new(fsgatectl: TestEnv::FSGATECTL) }
  let(:presenter) { Y2Fsgate::FilesystemsPresenter.new(client).refresh }
  let(:dialog) { Y2Fsgate::Dialogs::Filesystems.new(presenter) }
  let(:widgets) { collect(dialog.contents) }

  # libyui gives a clashing shortcut silently to another letter: the label then lies.
  it "gives every label of the dialog, the wizard's Help and Close included, its own shortcut" do
    labels = labels(dialog.contents) + [Yast::Label.HelpButton, dialog.next_button]
    keys = labels.map { |l| l.scan(/&(.)/).flatten.map(&:downcase) }
    expect(keys.map(&:size)).to all(eq(1)), "labels without exactly one shortcut: #{labels.inspect}"
    clashes = labels.group_by { |l| l[/&(.)/, 1].downcase }.select { |_k, v| v.size > 1 }
    expect(clashes).to be_empty
  end

  it "passes CWM's validation of its widget descriptions (no \"Empty label\")" do
    skip "needs the real YaST's CWM" unless REAL_YAST
    Yast.import "CWM"
    descriptions = widgets.map { |w| [w.widget_id, w.cwm_definition] }.to_h
    expect(Yast::CWM.ValidateMaps(descriptions)).to eq(true)
  end
end

RSpec.describe "Y2Fsgate::Dialogs::Filesystems (on a fake UI)" do
  include DialogWidgets

  before do
    skip "the real YaST is on the load path: this test runs on the fake only" if REAL_YAST
    TestEnv.restore(TestEnv::ROOT)
    Yast::UI.reset
    Yast2::Popup.reset
  end

  let(:client) { Y2Fsgate::Client.new(fsgatectl: TestEnv::FSGATECTL) }
  let(:presenter) { Y2Fsgate::FilesystemsPresenter.new(client).refresh }
  let(:dialog) { Y2Fsgate::Dialogs::Filesystems.new(presenter) }
  let(:widgets) { collect(dialog.contents) }

  after { client.close }

  def widget(id)
    widgets.find { |w| w.widget_id == id } or raise "no widget #{id}"
  end

  def show
    widgets.each { |w| w.init if w.respond_to?(:init) }
  end

  def select(id)
    Yast::UI.ChangeWidget(Yast::Term.new(:id, widget("fsgate_filesystems").widget_id), :SelectedItems, [id])
    widget("fsgate_filesystems").handle
  end

  def click(action)
    widget("fsgate_#{action}").handle
  end

  def enabled_buttons
    %w[allow deny reset load].select { |a| Yast::UI.QueryWidget(Yast::Term.new(:id, "fsgate_#{a}"), :Enabled) }
  end

  def details
    Yast::UI.QueryWidget(Yast::Term.new(:id, "fsgate_details"), :Value)
  end

  def items
    Yast::UI.QueryWidget(Yast::Term.new(:id, "fsgate_filesystems"), :Items)
  end

  it "has a title, a Close button and the widgets" do
    expect(dialog.title).to eq("Filesystem Autoload")
    expect([dialog.back_button, dialog.abort_button, dialog.next_button]).to eq(["", "", "C&lose"])
    # The first line: the filter, Deny, Reset, End Grant, the check box; the second: the ways
    # to use a denied filesystem, the safest first and the permanent Allow last.
    expect(widgets.map(&:widget_id)).to eq(%w[fsgate_filter fsgate_deny fsgate_reset fsgate_end_grant
                                              fsgate_runtime fsgate_open fsgate_grant_device fsgate_grant_time
                                              fsgate_load fsgate_allow fsgate_filesystems fsgate_details])
    table = widget("fsgate_filesystems")
    expect(table.header).to eq(presenter.table_header)
    expect(table.items).to eq(presenter.table_items)
  end

  it "enables the buttons the selected row allows and explains the others" do
    show
    select("hfs")
    expect(enabled_buttons).to eq(%w[allow load])
    expect(details).to include("hfs (types: hfs): denied; decided by vendor: /usr/lib/modprobe.d/60-blacklist_fs-hfs.conf.")
    expect(details).to include("Deny: hfs is denied already.")
  end

  it "shows what the kernel source says of the selected row below the table, after the row's line" do
    show
    select("hfs")
    lines = details.split("<br>")
    expect(lines[0]).to start_with("hfs (types: hfs)")
    expect(lines[1]).to eq(CGI.escapeHTML(RiskFacts.panel_line("hfs")))
    expect(lines[1]).to include("Kernel code: #{RiskFacts.of("hfs")["risk_maintainers"]} (HFS FILESYSTEM)")
    select("fuse")
    expect(details).to include("Users can mount it in a user namespace: yes")
    expect(details).not_to include("HFS FILESYSTEM")
  end

  it "allows, redraws the table and keeps the selection" do
    show
    select("hfs")
    click(:allow)
    expect(TestEnv.file(TestEnv::ROOT, TestEnv.conf(TestEnv::ADMIN, "hfs"))).to eq("-> /dev/null")
    expect(items.find { |i| i.first == "hfs" }[2]).to eq("allowed")
    expect(widget("fsgate_filesystems").value).to eq("hfs")
    expect(enabled_buttons).to eq(%w[deny reset load])
    expect(details).to start_with("hfs: allowed (admin: /etc/modprobe.d/60-blacklist_fs-hfs.conf).")
    expect(Yast2::Popup.errors).to be_empty
  end

  it "shows an action's outcome first, while its row stays selected" do
    show
    select("hfs")
    click(:allow)
    expect(details).to start_with("hfs: allowed")
    select("minix")
    expect(details).not_to include("hfs: allowed")
    expect(details).to start_with("minix (types: minix)")
  end

  it "asks before denying a mounted filesystem and respects the answer" do
    TestEnv.mount(TestEnv::ROOT, "minix")
    show
    select("minix")
    Yast2::Popup.answer = false
    click(:deny)
    expect(Yast2::Popup.asked.last).to start_with("minix is mounted now.")
    expect(TestEnv.file(TestEnv::ROOT, TestEnv.conf(TestEnv::ADMIN, "minix"))).to be_nil
    Yast2::Popup.answer = true
    click(:deny)
    expect(TestEnv.file(TestEnv::ROOT, TestEnv.conf(TestEnv::ADMIN, "minix"))).to match(/^blacklist minix$/)
  end

  it "passes the until-reboot choice on" do
    show
    select("minix")
    widget("fsgate_runtime").value = true
    click(:deny)
    expect(TestEnv.file(TestEnv::ROOT, TestEnv.conf(TestEnv::RUNTIME, "minix"))).to match(/^blacklist minix$/)
  end

  it "shows the service's error in a popup" do
    show
    select("ufs")
    click(:allow)
    expect(Yast2::Popup.errors.size).to eq(1)
    expect(Yast2::Popup.errors.first).to include("ufs.conf was not written by fsgate")
    expect(Yast2::Popup.errors.first).not_to include("org.fsgate")
  end

  it "filters the table" do
    show
    widget("fsgate_filter").value = "vxfs"
    widget("fsgate_filter").handle
    expect(items.map(&:first)).to eq(["freevxfs"])
    expect(widget("fsgate_filesystems").value).to eq("freevxfs")
  end

  # A string, not the class: with the real YaST on the load path the class is still loaded,
  # but the examples are skipped (and must not fail at load time either).
  describe "Y2Fsgate::Clients::Main" do
    let(:described_class) { Y2Fsgate::Clients::Main }
    before { stub_const("Y2Fsgate::Fsgatectl::DEFAULT_PATH", TestEnv::FSGATECTL) }
    after { Yast::Stage.initial_stage = false unless REAL_YAST }

    it "opens the dialog for the running system through the service" do
      Yast::Stage.initial_stage = false
      expect(described_class.new.run).to eq(:next)
      expect(CWM::Dialog.last.instance_variable_get(:@presenter).client.mode).to eq(:bus)
    end

    it "works offline on the target during installation" do
      Yast::Stage.initial_stage = true
      Yast::Installation.destdir = TestEnv::OFFLINE_ROOT
      expect(described_class.new.run).to eq(:next)
      client = CWM::Dialog.last.instance_variable_get(:@presenter).client
      expect([client.mode, client.target]).to eq([:offline, TestEnv::OFFLINE_ROOT])
      expect(CWM::Dialog.last.title).to eq("Filesystem Autoload: System at #{TestEnv::OFFLINE_ROOT}")
    end

    it "shows an error and aborts when fsgate cannot be used at all" do
      stub_const("Y2Fsgate::Fsgatectl::DEFAULT_PATH", "#{TestEnv::WORK}/no-fsgatectl")
      Yast::Stage.initial_stage = true
      Yast::Installation.destdir = TestEnv::OFFLINE_ROOT
      expect(described_class.new.run).to eq(:abort)
      expect(Yast2::Popup.errors.first).to include("is fsgate installed?")
    end
  end
end
