# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Y2Fsgate::Client against the real fsgated on the private bus (as root: no polkit).

require_relative "test_helper"

RSpec.describe Y2Fsgate::Client do
  subject(:client) { described_class.new(fsgatectl: TestEnv::FSGATECTL) }

  let(:root) { TestEnv::ROOT }
  let(:hfs_admin) { TestEnv.conf(TestEnv::ADMIN, "hfs") }

  before { TestEnv.restore(root) }
  after { client.close }

  it "talks to the service named by DBUS_SYSTEM_BUS_ADDRESS (not the default system bus)" do
    expect(client.mode).to eq(:bus)
    expect(client.offline?).to be(false)
    expect(client.fallback_reason).to be_nil
  end

  it "reads the Version and KernelRelease properties" do
    expect(client.kernel_release).to eq(TestEnv::KVER)
    expect(client.version).to match(/\A\d+(\.\d+)*/)
  end

  describe "#list_filesystems" do
    it "returns every filesystem module as a Filesystem" do
      list = client.list_filesystems
      expect_fixture_list(list)
      expect(list).to all(be_a(Y2Fsgate::Filesystem))
      expect(list.find { |f| f.module_name == "ext4" }.types).to include("ext2", "ext3", "ext4")
      expect(list.find { |f| f.module_name == "ext4" }).to be_mounted
    end

    it "includes modules that only a rule names (cramfs is not built in this kernel)" do
      cramfs = client.list_filesystems.find { |f| f.module_name == "cramfs" }
      expect(cramfs).to have_attributes(state: "denied", origin: "vendor", available: false)
    end
  end

  describe "#risks" do
    it "reads what the kernel source says of each module from DescribeAll, as data/risk has it" do
      expect_risks(client.risks, client.list_filesystems)
      expect(client.describe_all["hfs"]).to include("module" => "hfs", "state" => "denied", "hard" => false)
    end
  end

  describe "#get_filesystem" do
    it "accepts a filesystem type for its module" do
      expect(client.get_filesystem("vxfs")).to have_attributes(
        module_name: "freevxfs", types: ["vxfs"], state: "allowed", origin: "default", source: ""
      )
    end
  end

  describe "#allow" do
    it "masks the vendor file and returns nil" do
      expect(client.allow("hfs")).to be_nil
      expect(client.get_filesystem("hfs")).to have_attributes(state: "allowed", origin: "admin", source: hfs_admin)
      expect(TestEnv.file(root, hfs_admin)).to eq("-> /dev/null")
    end

    it "with RUNTIME writes to /run only" do
      client.allow("hfs", Y2Fsgate::Client::RUNTIME)
      expect(client.get_filesystem("hfs")).to have_attributes(state: "allowed", origin: "runtime")
      expect(TestEnv.file(root, TestEnv.conf(TestEnv::RUNTIME, "hfs"))).to eq("-> /dev/null")
      expect(TestEnv.file(root, hfs_admin)).to be_nil
    end
  end

  describe "#deny" do
    it "writes fsgate's deny file" do
      expect(client.deny("minix")).to be_nil
      expect(client.get_filesystem("minix")).to have_attributes(state: "denied", origin: "admin")
      expect(TestEnv.file(root, TestEnv.conf(TestEnv::ADMIN, "minix"))).to match(/^blacklist minix$/)
    end

    it "refuses a mounted filesystem (InUseError) unless FORCE is given" do
      TestEnv.mount(root, "minix")
      e = expect_error(Y2Fsgate::InUseError, "org.fsgate.fsgate1.Error.InUse") { client.deny("minix") }
      expect(e.message).to include("minix is mounted now")
      expect(TestEnv.file(root, TestEnv.conf(TestEnv::ADMIN, "minix"))).to be_nil
      client.deny("minix", Y2Fsgate::Client::FORCE)
      expect(client.get_filesystem("minix")).to have_attributes(state: "denied", mounted: true)
    end
  end

  describe "#reset" do
    it "goes back to the vendor default" do
      client.allow("hfs")
      expect(client.reset("hfs")).to be_nil
      expect(client.get_filesystem("hfs")).to have_attributes(state: "denied", origin: "vendor")
      expect(TestEnv.file(root, hfs_admin)).to be_nil
    end

    it "with RUNTIME drops the runtime override" do
      client.deny("minix", Y2Fsgate::Client::RUNTIME)
      expect(client.get_filesystem("minix")).to have_attributes(state: "denied", origin: "runtime")
      client.reset("minix", Y2Fsgate::Client::RUNTIME)
      expect(client.get_filesystem("minix")).to have_attributes(state: "allowed", origin: "default")
    end
  end

  describe "#exempt_loaded" do
    it "allows the denied modules that are mounted and returns them" do
      TestEnv.load(root, "hfs")
      expect(client.exempt_loaded).to eq([])
      expect(client.get_filesystem("hfs")).to have_attributes(state: "denied", origin: "vendor")
      TestEnv.mount(root, "hfs")
      expect(client.exempt_loaded).to eq(["hfs"])
      expect(client.get_filesystem("hfs")).to have_attributes(state: "allowed", origin: "admin")
    end
  end

  describe "#load" do
    it "reports LoadFailed as LoadFailedError: fsgated over an image never loads into the running kernel" do
      expect { client.load("hfs") }.to raise_error(Y2Fsgate::LoadFailedError, /never loads a module into the running kernel/)
    end
  end

  describe "#grant, #active_grants and #end_grants" do
    it "sends Grant with an a{sv} scope of a t and an s; the load fails here and no grant stays" do
      expect { client.grant("hfs", seconds: 3600) }
        .to raise_error(Y2Fsgate::LoadFailedError, /never loads a module into the running kernel/)
      expect { client.grant("hfs", device: "/dev/null") }.to raise_error(Y2Fsgate::InvalidArgsError)
      expect(client.active_grants).to eq([])
      expect { client.grant("hfs") }.to raise_error(ArgumentError)
    end

    it "ends grants with a Deny that writes nothing where the files deny already" do
      client.end_grants("hfs")
      expect(TestEnv.file(root, TestEnv.conf(TestEnv::ADMIN, "hfs"))).to be_nil
    end
  end

  describe "errors from the service" do
    it "raises ForeignConfigError naming the file it will not touch" do
      ufs = TestEnv.conf(TestEnv::ADMIN, "ufs")
      e = expect_error(Y2Fsgate::ForeignConfigError, "org.fsgate.fsgate1.Error.ForeignConfig") { client.deny("ufs") }
      expect(e.short_name).to eq("ForeignConfig")
      expect(e.message).to start_with("#{ufs} was not written by fsgate")
      expect(e.message).not_to include("caused by") # ruby-dbus's decoration is dropped
      expect { client.allow("ufs") }.to raise_error(Y2Fsgate::ConflictError)
      expect(TestEnv.file(root, ufs)).to eq("install ufs /bin/true\n")
    end

    it "raises InvalidNameError with the service's explanation" do
      e = expect_error(Y2Fsgate::InvalidNameError, "org.fsgate.fsgate1.Error.InvalidName") { client.allow("a/b") }
      expect(e.message).to start_with("Not a valid module or filesystem type name (1-55 characters")
    end

    it "raises NoSuchFilesystemError for an unknown name" do
      expect_error(Y2Fsgate::NoSuchFilesystemError, "org.fsgate.fsgate1.Error.NoSuchFilesystem") do
        client.get_filesystem("nosuchfs")
      end
    end

    it "raises NotAFilesystemError for a module that is not a filesystem" do
      usb = Dir.glob("#{root}/usr/lib/modules/*/kernel/drivers/usb/storage/usb-storage.ko*")
      skip "the scratch root holds filesystem modules only (copy mode)" if usb.empty?
      expect { client.get_filesystem("usb_storage") }.to raise_error(Y2Fsgate::NotAFilesystemError)
    end
  end

  describe "checks before sending" do
    # ruby-dbus 0.16 packs `t` with pack("Q"): -(2**64 - 1) goes out as 1 (RUNTIME) and
    # 2**64 as 0, both valid: without the check these would allow hfs.
    [-(2**64 - 1), -1, 2**64, 2**64 + 1, 1.0, "1", nil].each do |flags|
      it "rejects flags #{flags.inspect} and sends nothing" do
        expect_error(Y2Fsgate::InvalidArgsError, "org.freedesktop.DBus.Error.InvalidArgs") { client.allow("hfs", flags) }
        expect(client.get_filesystem("hfs")).to have_attributes(state: "denied", origin: "vendor")
        expect(TestEnv.file(root, TestEnv.conf(TestEnv::RUNTIME, "hfs"))).to be_nil
      end
    end

    it "rejects flag bits the method does not know" do
      expect { client.deny("minix", Y2Fsgate::Client::LOAD_NOW) }
        .to raise_error(Y2Fsgate::InvalidArgsError, /Unknown flags 0x2 for Deny; valid: RUNTIME \(0x1\), FORCE \(0x4\)/)
      expect { client.reset("hfs", Y2Fsgate::Client::FORCE) }.to raise_error(Y2Fsgate::InvalidArgsError)
      expect(client.get_filesystem("minix").state).to eq("allowed")
    end

    # dbus-daemon drops a connection that sends such a string.
    ["hf\0s", "hf\xffs".b, :hfs, nil].each do |name|
      it "rejects the name #{name.inspect} and keeps the connection" do
        expect { client.allow(name) }.to raise_error(Y2Fsgate::InvalidNameError)
        expect(client.get_filesystem("hfs").state).to eq("denied")
      end
    end
  end

  describe "connection trouble" do
    it "raises NoReplyError when the service does not answer in time, then works again" do
      slow = described_class.new(timeout: 1)
      expect(slow.mode).to eq(:bus)
      Process.kill("STOP", TestEnv::DAEMON_PID)
      begin
        started = Time.now
        expect_error(Y2Fsgate::NoReplyError, "org.freedesktop.DBus.Error.NoReply") { slow.get_filesystem("hfs") }
        expect(Time.now - started).to be < 5
      ensure
        Process.kill("CONT", TestEnv::DAEMON_PID)
      end
      expect(slow.get_filesystem("hfs").state).to eq("denied")
      slow.close
    end

    it "reconnects after the connection was closed" do
      expect(client.get_filesystem("hfs").state).to eq("denied")
      client.close
      expect(client.get_filesystem("hfs").state).to eq("denied")
    end

    it "with mode :bus raises ServiceUnavailableError instead of falling back" do
      strict = described_class.new(mode: :bus, bus_address: TestEnv::EMPTY_BUS)
      expect { strict.list_filesystems }.to raise_error(Y2Fsgate::ServiceUnavailableError) { |e|
        expect(e.message).to include("ServiceUnknown")
      }
    end
  end
end
