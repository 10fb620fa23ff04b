# SPDX-License-Identifier: LGPL-2.1-or-later

require "dbus"
require "timeout"
require "y2fsgate/errors"
require "y2fsgate/filesystem"
require "y2fsgate/fsgatectl"
require "y2fsgate/risk"

module Y2Fsgate
  # The client of fsgated (org.fsgate.fsgate1), with methods mirroring the service.
  #
  # It talks D-Bus to the service; when the service cannot be reached (the installer, a
  # chroot, a system without a bus) it falls back to `fsgatectl --root=TARGET --json`,
  # which runs the same core code on the files under TARGET: YaST's offline mode.
  #
  # Failures are {Y2Fsgate::Error}s carrying the D-Bus error name and the service's message.
  #
  # ruby-dbus 0.16 pitfalls handled here:
  # - DBus::SystemBus.instance ignores DBUS_SYSTEM_BUS_ADDRESS: the address is resolved
  #   here and DBus::RemoteBus connects to it.
  # - Proxy methods return the single reply value (or an array, depending on the API
  #   option): calls are built as messages here and always return the reply's params.
  # - A negative (or >= 2**64) Integer for a `t` argument is silently wrapped: -(2**64-1)
  #   becomes RUNTIME, 2**64 becomes 0. Flags are validated before sending.
  # - A string with a NUL byte or invalid UTF-8 makes an invalid message: dbus-daemon
  #   drops the whole connection. Names are checked before sending.
  # - Error messages get "; caused by <message dump>" appended: the text is taken from
  #   the error reply itself.
  # - A call has no timeout: a Timeout drops the connection and raises NoReplyError.
  class Client
    BUS_NAME    = "org.fsgate.fsgate1".freeze
    OBJECT_PATH = "/org/fsgate/fsgate1".freeze
    INTERFACE   = "org.fsgate.fsgate1.Manager".freeze
    PROPERTIES  = "org.freedesktop.DBus.Properties".freeze
    PEER        = "org.freedesktop.DBus.Peer".freeze

    # Flags of Allow, Deny and Reset.
    RUNTIME  = 0x1
    LOAD_NOW = 0x2
    FORCE    = 0x4
    VALID_FLAGS = {
      "Allow" => RUNTIME | LOAD_NOW,
      "Deny"  => RUNTIME | FORCE,
      "Reset" => RUNTIME
    }.freeze
    FLAG_NAMES = { RUNTIME => "RUNTIME", LOAD_NOW => "LOAD_NOW", FORCE => "FORCE" }.freeze
    UINT64_LIMIT = 2**64

    # Errors that mean the call never reached a service: fall back to fsgatectl.
    UNREACHABLE = [
      "#{DBUS}ServiceUnknown", "#{DBUS}NameHasNoOwner", "#{DBUS}Spawn.ChildExited",
      "#{DBUS}Spawn.ExecFailed", "#{DBUS}Spawn.Failed", "#{DBUS}Spawn.ServiceNotFound",
      "#{DBUS}Spawn.ServiceNotValid", "#{DBUS}Spawn.PermissionsInvalid"
    ].freeze

    DEFAULT_TIMEOUT = 60

    # The service could not be reached (internal: triggers the fallback).
    class Unreachable < StandardError; end

    # @return [String] the system the offline mode works on
    attr_reader :target
    # @return [String, nil] why the client works offline, when it fell back
    attr_reader :fallback_reason

    # @param target [String] the system to manage: "/" for the running one. Any other
    #   directory is always managed offline: the service manages the running system only.
    # @param mode [:auto, :bus, :offline] :auto = the service, else fsgatectl
    # @param bus_address [String, nil] default: $DBUS_SYSTEM_BUS_ADDRESS, else the
    #   standard system bus socket
    # @param fsgatectl [String] the fsgatectl binary for the offline mode
    # @param timeout [Numeric] seconds to wait for any reply
    def initialize(target: "/", mode: :auto, bus_address: nil, fsgatectl: Fsgatectl::DEFAULT_PATH,
      timeout: DEFAULT_TIMEOUT)
      unless target.to_s.start_with?("/")
        raise ArgumentError, "target must be an absolute path: #{target.inspect}"
      end
      raise ArgumentError, "unknown mode #{mode.inspect}" unless [:auto, :bus, :offline].include?(mode)

      @target = target == "/" ? "/" : target.to_s.chomp("/")
      if @target != "/"
        raise ArgumentError, "the service manages the running system only; use target \"/\"" if mode == :bus

        mode = :offline
      end
      @requested = mode
      @mode = mode == :offline ? :offline : nil
      @bus_address = bus_address
      @timeout = timeout
      @offline = Fsgatectl.new(root: @target, path: fsgatectl)
      @bus = nil
    end

    # @return [:bus, :offline] how calls are made; probes the service once (Peer.Ping,
    #   which also starts a bus-activated service).
    def mode
      if @mode.nil?
        begin
          bus_call("Ping", "", interface: PEER)
          @mode = :bus
        rescue Unreachable => e
          go_offline(e.message)
        end
      end
      @mode
    end

    def offline?
      mode == :offline
    end

    # @return [Array<Filesystem>]
    def list_filesystems
      dispatch(-> { @offline.list_filesystems }) do
        bus_call("ListFilesystems", "").first.map { |e| Filesystem.from_dbus(e) }
      end
    end

    # @param name [String] a module or a filesystem type ("vxfs" means freevxfs)
    # @return [Filesystem]
    def get_filesystem(name)
      check_name(name)
      dispatch(-> { @offline.get_filesystem(name) }) do
        Filesystem.from_dbus(bus_call("GetFilesystem", "s", name).first)
      end
    end

    # Everything the service knows of each module (Describe's keys; a client ignores the
    # ones it does not know), by module name. Offline: the objects of `fsgatectl --json list`,
    # which carry the same keys with --root.
    # @return [Hash{String => Hash}]
    def describe_all
      dispatch(-> { @offline.describe_all }) { bus_call("DescribeAll", "").first }
    end

    # What the kernel source says of each module it had (the risk facts), by module name.
    # Empty from a service that sends none.
    # @return [Hash{String => Risk}]
    def risks
      describe_all.each_with_object({}) do |(name, description), risks|
        risk = Risk.from_description(description)
        risks[name] = risk if risk
      end
    end

    # The modules loaded for a while (grants: fsgatectl allow --for or --device, the notifier's
    # Open read-only), by module name: [end as "2026-12-07T01:02:03Z", device or nil]. Read
    # anew each time: a grant ends by itself.
    # @return [Hash{String => Array}]
    def grants
      describe_all.each_with_object({}) do |(name, description), grants|
        ends = description["granted_until"]
        grants[name] = [ends.to_s, description["granted_device"]&.to_s] if ends && !ends.to_s.empty?
      end
    end

    # The active grants (the Grants property), soonest end first: one Hash each with
    # "id", "module", "uid", "since" and "until" (Time, UTC) and "device" (nil for a grant by
    # time only). Offline: none (only the service makes and ends grants).
    # @return [Array<Hash>]
    def active_grants
      dispatch(-> { [] }) do
        property("Grants").map do |id, module_name, uid, since, ends, device|
          { "id" => id, "module" => module_name, "uid" => uid, "since" => usec_time(since),
            "until" => usec_time(ends), "device" => device.to_s.empty? ? nil : device }
        end
      end
    end

    # Loads the module for a while, leaving the configuration as it is (Grant): for seconds,
    # or while the medium device is there (then at most seconds, the service's 24 hours
    # without them). Offline: InvalidArgsError.
    # @return [String] the grant's id, "" when there was nothing to grant (not denied,
    #   built in, or loaded already without a grant)
    def grant(name, seconds: nil, device: nil)
      check_name(name)
      scope = {}
      scope["seconds"] = ["t", Integer(seconds)] if seconds
      scope["device"] = ["s", device.to_s] if device
      raise ArgumentError, "a grant needs seconds or a device" if scope.empty?

      dispatch(-> { raise offline_only("Grant") }) do
        bus_call("Grant", "sa{sv}t", name, scope, 0).first
      end
    end

    # Ends the module's grants. The bus has no method that ends one grant (the
    # Manager interface has Grant but no Revoke): as Cockpit's "End now" does, this is a
    # Deny with no flags, which ends every grant of the module (GrantEnded, reason
    # "denied") and writes nothing where the files deny it already (where they do not, it
    # would write fsgate's deny: the module is offered this only while denied).
    def end_grants(name)
      deny(name, 0)
    end

    # Makes autoload possible. flags: RUNTIME, LOAD_NOW.
    def allow(name, flags = 0)
      change("Allow", name, flags)
    end

    # Blocks autoload. flags: RUNTIME, FORCE (even if loaded or mounted now).
    def deny(name, flags = 0)
      change("Deny", name, flags)
    end

    # Drops fsgate's admin (with RUNTIME: runtime) override. flags: RUNTIME.
    def reset(name, flags = 0)
      change("Reset", name, flags)
    end

    # Loads the module now, changing no configuration. Offline: InvalidArgsError.
    def load(name)
      check_name(name)
      dispatch(-> { @offline.load(name) }) do
        bus_call("Load", "s", name)
        nil
      end
    end

    # @return [Array<String>] the denied modules now allowed because they are in use
    def exempt_loaded
      dispatch(-> { @offline.exempt_loaded }) { bus_call("ExemptLoaded", "").first }
    end

    # @return [String] the service's version (offline: fsgatectl's)
    def version
      dispatch(-> { @offline.version }) { property("Version") }
    end

    # @return [String, nil] the kernel release the service judges by (offline: nil)
    def kernel_release
      dispatch(-> { nil }) { property("KernelRelease") }
    end

    # Which userspace driver reads each filesystem type without its module (`fsgatectl
    # --json routes`), by type: Hashes with "driver", "package", "usable" (installed and
    # started by fsgate). Empty offline, or when fsgatectl cannot say.
    # @return [Hash{String => Hash}]
    def routes
      return {} if offline?

      @offline.routes
    rescue Error
      {}
    end

    # The drives whose filesystem was blocked and that are still there (`fsgatectl --json
    # log`: blocks of a drive plugged in, cause "device", whose device node is a block
    # device now), newest first: Hashes with "device", "type", "module", "label". Empty
    # offline, or when the journal cannot be read.
    # @return [Array<Hash>]
    def blocked_drives
      return [] if offline?

      seen = {}
      @offline.log.reverse.each_with_object([]) do |b, drives|
        device = b["device"].to_s
        next if b["would_block"] || b["cause"] != "device" || device.empty? || seen[device]

        seen[device] = true
        drives << b.slice("device", "type", "module", "label") if File.blockdev?(device)
      end
    rescue Error
      []
    end

    # Open safely: the medium's files read-only, read by a userspace driver, the module still
    # off. OpenSafely takes a file descriptor, which ruby-dbus 0.16 cannot send: `fsgatectl
    # --json open DEVICE` makes the call, as Cockpit does. Offline: InvalidArgsError.
    # @return [String] the mountpoint
    def open_safely(device)
      raise offline_only("OpenSafely") if offline?

      @offline.open(device).fetch("mountpoint", "")
    end

    # Closes the bus connection (the next call opens a new one).
    def close
      disconnect
    end

  private

    def usec_time(usec)
      Time.at(usec / 1_000_000, usec % 1_000_000, :usec).utc
    end

    def offline_only(method)
      InvalidArgsError.new("#{DBUS}InvalidArgs", "#{method} needs the running fsgate service")
    end

    def change(method, name, flags)
      check_name(name)
      check_flags(method, flags)
      dispatch(-> { @offline.change(method.downcase, name, flags) }) do
        bus_call(method, "st", name, flags)
        nil
      end
    end

    # Text D-Bus cannot carry would make dbus-daemon drop the connection.
    def check_name(name)
      ok = name.is_a?(String) && !name.include?("\0") &&
        name.dup.force_encoding(Encoding::UTF_8).valid_encoding?
      return if ok

      raise InvalidNameError.new("#{PREFIX}InvalidName",
        "Not a valid module or filesystem type name: #{name.inspect}")
    end

    def check_flags(method, flags)
      unless flags.is_a?(Integer) && flags >= 0 && flags < UINT64_LIMIT
        raise InvalidArgsError.new("#{DBUS}InvalidArgs",
          "Flags must be an Integer from 0 to 2**64-1, not #{flags.inspect}")
      end
      unknown = flags & ~VALID_FLAGS.fetch(method)
      return if unknown.zero?

      valid = FLAG_NAMES.select { |bit, _| (VALID_FLAGS[method] & bit) != 0 }
        .map { |bit, n| format("%s (0x%x)", n, bit) }.join(", ")
      raise InvalidArgsError.new("#{DBUS}InvalidArgs",
        format("Unknown flags 0x%x for %s; valid: %s", unknown, method, valid))
    end

    # Runs the block against the service, or the offline lambda when offline.
    def dispatch(offline)
      return offline.call if @mode == :offline

      begin
        result = yield
        @mode = :bus
        result
      rescue Unreachable => e
        go_offline(e.message)
        offline.call
      end
    end

    def go_offline(reason)
      if @requested == :bus
        raise ServiceUnavailableError.new("#{DBUS}ServiceUnknown",
          "The fsgate service cannot be reached: #{reason}")
      end
      disconnect
      @fallback_reason = reason
      @mode = :offline
    end

    def property(name)
      bus_call("Get", "ss", INTERFACE, name, interface: PROPERTIES).first
    end

    def bus_address
      @bus_address || ENV["DBUS_SYSTEM_BUS_ADDRESS"] || DBus::SystemSocketName
    end

    def connection
      @bus ||= DBus::RemoteBus.new(bus_address)
    rescue StandardError, ScriptError => e
      # ENOENT/ECONNREFUSED (no bus), EACCES, failed authentication, an unusable address
      # (ruby-dbus then fails with NoMethodError on a nil socket).
      @bus = nil
      raise Unreachable, "cannot connect to the system bus at #{bus_address} (#{e.message})"
    end

    def disconnect
      socket = @bus&.message_queue&.socket
      socket.close if socket && !socket.closed?
    rescue IOError, SystemCallError
      nil
    ensure
      @bus = nil
    end

    # @return [Array] the reply's parameters
    def bus_call(member, signature, *args, interface: INTERFACE)
      attempts = 0
      begin
        attempts += 1
        bus = connection
        msg = DBus::Message.new(DBus::Message::METHOD_CALL)
        msg.path = OBJECT_PATH
        msg.interface = interface
        msg.destination = BUS_NAME
        msg.member = member
        msg.sender = bus.unique_name
        DBus::Type::Parser.new(signature).parse.zip(args) { |type, arg| msg.add_param(type, arg) }
        Timeout.timeout(@timeout) { bus.send_sync_or_async(msg) } || []
      rescue Errno::EPIPE
        # Writing failed: the connection died while idle (a restarted bus); nothing was
        # sent, so one retry on a new connection is safe.
        disconnect
        retry if attempts < 2
        raise DisconnectedError.new("#{DBUS}Disconnected", "The system bus connection was lost")
      rescue Timeout::Error
        disconnect
        raise NoReplyError.new("#{DBUS}NoReply",
          "The fsgate service did not answer #{member} within #{@timeout} s")
      rescue DBus::Error => e
        raise_dbus_error(e, member)
      rescue EOFError, IOError, SystemCallError => e
        disconnect
        raise DisconnectedError.new("#{DBUS}Disconnected",
          "The system bus connection was lost during #{member} (#{e.message}); its outcome is unknown")
      end
    end

    def raise_dbus_error(err, member)
      reply = err.dbus_message
      if reply.nil?
        # Raised by ruby-dbus itself, not sent by anyone: "Connection dropped after we sent".
        disconnect
        raise DisconnectedError.new("#{DBUS}Disconnected",
          "The system bus connection was lost during #{member}; its outcome is unknown")
      end
      text = reply.params.first.to_s
      raise Unreachable, "#{err.name}: #{text}" if UNREACHABLE.include?(err.name)

      raise Error.for(err.name, text)
    end
  end
end
