# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Y2Fsgate::FilesystemsPresenter against the real fsgated (and offline against fsgatectl).

require_relative "test_helper"

RSpec.describe Y2Fsgate::FilesystemsPresenter do
  subject(:presenter) { described_class.new(client).refresh }

  let(:client) { Y2Fsgate::Client.new(fsgatectl: TestEnv::FSGATECTL) }
  let(:root) { TestEnv::ROOT }
  let(:hfs_vendor) { TestEnv.conf(TestEnv::VENDOR, "hfs") }
  let(:hfs_admin) { TestEnv.conf(TestEnv::ADMIN, "hfs") }

  before { TestEnv.restore(root) }
  after { client.close }

  def enabled(id)
    presenter.actions(id).select(&:enabled?).map(&:id)
  end

  def reason(id, action)
    presenter.actions(id).find { |a| a.id == action }.reason
  end

  describe "#rows and #table_items" do
    it "has one row per module, sorted, with short cells" do
      ids = presenter.rows.map(&:id)
      expect(ids).to eq(ids.sort)
      expect(presenter.table_header).to eq(["Module", "Autoload", "In use", "Decided by"])
      expect(presenter.table_items.find { |i| i.first == "hfs" })
        .to eq(["hfs", "hfs", "denied", "no", "vendor: #{File.basename(hfs_vendor)}"])
      expect(presenter.rows.find { |r| r.id == "ext4" }.cells).to eq(["ext4", "allowed", "mounted", "default"])
      # Not in this kernel: the state alone, In use "-"; the panel says it in words.
      expect(presenter.rows.find { |r| r.id == "cramfs" }.cells).to eq(
        ["cramfs", "denied", "-", "vendor: #{File.basename(TestEnv.conf(TestEnv::VENDOR, "cramfs"))}"]
      )
      TestEnv.load(root, "udf")
      expect(presenter.refresh.rows.find { |r| r.id == "udf" }.cells[2]).to eq("loaded")
      expect(presenter.details("cramfs").first).to eq(
        "cramfs (types: -): denied (not in this kernel); decided by vendor: #{TestEnv.conf(TestEnv::VENDOR, "cramfs")}."
      )
    end

    # The text UI makes each column as wide as its longest cell and scrolls sideways what
    # does not fit in the table's frame: 74 columns at 80x24, one of them between columns.
    it "fits in the table's 74 columns at 80x24, with fsgate's files for the longest module names too" do
      width = lambda do
        items = [presenter.table_header] + presenter.table_items.map { |i| i.drop(1) }
        items.transpose.sum { |col| col.map(&:size).max } + presenter.table_header.size - 1
      end
      expect(width.call).to be <= 74
      expect(presenter.execute("ocfs2_dlmfs", :deny)).to be_ok   # the longest module name
      expect(presenter.execute("freevxfs", :deny, runtime: true)).to be_ok
      expect(presenter.table_items.find { |i| i.first == "ocfs2_dlmfs" }.last)
        .to eq("admin: 60-blacklist_fs-ocfs2_dlmfs.conf")
      expect(presenter.table_items.find { |i| i.first == "freevxfs" }.last)
        .to eq("runtime: 60-blacklist_fs-freevxfs.conf")
      expect(presenter.details("freevxfs").first)
        .to end_with("decided by until reboot: #{TestEnv.conf(TestEnv::RUNTIME, "freevxfs")}.")
      expect(width.call).to be <= 74
    end

    it "filters by module or type" do
      presenter.filter = " VXFS "
      expect(presenter.rows.map(&:id)).to eq(["freevxfs"])
      expect(presenter.rows.first.cells.first).to eq("freevxfs (type vxfs)")
      presenter.filter = "ext"
      expect(presenter.rows.map(&:id)).to include("ext4")
      expect(presenter.rows.map(&:id)).not_to include("hfs")
      presenter.filter = ""
      expect(presenter.rows.size).to eq(presenter.filesystems.size)
    end

    # Issue 41 item 4: "hfs" matched ib_qib because its type "ipathfs" contains "hfs".
    it "matches names first, then types, where a name or a part of it begins, and says which" do
      presenter.filter = "hfs"
      expect(presenter.rows.map(&:id)).to eq(["hfs", "hfsplus"])
      expect(presenter.rows.map { |r| r.cells.first }).to eq(["hfs", "hfsplus"])
      presenter.filter = "ipathfs"
      expect(presenter.rows.map { |r| r.cells.first }).to eq(["ib_qib (type ipathfs)"])
      presenter.filter = "qib"
      expect(presenter.rows.map { |r| r.cells.first }).to eq(["ib_qib"])
      presenter.filter = "ib-qib"
      expect(presenter.rows.map(&:id)).to eq(["ib_qib"])
      # Several words: each must match (a name or a type).
      presenter.filter = "ext ext2"
      expect(presenter.rows.map { |r| r.cells.first }).to eq(["ext4 (type ext2)"])
      # A glob matches a whole name, as fsgatectl list PATTERN.
      presenter.filter = "*fat"
      expect(presenter.rows.map(&:id)).to include("vfat")
      expect(presenter.rows.map(&:id)).not_to include("hfs")
      presenter.filter = "fat"
      expect(presenter.rows.map(&:id)).not_to include("vfat")
      expect(presenter.match_of(presenter.find("ib_qib"))).to be_nil
    end
  end

  describe "#actions" do
    it "offers Load for a While, Load Now and Allow for a module denied by a vendor file, Allow last" do
      expect(enabled("hfs")).to eq([:grant_time, :load, :allow])
      expect(presenter.lift_actions("hfs").map(&:id)).to eq([:open, :grant_device, :grant_time, :load, :allow])
      # No drive of hfs was blocked (the journal has no such block): neither for this drive
      # nor Open Safely.
      expect(reason("hfs", :grant_device)).to eq("No drive with a hfs filesystem was blocked that is still plugged in.")
      expect(reason("hfs", :open)).to eq("No drive with a hfs filesystem was blocked that is still plugged in.")
      expect(reason("hfs", :end_grant)).to eq("hfs is not loaded for a while.")
      expect(reason("hfs", :deny)).to eq("hfs is denied already.")
      expect(reason("hfs", :reset)).to eq("fsgate has no setting for hfs to reset.")
    end

    it "offers Deny for a module nothing decides" do
      expect(enabled("minix")).to eq([:load, :deny])
      expect(reason("minix", :grant_time)).to eq("minix may be loaded automatically already.")
    end

    it "offers Deny and Reset once fsgate allowed it" do
      client.allow("hfs")
      presenter.refresh
      expect(enabled("hfs")).to eq([:load, :deny, :reset])
    end

    it "offers no Load Now for a loaded module or one missing from this kernel" do
      TestEnv.load(root, "hfs")
      presenter.refresh
      expect(reason("hfs", :load)).to eq("hfs is loaded already.")
      expect(reason("cramfs", :load)).to eq("There is no module file of cramfs for this kernel.")
    end

    it "offers no Allow when the kernel command line denies it" do
      TestEnv.cmdline(root, "BOOT_IMAGE=/vmlinuz modprobe.blacklist=minix\n")
      presenter.refresh
      expect(presenter.find("minix")).to have_attributes(state: "denied", origin: "cmdline")
      expect(enabled("minix")).to eq([:grant_time, :load])
      expect(reason("minix", :allow)).to include("modprobe.blacklist= on the kernel command line")
    end

    it "disables everything without a selection" do
      expect(presenter.actions(nil).map(&:enabled?)).to eq([false] * 8)
    end
  end

  # On this host no module loads (fsgated over an image never loads into the running kernel):
  # the grant fails, and nothing stays granted or written.
  describe "Load for a While" do
    it "asks the service for a grant of an hour, which fails to load here: the error, nothing granted" do
      expect(client).to receive(:grant).with("hfs", seconds: 3600).and_call_original
      result = presenter.execute("hfs", :grant_time)
      expect(result.error).to be_a(Y2Fsgate::LoadFailedError)
      expect(result.message).to include("never loads a module into the running kernel")
      expect(client.active_grants).to eq([])
      expect(presenter.grants_of("hfs")).to eq([])
      expect(presenter.find("hfs")).to have_attributes(state: "denied", origin: "vendor")
      expect(TestEnv.file(root, hfs_admin)).to be_nil
    end
  end

  # A grant as the service lists it (Grants), on a stand-in client: fsgated over an image
  # makes none that lasts (its load fails).
  describe "End Grant" do
    let(:ends) { Time.utc(2030, 1, 2, 3, 4, 5) }
    let(:grant) do
      { "id" => "0" * 32, "module" => "hfs", "uid" => 0, "since" => ends - 3600, "until" => ends, "device" => nil }
    end

    before { allow(client).to receive(:active_grants).and_return([grant]) }

    it "shows the grant's end and offers End Grant, which is a Deny without flags" do
      expect(presenter.details("hfs")).to include(
        "Loaded for a while: until #{ends.localtime.strftime("%Y-%m-%d %H:%M %Z")}; End Grant ends it now.")
      expect(enabled("hfs")).to include(:end_grant)
      expect(client).to receive(:deny).with("hfs", 0).and_call_original
      allow(client).to receive(:active_grants).and_return([])
      result = presenter.execute("hfs", :end_grant)
      expect(result).to be_ok
      expect(result.message).to eq("hfs: the grant ended. hfs: denied (vendor: #{hfs_vendor}).")
      expect(TestEnv.file(root, hfs_admin)).to be_nil # the vendor file denies it: nothing written
    end

    it "says until when a grant for a drive lasts" do
      grant["device"] = "/dev/sdb1"
      expect(presenter.grant_text("hfs")).to eq("Loaded for a while: until " \
        "#{ends.localtime.strftime("%Y-%m-%d %H:%M %Z")} or until /dev/sdb1 is removed; End Grant ends it now.")
    end
  end

  describe "#request" do
    it "computes flags: RUNTIME when asked, and for resetting a runtime setting" do
      expect(presenter.request("hfs", :allow).flags).to eq(0)
      expect(presenter.request("hfs", :allow, runtime: true).flags).to eq(Y2Fsgate::Client::RUNTIME)
      client.deny("minix", Y2Fsgate::Client::RUNTIME)
      presenter.refresh
      expect(presenter.request("minix", :reset).flags).to eq(Y2Fsgate::Client::RUNTIME)
    end

    it "refuses an action the row does not allow" do
      expect { presenter.request("hfs", :deny) }.to raise_error(ArgumentError, /denied already/)
    end
  end

  describe "denying a mounted filesystem" do
    before do
      TestEnv.mount(root, "minix")
      presenter.refresh
    end

    it "asks first, with a text that says what the next boot would do" do
      text = presenter.request("minix", :deny).confirmation
      expect(text).to eq(
        "minix is mounted now.\n\n" \
        "After the deny the kernel no longer loads minix on its own: at the next boot the minix " \
        "filesystems this system mounts now (see /etc/fstab) cannot be mounted, and whatever needs " \
        "them fails to start.\n\n" \
        "Deny minix anyway?"
      )
    end

    it "changes nothing when the user says no" do
      asked = []
      result = presenter.execute("minix", :deny) { |q| asked << q; false }
      expect(asked.size).to eq(1)
      expect(result.cancelled).to be(true)
      expect(result).not_to be_ok
      expect(TestEnv.file(root, TestEnv.conf(TestEnv::ADMIN, "minix"))).to be_nil
    end

    it "denies with FORCE when the user says yes" do
      result = presenter.execute("minix", :deny) { true }
      expect(result).to be_ok
      expect(result.request.flags).to eq(Y2Fsgate::Client::FORCE)
      expect(result.message).to eq("minix: denied (admin: /etc/modprobe.d/60-blacklist_fs-minix.conf).")
      expect(presenter.find("minix")).to have_attributes(state: "denied", mounted: true)
    end

    it "words the question for a deny until reboot" do
      text = presenter.request("minix", :deny, runtime: true).confirmation
      expect(text).to include("minix is mounted now.", "until the next boot", "Deny minix anyway?")
    end
  end

  it "asks for a module that is only loaded, too" do
    TestEnv.load(root, "minix")
    presenter.refresh
    expect(presenter.request("minix", :deny).confirmation)
      .to start_with("minix is loaded now: a minix filesystem was used since the system started.")
  end

  it "asks when the filesystem was mounted after the list was read (the service says InUse)" do
    expect(presenter.request("minix", :deny).confirmation).to be_nil
    TestEnv.mount(root, "minix")
    asked = []
    result = presenter.execute("minix", :deny) { |q| asked << q; true }
    expect(asked).to eq([presenter.confirmation_text(presenter.find("minix"))])
    expect(asked.first).to start_with("minix is mounted now.")
    expect(result).to be_ok
    expect(presenter.find("minix").state).to eq("denied")
  end

  describe "#execute" do
    it "allows, then resets, reading the list again after each" do
      result = presenter.execute("hfs", :allow)
      expect(result).to be_ok
      expect(result.message).to eq("hfs: allowed (admin: #{hfs_admin}).")
      expect(presenter.table_items.find { |i| i.first == "hfs" }.values_at(2, 4))
        .to eq(["allowed", "admin: #{File.basename(hfs_admin)}"])
      expect(presenter.execute("hfs", :reset)).to be_ok
      expect(presenter.find("hfs")).to have_attributes(state: "denied", origin: "vendor")
    end

    it "denies until reboot" do
      expect(presenter.execute("minix", :deny, runtime: true)).to be_ok
      expect(presenter.find("minix").origin).to eq("runtime")
      expect(presenter.execute("minix", :reset)).to be_ok
      expect(presenter.find("minix").origin).to eq("default")
    end

    it "returns the service's error with a hint and the error name" do
      # An install command counts as denied; the file is not fsgate's, which only the
      # service can tell: the action is offered and the service refuses it.
      expect(enabled("ufs")).to include(:allow)
      result = presenter.execute("ufs", :allow)
      expect(result).not_to be_ok
      expect(result.error).to be_a(Y2Fsgate::ForeignConfigError)
      expect(result.message).to eq(
        "fsgate does not change configuration it did not write.\n\n" \
        "/etc/modprobe.d/60-blacklist_fs-ufs.conf was not written by fsgate and fsgate will not change it; " \
        "edit it by hand, or remove it and try again"
      )
    end
  end

  describe "#status_text and #details" do
    it "names the kernel and counts denied modules" do
      expect(presenter.status_text)
        .to match(/\AKernel #{Regexp.escape(TestEnv::KVER)}: \d+ of \d+ filesystem modules may not be loaded automatically\.\z/)
    end

    it "describes the selected row, what the kernel source says of it and why actions are disabled" do
      expect(presenter.details("hfs")).to eq([
        "hfs (types: hfs): denied; decided by vendor: #{hfs_vendor}.",
        RiskFacts.panel_line("hfs"),
        "Open Safely: No drive with a hfs filesystem was blocked that is still plugged in.",
        "Load for This Drive: No drive with a hfs filesystem was blocked that is still plugged in.",
        "Deny: hfs is denied already.",
        "Reset: fsgate has no setting for hfs to reset.",
        "End Grant: hfs is not loaded for a while.",
        presenter.status_text
      ])
      expect(presenter.details(nil)).to eq([presenter.status_text])
    end
  end

  describe "#risk_text" do
    it "says what the kernel source says of the module, as data/risk has it" do
      hfs = RiskFacts.of("hfs")
      expect(presenter.risk_text("hfs")).to eq(
        "Apple Macintosh file system support · Kernel code: #{hfs["risk_maintainers"]} " \
        "(#{hfs["risk_maintainers_section"]}) · Users can mount it in a user namespace: no · " \
        "Upstream: #{hfs["risk_upstream"]} · Facts from Linux #{hfs["risk_facts_source"]}"
      )
      %w[hfs minix fuse reiserfs ext4 ufs].each { |m| expect(presenter.risk_text(m)).to eq(RiskFacts.panel_line(m)) }
      expect(presenter.risk_text("minix")).to include("Kernel code: no maintainer of its own in MAINTAINERS")
      expect(presenter.risk_text("fuse")).to include("Users can mount it in a user namespace: yes")
      expect(presenter.risk_text("reiserfs")).to include("Deprecated: Reiserfs support (deprecated)")
    end

    it "says nothing of a module the kernel source did not have" do
      without = presenter.filesystems.map(&:module_name).reject { |m| RiskFacts.all.key?(m) }
      expect(without).not_to be_empty
      without.each do |m|
        expect(presenter.risk_text(m)).to be_nil
        expect(presenter.details(m).size).to eq(presenter.details(m).uniq.size)
        expect(presenter.details(m)[1]).not_to include("Kernel code")
      end
    end

    it "reads the facts once" do
      expect(client).to receive(:risks).once.and_call_original
      presenter.details("hfs")
      presenter.details("minix")
      presenter.refresh
      expect(presenter.risk_text("hfs")).to eq(RiskFacts.panel_line("hfs"))
    end
  end

  context "offline, on an installation target" do
    let(:client) { Y2Fsgate::Client.new(target: TestEnv::OFFLINE_ROOT, fsgatectl: TestEnv::FSGATECTL) }

    before { TestEnv.restore(TestEnv::OFFLINE_ROOT) }

    it "says where changes go and offers neither Load Now nor until-reboot changes" do
      expect(presenter.status_text).to start_with("Changes are written to the system at #{TestEnv::OFFLINE_ROOT}")
      expect(presenter.runtime_available?).to be(false)
      expect(enabled("hfs")).to eq([:allow])
      expect(reason("hfs", :load)).to eq("Loading needs the running fsgate service.")
      expect { presenter.request("hfs", :allow, runtime: true) }.to raise_error(ArgumentError)
    end

    it "shows the risk facts fsgatectl reads" do
      expect(presenter.details("hfs")[1]).to eq(RiskFacts.panel_line("hfs"))
    end

    # The running system read as a target (fsgatectl --root=/ reads its /run): a grant of this
    # boot's, as fsgated records it.
    it "says until when a module is loaded for a while" do
      boot = File.read("/proc/sys/kernel/random/boot_id").strip.delete("-")
      now = (Time.now.to_f * 1_000_000).to_i
      dir = TestEnv::OFFLINE_ROOT + "/run/fsgate/grants"
      FileUtils.mkdir_p(dir)
      File.write(File.join(dir, "0123456789abcdef0123456789abcdef"),
        "module=hfs\nuid=0\nsince=#{now}\nuntil=#{now + 600_000_000}\nboot=#{boot}\n")
      ends = Time.at((now + 600_000_000) / 1_000_000).utc.strftime("%Y-%m-%dT%H:%M:%SZ")
      expect(presenter.details("hfs")).to include(
        "Loaded for a while: until #{ends}; \"fsgatectl deny hfs\" ends it now.")
      expect(presenter.details("minix").grep(/Loaded for a while/)).to be_empty
    ensure
      FileUtils.rm_rf(TestEnv::OFFLINE_ROOT + "/run/fsgate")
    end

    it "performs actions through fsgatectl" do
      expect(presenter.execute("hfs", :allow)).to be_ok
      expect(TestEnv.file(TestEnv::OFFLINE_ROOT, hfs_admin)).to eq("-> /dev/null")
      expect(presenter.execute("ufs", :allow).error).to be_a(Y2Fsgate::ForeignConfigError)
    end
  end

  context "with a built-in filesystem (none in Debian's kernel: a stand-in client)" do
    let(:client) do
      builtin = Y2Fsgate::Filesystem.new(module_name: "ext4", types: ["ext4"], state: "allowed",
        origin: "default", source: "", available: true, builtin: true, loaded: true, mounted: true)
      double("client", list_filesystems: [builtin], offline?: false, target: "/", kernel_release: "6.1.0", grants: {},
        active_grants: [], blocked_drives: [], routes: {}, close: nil)
    end

    it "offers nothing and says why" do
      expect(enabled("ext4")).to eq([])
      expect(reason("ext4", :deny)).to eq("ext4 is built into the kernel: it is always available and cannot be denied.")
      expect(presenter.rows.first.cells).to eq(["ext4", "built in", "mounted", "default"])
    end

    it "shows the row without risk facts when the service sends none (an older fsgated)" do
      allow(client).to receive(:risks)
        .and_raise(Y2Fsgate::Error.new("org.freedesktop.DBus.Error.UnknownMethod", "No such method 'DescribeAll'"))
      expect(presenter.risk_text("ext4")).to be_nil
      expect(presenter.details("ext4")).to eq(["ext4 (types: ext4): built in; decided by default."] +
        presenter.actions("ext4").map { |a| "#{a.label.delete("&")}: #{a.reason}" } + [presenter.status_text])
    end
  end
end
