# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Y2Fsgate::Client's offline mode: `fsgatectl --root=TARGET --json` on a scratch root,
# with no bus at all, with a bus on which no fsgated runs, and for an installation target.

require_relative "test_helper"

RSpec.describe Y2Fsgate::Client, "offline" do
  let(:root) { TestEnv::OFFLINE_ROOT }
  let(:hfs_admin) { TestEnv.conf(TestEnv::ADMIN, "hfs") }

  before { TestEnv.restore(root) }

  # fsgatectl as YaST would run it for the running system (--root=/), redirected to the
  # scratch root: never let a test read or write the host's /etc. Records its arguments.
  let(:recorder) do
    path = File.join(TestEnv::WORK, "fsgatectl-recorder")
    File.write(path, <<~SH)
      #!/bin/sh
      printf '%s\\n' "$@" >> #{TestEnv::WORK}/fsgatectl-args
      [ "$1" = --root=/ ] || exit 99
      shift
      exec #{TestEnv::FSGATECTL} --root=#{root} "$@"
    SH
    File.chmod(0o755, path)
    File.write("#{TestEnv::WORK}/fsgatectl-args", "")
    path
  end
  let(:recorded) { File.read("#{TestEnv::WORK}/fsgatectl-args").lines.map(&:chomp) }

  context "with target \"/\" and no bus at all (no socket)" do
    subject(:client) { described_class.new(bus_address: TestEnv::NO_BUS, fsgatectl: recorder) }

    it "falls back to fsgatectl --root=/ --json and says why" do
      expect(client.mode).to eq(:offline)
      expect(client.fallback_reason).to include("cannot connect to the system bus at #{TestEnv::NO_BUS}")
      hfs = client.get_filesystem("hfs")
      expect(hfs).to have_attributes(state: "denied", origin: "vendor")
      expect(recorded).to eq(["--root=/", "--json", "--", "status", "hfs"])
    end

    it "changes the files through fsgatectl" do
      expect(client.allow("hfs")).to be_nil
      expect(recorded.first(5)).to eq(["--root=/", "--json", "--", "allow", "hfs"])
      expect(TestEnv.file(root, hfs_admin)).to eq("-> /dev/null")
    end
  end

  context "with target \"/\" and a bus on which fsgated does not run" do
    subject(:client) { described_class.new(bus_address: TestEnv::EMPTY_BUS, fsgatectl: recorder) }

    it "falls back on ServiceUnknown" do
      expect(client.list_filesystems.map(&:module_name)).to include("hfs", "freevxfs", "ext4")
      expect(client.mode).to eq(:offline)
      expect(client.fallback_reason).to start_with("org.freedesktop.DBus.Error.ServiceUnknown")
      expect(recorded.first(4)).to eq(["--root=/", "--json", "--", "list"])
    end
  end

  context "with an installation target" do
    # The bus is up and fsgated runs on it, but it manages the running system, not TARGET.
    subject(:client) { described_class.new(target: root, fsgatectl: TestEnv::FSGATECTL) }

    it "works offline without asking the bus" do
      expect(client.mode).to eq(:offline)
      expect(client.fallback_reason).to be_nil
      expect(client.kernel_release).to be_nil
      expect(client.version).to match(/\A\d/)
    end

    it "refuses mode :bus" do
      expect { described_class.new(target: root, mode: :bus) }.to raise_error(ArgumentError)
    end

    it "lists and gets like the service" do
      expect_fixture_list(client.list_filesystems)
      expect(client.get_filesystem("vxfs").module_name).to eq("freevxfs")
    end

    it "reads the risk facts from fsgatectl --json list, as the service sends them" do
      expect_risks(client.risks, client.list_filesystems)
    end

    it "allows, denies and resets in TARGET's files, not the service's root" do
      client.allow("hfs")
      expect(TestEnv.file(root, hfs_admin)).to eq("-> /dev/null")
      expect(TestEnv.file(TestEnv::ROOT, hfs_admin)).to be_nil
      expect(client.get_filesystem("hfs")).to have_attributes(state: "allowed", origin: "admin")
      client.reset("hfs")
      expect(client.get_filesystem("hfs")).to have_attributes(state: "denied", origin: "vendor")
      client.deny("minix", Y2Fsgate::Client::RUNTIME)
      expect(TestEnv.file(root, TestEnv.conf(TestEnv::RUNTIME, "minix"))).to match(/^blacklist minix$/)
      client.reset("minix", Y2Fsgate::Client::RUNTIME)
      expect(client.get_filesystem("minix").state).to eq("allowed")
    end

    it "exempts mounted modules, not ones only loaded" do
      TestEnv.load(root, "hfs")
      expect(client.exempt_loaded).to eq([])
      TestEnv.mount(root, "hfs")
      expect(client.exempt_loaded).to eq(["hfs"])
    end

    describe "errors, named from fsgatectl's exit status and message" do
      it "ForeignConfig" do
        e = expect_error(Y2Fsgate::ForeignConfigError, "org.fsgate.fsgate1.Error.ForeignConfig") { client.deny("ufs") }
        expect(e.message).to start_with("/etc/modprobe.d/60-blacklist_fs-ufs.conf was not written by fsgate")
      end

      it "InvalidName" do
        expect_error(Y2Fsgate::InvalidNameError, "org.fsgate.fsgate1.Error.InvalidName") { client.allow("a/b") }
      end

      it "InvalidName for a name that looks like an option (it stays a name)" do
        expect { client.allow("--root=/") }.to raise_error(Y2Fsgate::InvalidNameError)
        expect { client.allow("-h") }.to raise_error(Y2Fsgate::NoSuchFilesystemError, /named -h /)
      end

      it "NoSuchFilesystem" do
        e = expect_error(Y2Fsgate::NoSuchFilesystemError, "org.fsgate.fsgate1.Error.NoSuchFilesystem") do
          client.get_filesystem("nosuchfs")
        end
        expect(e.message).to include("nosuchfs")
      end

      it "InUse" do
        TestEnv.mount(root, "minix")
        expect_error(Y2Fsgate::InUseError, "org.fsgate.fsgate1.Error.InUse") { client.deny("minix") }
        client.deny("minix", Y2Fsgate::Client::FORCE)
        expect(client.get_filesystem("minix").state).to eq("denied")
      end

      it "InvalidArgs for loading, which needs the running system" do
        expect { client.load("hfs") }.to raise_error(Y2Fsgate::InvalidArgsError, /needs the running system/)
        expect { client.allow("hfs", Y2Fsgate::Client::LOAD_NOW) }
          .to raise_error(Y2Fsgate::InvalidArgsError, /needs the running system/)
      end

      it "flags are checked before fsgatectl runs" do
        expect { client.allow("hfs", -(2**64 - 1)) }.to raise_error(Y2Fsgate::InvalidArgsError)
        expect(TestEnv.file(root, TestEnv.conf(TestEnv::RUNTIME, "hfs"))).to be_nil
      end

      it "a NUL byte never reaches fsgatectl" do
        expect { client.get_filesystem("hf\0s") }.to raise_error(Y2Fsgate::InvalidNameError)
      end
    end

    it "raises ServiceUnavailableError when fsgatectl is not installed either" do
      none = described_class.new(target: root, fsgatectl: "#{TestEnv::WORK}/no-fsgatectl")
      expect { none.list_filesystems }.to raise_error(Y2Fsgate::ServiceUnavailableError, /is fsgate installed/)
    end
  end
end
