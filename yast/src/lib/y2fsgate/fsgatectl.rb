# SPDX-License-Identifier: LGPL-2.1-or-later

require "json"
require "open3"
require "y2fsgate/errors"
require "y2fsgate/filesystem"

module Y2Fsgate
  # The offline backend: `fsgatectl --root=TARGET --json`, the same core code as the
  # service, working on the files under TARGET (no bus, no polkit: whoever may write
  # TARGET decides). YaST uses it where no service runs: the installer, a chroot.
  class Fsgatectl
    DEFAULT_PATH = "/usr/bin/fsgatectl".freeze

    FLAG_OPTIONS = { 0x1 => "--runtime", 0x2 => "--load", 0x4 => "--force" }.freeze

    # fsgatectl prints only the message and an exit status (see fsgatectl(1)); the
    # status alone is ambiguous (5 = InUse, ForeignConfig, Builtin or Overridden), so
    # the message, as the core writes it, picks the name. Unrecognised: the status'
    # class with the generic name.
    MESSAGES = {
      2 => [[/Not a valid module or filesystem type name/, "#{PREFIX}InvalidName"]],
      3 => [[/is a kernel module but not a filesystem/, "#{PREFIX}NotAFilesystem"],
            [/No filesystem module or type named/, "#{PREFIX}NoSuchFilesystem"]],
      5 => [[/is built into kernel .* cannot be denied/, "#{PREFIX}Builtin"],
            [/after a deny the next boot could not mount it/, "#{PREFIX}InUse"],
            [/takes precedence over \/run\/modprobe\.d/, "#{PREFIX}Overridden"],
            [/not written by fsgate|fsgate did not write|kernel command line|fsgate does not manage/,
             "#{PREFIX}ForeignConfig"]]
    }.freeze
    FALLBACK = {
      2 => [InvalidArgsError, "#{DBUS}InvalidArgs"],
      3 => [NoSuchFilesystemError, "#{PREFIX}NoSuchFilesystem"],
      4 => [AccessDeniedError, "#{DBUS}AccessDenied"],
      5 => [ConflictError, "#{DBUS}Failed"],
      6 => [ReadOnlyError, "#{PREFIX}ReadOnly"],
      7 => [LoadFailedError, "#{PREFIX}LoadFailed"],
      8 => [ServiceUnavailableError, "#{DBUS}ServiceUnknown"]
    }.freeze

    attr_reader :root, :path

    # @param root [String] absolute path of the system to work on
    # @param path [String] the fsgatectl binary
    def initialize(root:, path: DEFAULT_PATH)
      @root = root
      @path = path
    end

    # @return [Array<Filesystem>]
    def list_filesystems
      run("list").map { |h| Filesystem.from_json(h) }
    end

    # @return [Hash{String => Hash}] every module's object, by module name: offline, `list`
    #   carries Describe's keys too (the risk facts among them)
    def describe_all
      run("list").to_h { |h| [h.fetch("module"), h] }
    end

    # @return [Filesystem]
    def get_filesystem(name)
      Filesystem.from_json(run("status", name))
    end

    # @param verb ["allow", "deny", "reset"]
    # @return [nil]
    def change(verb, name, flags)
      options = FLAG_OPTIONS.select { |bit, _| (flags & bit) != 0 }.values
      run(verb, name, options: options)
      nil
    end

    # fsgatectl refuses this offline (InvalidArgs): loading needs the running system.
    def load(name)
      run("load", name)
      nil
    end

    # @return [Array<String>] the modules exempted
    def exempt_loaded
      run("exempt-loaded")
    end

    # Of the running system, not of root (no --root): the routes fsgated would start.
    # @return [Hash{String => Hash}] `fsgatectl --json routes` by type
    def routes
      run_live("routes").to_h { |r| [r.fetch("type"), r] }
    end

    # Of the running system: the blocks the journal holds, oldest first.
    # @return [Array<Hash>] `fsgatectl --json log`
    def log
      run_live("log")
    end

    # Of the running system, through the service: `fsgatectl --json open DEVICE`.
    # @return [Hash] "mountpoint" and "id"
    def open(device)
      run_live("open", device)
    end

    # @return [String] fsgatectl's version
    def version
      out, _err, status = capture("--version")
      status.success? ? out.split.last.to_s : ""
    end

  private

    # Runs fsgatectl (never through a shell: no quoting questions) and parses its JSON.
    # Options go before "--", so a name starting with "-" stays a name.
    def run(verb, *args, options: [])
      out, err, status = capture("--root=#{root}", "--json", *options, "--", verb, *args)
      raise error_for(status.exitstatus, err) unless status.success?

      JSON.parse(out)
    rescue JSON::ParserError => e
      raise Error.new("#{DBUS}Failed", "fsgatectl printed something that is not JSON: #{e.message}")
    end

    # The same on the running system (fsgatectl without --root).
    def run_live(verb, *args)
      out, err, status = capture("--json", "--", verb, *args)
      raise error_for(status.exitstatus, err) unless status.success?

      JSON.parse(out)
    rescue JSON::ParserError => e
      raise Error.new("#{DBUS}Failed", "fsgatectl printed something that is not JSON: #{e.message}")
    end

    def capture(*args)
      Open3.capture3(path, *args, stdin_data: "")
    rescue SystemCallError => e
      raise ServiceUnavailableError.new("#{DBUS}ServiceUnknown",
        "fsgatectl cannot be run (#{e.message}); is fsgate installed?")
    end

    def error_for(status, stderr)
      text = stderr.strip
      # A future fsgatectl may print {"error": NAME, "message": TEXT} with --json.
      begin
        json = JSON.parse(text)
        return Error.for(json["error"], json["message"].to_s) if json.is_a?(Hash) && json["error"]
      rescue JSON::ParserError
        nil
      end
      message = text.lines.last.to_s.strip
      message = "fsgatectl failed with exit status #{status}" if message.empty?
      pattern = MESSAGES.fetch(status, []).find { |re, _| re.match?(message) }
      return Error.for(pattern[1], message) if pattern

      klass, name = FALLBACK.fetch(status, [Error, "#{DBUS}Failed"])
      klass.new(name, message)
    end
  end
end
