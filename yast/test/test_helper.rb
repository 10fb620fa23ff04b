# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Shared by the tests. They run against the real fsgated that test/run-tests.sh starts
# on a private bus; the environment variables below come from there.

require "fileutils"

$LOAD_PATH.unshift(File.expand_path("../src/lib", __dir__))

require "y2fsgate/client"
require "y2fsgate/filesystems_presenter"
require_relative "support/client_expectations"
require_relative "support/risk_facts"

# The fixtures: scratch roots and what is written into them.
module TestEnv
  VARS = %w[FSGATE_TEST_ROOT FSGATE_TEST_OFFLINE_ROOT FSGATE_TEST_KVER FSGATE_TEST_DAEMON_PID
            FSGATE_TEST_EMPTY_BUS FSGATE_TEST_WORK FSGATE_FSGATECTL DBUS_SYSTEM_BUS_ADDRESS].freeze
  missing = VARS.reject { |v| ENV[v] }
  abort "#{missing.join(", ")} not set: run the tests with test/run-tests.sh BUILD_DIR" unless missing.empty?

  ROOT         = ENV["FSGATE_TEST_ROOT"]          # fsgated --root
  OFFLINE_ROOT = ENV["FSGATE_TEST_OFFLINE_ROOT"]  # fsgatectl --root, no service
  KVER         = ENV["FSGATE_TEST_KVER"]
  DAEMON_PID   = Integer(ENV["FSGATE_TEST_DAEMON_PID"])
  EMPTY_BUS    = ENV["FSGATE_TEST_EMPTY_BUS"]     # a bus on which nobody owns the name
  WORK         = ENV["FSGATE_TEST_WORK"]
  FSGATECTL    = ENV["FSGATE_FSGATECTL"]
  NO_BUS       = "unix:path=#{ENV["FSGATE_TEST_WORK"]}/no-such-bus.sock".freeze

  PREFIX = "60-blacklist_fs-".freeze
  VENDOR = "/usr/lib/modprobe.d".freeze
  ADMIN = "/etc/modprobe.d".freeze
  RUNTIME = "/run/modprobe.d".freeze
  DEFAULT_MOUNTS = "/dev/vda / ext4 rw,relatime 0 0\n".freeze
  DEFAULT_CMDLINE = "BOOT_IMAGE=/vmlinuz root=/dev/vda quiet\n".freeze

  module_function

  # Every path the tests write lies under run-tests.sh's temporary directory.
  def safe(root)
    real = File.realpath(root)
    unless real.start_with?(File.realpath(WORK) + "/")
      raise "refusing to touch #{root}: not under the test directory #{WORK}"
    end

    root
  end

  def conf(dir, mod)
    "#{dir}/#{PREFIX}#{mod}.conf"
  end

  # The state every example starts from:
  # - openSUSE-style vendor files: hfs (in this kernel) and cramfs (not built in Debian's);
  # - a foreign admin file for ufs (an install command: not fsgate's, not openSUSE's);
  # - nothing else in /etc or /run; nothing loaded; only / mounted.
  def restore(root)
    safe(root)
    File.write(root + conf(VENDOR, "hfs"), "blacklist hfs\n")
    File.write(root + conf(VENDOR, "cramfs"), "blacklist cramfs\n")
    [ADMIN, RUNTIME].each do |dir|
      Dir.children(root + dir).each { |f| FileUtils.rm_rf(File.join(root + dir, f)) }
    end
    File.write(root + conf(ADMIN, "ufs"), "install ufs /bin/true\n")
    File.write(root + "/proc/mounts", DEFAULT_MOUNTS)
    File.write(root + "/proc/modules", "")
    File.write(root + "/proc/cmdline", DEFAULT_CMDLINE)
  end

  def mount(root, type)
    safe(root)
    File.open(root + "/proc/mounts", "a") { |f| f.puts("/dev/vdb /mnt/#{type} #{type} rw 0 0") }
  end

  def load(root, mod)
    safe(root)
    File.open(root + "/proc/modules", "a") { |f| f.puts("#{mod} 40960 0 - Live 0x0000000000000000") }
  end

  # /proc/cmdline is read when the state is built (it cannot change on a real system):
  # touch a modprobe.d directory so that fsgated builds it again.
  def cmdline(root, text)
    safe(root)
    File.write(root + "/proc/cmdline", text)
    poke = root + "#{ADMIN}/.poke"
    File.write(poke, "")
    File.unlink(poke)
  end

  # @return [String, nil] the file or symlink target at root + path
  def file(root, path)
    full = root + path
    return "-> #{File.readlink(full)}" if File.symlink?(full)

    File.exist?(full) ? File.read(full) : nil
  end
end

RSpec.configure do |config|
  config.expect_with(:rspec) { |c| c.syntax = :expect }
  config.disable_monkey_patching!
  config.order = :defined
end
