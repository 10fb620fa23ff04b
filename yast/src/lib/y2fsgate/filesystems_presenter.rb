# SPDX-License-Identifier: LGPL-2.1-or-later

require "y2fsgate/client"
require "y2fsgate/i18n"

module Y2Fsgate
  # Everything the filesystems dialog shows and decides, in plain Ruby (no UI): the table
  # rows, which actions a row allows and why not, the confirmation before a deny of a
  # filesystem in use, and the texts for results and errors. The dialog only draws this.
  #
  # The service has the final say: an action offered here may still fail (e.g.
  # ForeignConfig for a file fsgate did not write, which only the service can see); the
  # result then carries the service's message.
  class FilesystemsPresenter
    include I18n

    # Every action, in the order the dialog offers them: first the ways to use a denied
    # filesystem, the safest first (issue 41): Open Safely (a blocked drive's files read by a
    # userspace driver, the module still off), Load for This Drive and Load for a While (the
    # module loaded for a while, a grant: the configuration still denies it), Load Now (for
    # this boot), and the permanent Allow last; then Deny, Reset and End Grant.
    LIFT_ACTIONS = [:open, :grant_device, :grant_time, :load, :allow].freeze
    ACTIONS = (LIFT_ACTIONS + [:deny, :reset, :end_grant]).freeze

    # How long Load for a While loads the module.
    GRANT_SECONDS = 3600

    # One action for one row. reason: why it is disabled (nil when enabled).
    Action = Struct.new(:id, :label, :enabled, :reason, keyword_init: true) do
      def enabled?
        enabled
      end
    end

    # What to ask the client for. confirmation: the question to ask the user first.
    Request = Struct.new(:action, :module_name, :flags, :confirmation, keyword_init: true) do
      def needs_confirmation?
        !confirmation.nil?
      end

      # The request after the user said yes: a deny of a filesystem in use needs FORCE.
      # (FORCE set without a binary "|": rxgettext 3.3 takes one for a block's |arguments|
      # and then extracts no text after it in this file.)
      def confirm
        Request.new(action: action, module_name: module_name,
          flags: (flags & ~Client::FORCE) + Client::FORCE, confirmation: nil)
      end
    end

    # The outcome. error: a Y2Fsgate::Error; follow_up: a Request that needs confirmation
    # (the service said InUse); message: the text to show either way.
    Result = Struct.new(:request, :error, :follow_up, :cancelled, :message, keyword_init: true) do
      def ok?
        error.nil? && follow_up.nil? && !cancelled
      end
    end

    # One table row; id is the module name.
    Row = Struct.new(:id, :filesystem, :cells, keyword_init: true)

    # @return [Client]
    attr_reader :client
    # @return [String] the text rows are filtered by
    attr_reader :filter

    def initialize(client)
      textdomain "fsgate"
      @client = client
      @filesystems = nil
      @risks = nil
      @filter = ""
    end

    # Reads the list from the service (or fsgatectl) again.
    # @raise [Y2Fsgate::Error]
    def refresh
      @filesystems = client.list_filesystems.sort_by(&:module_name)
      @grants = nil
      @drives = nil
      self
    end

    # @return [Array<Filesystem>] all of them, sorted by module
    def filesystems
      refresh if @filesystems.nil?
      @filesystems
    end

    # @param text [String] words each of which a row must match: its module name, else one
    #   of its types (see #match_of)
    def filter=(text)
      @filter = text.to_s.strip.downcase
    end

    # @return [Filesystem, nil]
    def find(id)
      filesystems.find { |f| f.module_name == id }
    end

    # The text UI makes every column as wide as its longest cell and scrolls sideways what
    # does not fit in the table's frame (74 columns at 80x24). So that the deciding file stays
    # on screen there, the cells are short: the state alone ("denied", not "denied (not in
    # this kernel)"), one "In use" column for loaded and mounted ("mounted" implies loaded;
    # "-": this kernel has no such module), the deciding file as its origin and file name
    # ("vendor: 60-blacklist_fs-hfs.conf": the origin names the directory, and the same name
    # in /etc is fsgate's own), and no Types column. The types, the whole path and "not in
    # this kernel" are in the first line of the panel below the table (#details), and the
    # filter matches types.
    def table_header
      # TRANSLATORS: a column of the table: "mounted", "loaded" (not mounted) or "no".
      [_("Module"), _("Autoload"), _("In use"), _("Decided by")]
    end

    # @return [Array<Row>] the rows matching the filter; a row found by a type says which
    #   in its first cell
    def rows
      filesystems.map { |f| [f, match_of(f)] }.reject { |_f, m| m.nil? }.map do |f, type|
        Row.new(id: f.module_name, filesystem: f,
          cells: [module_cell(f, type), state_word(f), in_use_text(f), deciding_file(f)])
      end
    end

    # What the filter found fs by: nil when it does not match, "" when by its name (or there
    # is no filter), else the type a word matched. Names first, then types, so that "hfs" is
    # hfs and hfsplus, and ib_qib only by its type ipathfs, which "hfs" does not match: a word
    # matches a name where the name or a part of it after "_" or "-" begins ("qib" is
    # ib_qib), or, with * ? [, as a whole shell glob, as `fsgatectl list PATTERN` ("*fat").
    # @return [String, nil]
    def match_of(fs)
      type = nil
      filter.split.each do |word|
        next if name_match?(word, fs.module_name)

        found = fs.types.find { |t| name_match?(word, t) }
        return nil unless found

        type ||= found
      end
      type.to_s
    end

    # @return [Array<Array>] [id, cell, ...] as CWM::Table#items wants them
    def table_items
      rows.map { |r| [r.id] + r.cells }
    end

    # @return [String] the line above the table: where changes go
    def status_text
      denied = filesystems.count { |f| f.denied? && !f.builtin? }
      summary = format(_("%<denied>d of %<total>d filesystem modules may not be loaded automatically."),
        denied: denied, total: filesystems.size)
      return "#{online_text} #{summary}" unless client.offline?

      where = if client.target == "/"
        _("The fsgate service is not running: changes are written directly to the " \
          "configuration files of this system.")
      else
        format(_("Changes are written to the system at %s (no service runs there)."), client.target)
      end
      "#{where} #{summary}"
    end

    # The lines below the table: the selected row, what the kernel source says of it, why
    # each disabled action is disabled, and last where changes go (a small screen shows the
    # first lines only).
    # @return [Array<String>]
    def details(id)
      fs = id && find(id)
      return [status_text] unless fs

      lines = [format(_("%<module>s (types: %<types>s): %<state>s; decided by %<why>s."),
        module: fs.module_name, types: types_text(fs), state: state_text(fs), why: decided_by(fs))]
      risk = risk_text(id)
      lines << risk if risk
      grant = grant_text(id)
      lines << grant if grant
      actions(id).reject(&:enabled?).each { |a| lines << "#{a.label.delete("&")}: #{a.reason}" }
      lines << status_text
    end

    # The module's active grants (the Grants property; read again after each refresh),
    # soonest end first. Offline: none.
    # @return [Array<Hash>] see Client#active_grants
    def grants_of(id)
      @grants ||= begin
        client.active_grants
      rescue Error
        []
      end
      @grants.select { |g| g["module"] == id }
    end

    # The newest drive that was blocked and is still there, with a filesystem of the module's
    # (`fsgatectl log`, read again after each refresh). Offline: none.
    # @return [Hash, nil] see Client#blocked_drives
    def blocked_drive(fs)
      @drives ||= client.blocked_drives
      @drives.find { |d| d["module"] == fs.module_name || fs.types.include?(d["type"]) }
    end

    # The userspace driver that reads the drive's filesystem (`fsgatectl routes`, read once).
    # @return [Hash, nil]
    def route_of(drive)
      @routes ||= client.routes
      drive && @routes[drive["type"]]
    end

    # A time as the panel shows it: local, to the minute ("2026-12-07 14:05 UTC").
    def time_text(time)
      time.localtime.strftime("%Y-%m-%d %H:%M %Z")
    end

    # The module's grants: until when each loads it, and what ends them now. Online from the
    # Grants property; offline what fsgatectl --root reads of the target's /run.
    # @return [String, nil]
    def grant_text(id)
      return offline_grant_text(id) if client.offline?

      end_label = action_label(:end_grant).delete("&")
      lines = grants_of(id).map do |g|
        if g["device"]
          # TRANSLATORS: %<until>s a time, %<device>s a device node, %<end>s the button "End Grant".
          format(_("Loaded for a while: until %<until>s or until %<device>s is removed; %<end>s ends it now."),
            until: time_text(g["until"]), device: g["device"], end: end_label)
        else
          # TRANSLATORS: %<until>s a time, %<end>s the button "End Grant".
          format(_("Loaded for a while: until %<until>s; %<end>s ends it now."),
            until: time_text(g["until"]), end: end_label)
        end
      end
      lines.empty? ? nil : lines.join(" ")
    end

    def offline_grant_text(id)
      ends, device = begin
        client.grants[id]
      rescue Error
        nil
      end
      return nil unless ends

      if device
        # TRANSLATORS: %<until>s a time (UTC), %<device>s a device node, %<module>s a module name.
        format(_("Loaded for a while: until %<until>s or until %<device>s is removed; " \
                 "\"fsgatectl deny %<module>s\" ends it now."), until: ends, device: device, module: id)
      else
        # TRANSLATORS: %<until>s a time (UTC), %<module>s a module name.
        format(_("Loaded for a while: until %<until>s; \"fsgatectl deny %<module>s\" ends it now."),
          until: ends, module: id)
      end
    end

    # What the kernel source says of the module (the risk facts; they do not change while the
    # service runs: read once).
    # @return [Risk, nil] nil for a module that source did not have, or when the service sends none
    def risk(id)
      @risks ||= begin
        client.risks
      rescue Error
        {}
      end
      @risks[id]
    end

    # The risk facts in one line, the kernel's texts as they are (English, as MAINTAINERS
    # and Kconfig have them): "Apple Macintosh file system support · Kernel code: Orphan
    # (HFS FILESYSTEM) · Users can mount it in a user namespace: no · Upstream: ...".
    # @return [String, nil] nil without risk facts
    def risk_text(id)
      r = risk(id)
      return nil unless r

      code = if r.maintainers.empty?
        _("Kernel code: no maintainer of its own in MAINTAINERS")
      else
        # TRANSLATORS: %<status>s is the status word of MAINTAINERS (Maintained, Orphan, Odd
        # Fixes, ...), %<section>s its section there; both stay in English.
        format(_("Kernel code: %<status>s (%<section>s)"), status: r.maintainers, section: r.section)
      end
      parts = [r.title, code]
      parts << format(_("Deprecated: %s"), r.deprecated) unless r.deprecated.empty?
      parts << format(_("Users can mount it in a user namespace: %s"), yes_no(r.userns_mount?))
      parts << format(_("Upstream: %s"), r.upstream) unless r.upstream.empty?
      # TRANSLATORS: %s is the kernel source: "6.1.192 (Debian linux-source-6.1 6.1.192-3)".
      parts << format(_("Facts from Linux %s"), r.facts_source)
      parts.reject(&:empty?).join(" · ")
    end

    # Whether "only until reboot" (RUNTIME) makes sense: on the running system only.
    def runtime_available?
      client.target == "/"
    end

    # @param id [String, nil] the selected row
    # @return [Array<Action>] every action, enabled or not, with the reason
    def actions(id)
      fs = id && find(id)
      ACTIONS.map do |action|
        reason = fs ? disabled_reason(fs, action) : _("Select a filesystem first.")
        Action.new(id: action, label: action_label(action), enabled: reason.nil?, reason: reason)
      end
    end

    # @return [Array<Action>] the actions of the row of the ways to use a denied filesystem
    def lift_actions(id)
      actions(id).select { |a| LIFT_ACTIONS.include?(a.id) }
    end

    # @return [Request]
    # @raise [ArgumentError] when the action is not enabled for that row
    def request(id, action, runtime: false)
      fs = find(id)
      raise ArgumentError, "no filesystem #{id.inspect}" unless fs

      reason = disabled_reason(fs, action)
      raise ArgumentError, reason if reason
      raise ArgumentError, "RUNTIME applies to the running system only" if runtime && !runtime_available?

      flags = runtime && [:allow, :deny].include?(action) ? Client::RUNTIME : 0
      flags = Client::RUNTIME if action == :reset && fs.origin == "runtime"
      confirmation = confirmation_text(fs, flags) if action == :deny && (fs.loaded? || fs.mounted?)
      Request.new(action: action, module_name: fs.module_name, flags: flags, confirmation: confirmation)
    end

    # The question before a deny of a filesystem that is mounted or loaded now.
    # @return [String, nil] nil when it is neither
    def confirmation_text(fs, flags = 0)
      return nil unless fs.mounted? || fs.loaded?

      args = { module: fs.module_name, types: fs.types.empty? ? fs.module_name : fs.types.join(", ") }
      now = if fs.mounted?
        format(_("%<module>s is mounted now."), args)
      else
        format(_("%<module>s is loaded now: a %<types>s filesystem was used since the system started."), args)
      end
      effect = if (flags & Client::RUNTIME) != 0
        format(_("Nothing is unmounted or unloaded now. But until the next boot, once the module is " \
                 "unloaded, mounting %<types>s filesystems fails with \"unknown filesystem type\"."), args)
      elsif fs.mounted?
        format(_("After the deny the kernel no longer loads %<module>s on its own: at the next boot " \
                 "the %<types>s filesystems this system mounts now (see /etc/fstab) cannot be mounted, " \
                 "and whatever needs them fails to start."), args)
      else
        format(_("After the deny the kernel no longer loads %<module>s on its own: from the next boot " \
                 "on, mounting %<types>s filesystems fails with \"unknown filesystem type\"."), args)
      end
      question = format(_("Deny %<module>s anyway?"), args)
      [now, effect, question].join("\n\n")
    end

    # Asks for confirmation through the block where needed, then performs the action.
    # @yieldparam text [String] the question; the block returns true to go ahead
    # @return [Result]
    def execute(id, action, runtime: false, &confirm)
      request = request(id, action, runtime: runtime)
      loop do
        if request.needs_confirmation?
          unless confirm && confirm.call(request.confirmation)
            return Result.new(request: request, cancelled: true, message: _("Nothing was changed."))
          end

          request = request.confirm
        end
        result = perform(request)
        return result unless result.follow_up

        request = result.follow_up
      end
    end

    # Performs a request that needs no (more) confirmation and reads the list again.
    # @return [Result]
    def perform(request)
      raise ArgumentError, "the request needs confirmation first" if request.needs_confirmation?

      name = request.module_name
      case request.action
      when :allow then client.allow(name, request.flags)
      when :deny  then client.deny(name, request.flags)
      when :reset then client.reset(name, request.flags)
      when :load  then client.load(name)
      when :grant_time then granted = client.grant(name, seconds: GRANT_SECONDS)
      when :grant_device
        drive = blocked_drive(find(name))
        granted = client.grant(name, device: drive.fetch("device"))
      when :open
        drive = blocked_drive(find(name))
        mountpoint = client.open_safely(drive.fetch("device"))
      when :end_grant then client.end_grants(name)
      else raise ArgumentError, "unknown action #{request.action.inspect}"
      end
      refresh
      message = case request.action
      when :grant_time, :grant_device then grant_outcome(name, granted, drive)
      when :open
        # TRANSLATORS: %<mountpoint>s a directory, %<device>s a device node, %<module>s a module.
        format(_("Opened safely at %<mountpoint>s: the files of %<device>s read-only, %<module>s still off."),
          mountpoint: mountpoint, device: drive["device"], module: name)
      when :end_grant then "#{format(_("%s: the grant ended."), name)} #{outcome_text(request)}"
      else outcome_text(request)
      end
      Result.new(request: request, message: message)
    rescue InUseError => e
      refresh_quietly
      return failed(request, e) unless request.action == :deny && (request.flags & Client::FORCE).zero?

      # In use although the list said otherwise (it was mounted meanwhile): ask, then FORCE.
      fs = find(name)
      text = (fs && confirmation_text(fs, request.flags)) ||
        "#{e.message}\n\n#{format(_("Deny %s anyway?"), name)}"
      Result.new(request: request, follow_up: Request.new(action: :deny, module_name: name,
        flags: request.flags, confirmation: text), message: e.message)
    rescue Error => e
      refresh_quietly
      failed(request, e)
    end

    # @param err [Y2Fsgate::Error]
    # @return [String] what to tell the user: a hint and the service's message (the D-Bus error
    #   name stays in the exception and the journal: people read words)
    def error_text(err)
      hint = case err
      when ForeignConfigError then _("fsgate does not change configuration it did not write.")
      when InUseError then _("The filesystem is in use.")
      when BuiltinError then _("The filesystem is built into the kernel.")
      when OverriddenError then _("A setting in /etc/modprobe.d takes precedence.")
      when AccessDeniedError then _("You are not authorized to make this change.")
      when ReadOnlyError then _("The configuration cannot be written.")
      when ServiceUnavailableError, NoReplyError, DisconnectedError
        _("The fsgate service cannot be used.")
      when InvalidNameError, NoSuchFilesystemError then _("There is no such filesystem.")
      else _("The change failed.")
      end
      [hint, err.message].join("\n\n")
    end

  private

    def failed(request, err)
      Result.new(request: request, error: err, message: error_text(err))
    end

    # What a grant did: until when the module is loaded, or why nothing was granted.
    def grant_outcome(name, granted, drive)
      if granted.to_s.empty?
        return format(_("%s needed no grant: it is loaded, or the configuration allows it."), name)
      end

      grant = grants_of(name).find { |g| g["id"] == granted }
      ends = grant ? time_text(grant["until"]) : "?"
      if drive
        # TRANSLATORS: %<module>s a module, %<device>s a device node, %<until>s a time.
        format(_("%<module>s is loaded while %<device>s is there, until %<until>s at most: mount it again."),
          module: name, device: drive["device"], until: ends)
      else
        # TRANSLATORS: %<module>s a module, %<until>s a time.
        format(_("%<module>s is loaded until %<until>s, then unloaded once unused: mount it again."),
          module: name, until: ends)
      end
    end

    def refresh_quietly
      refresh
    rescue Error
      nil
    end

    def online_text
      @kernel_release = client.kernel_release unless defined?(@kernel_release)
      @kernel_release ? format(_("Kernel %s:"), @kernel_release) : ""
    rescue Error
      ""
    end

    # Either spelling of "-" and "_" in a module name, as the kernel takes it. (No binary
    # "|" in this file: see Request#confirm.)
    def name_match?(word, name)
      [name.downcase, name.downcase.tr("_", "-")].any? do |n|
        if word.match?(/[*?\[]/)
          File.fnmatch?(word, n)
        else
          n.start_with?(word) || n.match?(/[_-]#{Regexp.escape(word)}/)
        end
      end
    end

    def module_cell(fs, type)
      return fs.module_name if type.to_s.empty?

      # TRANSLATORS: the Module cell of a row the filter found by a filesystem type of the
      # module ("ib_qib (type ipathfs)"), not by its name.
      format(_("%<module>s (type %<type>s)"), module: fs.module_name, type: type)
    end

    # Shortcuts: A D R N (and the check box's B) from before; O V W for the ways first, G for
    # End Grant (E is taken in the Qt UI: its hidden "R&elease Notes" moves there from R).
    def action_label(action)
      {
        allow: _("&Allow"),
        deny:  _("&Deny"),
        reset: _("&Reset"),
        load:  _("Load &Now"),
        open:  _("&Open Safely"),
        grant_device: _("Load for This Dri&ve"),
        grant_time: _("Load for a &While"),
        end_grant: _("End &Grant")
      }.fetch(action)
    end

    # @return [String, nil] why action is not possible for fs; nil when it is
    def disabled_reason(fs, action)
      raise ArgumentError, "unknown action #{action.inspect}" unless ACTIONS.include?(action)

      name = fs.module_name
      if fs.builtin?
        return format(_("%s is built into the kernel: it is always available and cannot be denied."), name)
      end

      case action
      when :allow
        return format(_("%s may be loaded automatically already."), name) unless fs.denied?
        if fs.origin == "cmdline"
          return format(_("%s is denied by modprobe.blacklist= on the kernel command line; " \
                          "change the boot loader configuration."), name)
        end
      when :deny
        return format(_("%s is denied already."), name) if fs.denied?
      when :reset
        return format(_("fsgate has no setting for %s to reset."), name) unless own_file?(fs)
      when :load
        return load_refused(fs)
      when :grant_time, :grant_device
        return format(_("%s may be loaded automatically already."), name) unless fs.denied?

        refused = load_refused(fs)
        return refused if refused || action == :grant_time

        return no_drive(fs) unless blocked_drive(fs)
      when :open
        return _("Opening safely needs the running fsgate service.") if client.offline?

        drive = blocked_drive(fs)
        return no_drive(fs) unless drive

        route = route_of(drive)
        unless route && route["usable"]
          # TRANSLATORS: %<type>s a filesystem type, %<device>s a device node.
          return format(_("No userspace driver that fsgate starts reads %<type>s on %<device>s here."),
            type: drive["type"], device: drive["device"])
        end
      when :end_grant
        return _("Ending a grant needs the running fsgate service.") if client.offline?
        return format(_("%s is not loaded for a while."), name) if grants_of(name).empty?
      end
      nil
    end

    # Why the module cannot be loaded now (Load Now, a grant); nil when it can.
    def load_refused(fs)
      name = fs.module_name
      return _("Loading needs the running fsgate service.") if client.offline?
      return format(_("%s is loaded already."), name) if fs.loaded?
      return format(_("There is no module file of %s for this kernel."), name) unless fs.available?

      nil
    end

    def no_drive(fs)
      # TRANSLATORS: %s filesystem types ("hfs" or "vfat, msdos").
      format(_("No drive with a %s filesystem was blocked that is still plugged in."), types_text(fs))
    end

    # Whether fs is decided by a file of fsgate's name in /etc or /run (the service
    # still refuses, ForeignConfig, if someone else wrote it).
    def own_file?(fs)
      %w[admin runtime].include?(fs.origin) &&
        File.basename(fs.source.to_s) == "60-blacklist_fs-#{fs.module_name}.conf"
    end

    def outcome_text(request)
      fs = find(request.module_name)
      return format(_("%s: done."), request.module_name) unless fs
      return format(_("%s is loaded."), fs.module_name) if request.action == :load

      format(_("%<module>s: %<state>s (%<why>s)."), module: fs.module_name, state: state_text(fs),
        why: decided_by(fs))
    end

    def types_text(fs)
      fs.types.empty? ? "-" : fs.types.join(", ")
    end

    # "denied (not in this kernel)": the state_word, and whether there is a module file.
    def state_text(fs)
      text = state_word(fs)
      fs.available? || fs.builtin? ? text : format(_("%s (not in this kernel)"), text)
    end

    # The table's state cell: "allowed", "denied" or "built in".
    def state_word(fs)
      if fs.builtin?
        _("built in")
      elsif fs.denied?
        _("denied")
      else
        _("allowed")
      end
    end

    # The table's "In use" cell: "mounted" (and so loaded), "loaded", "no", or "-" for a
    # module this kernel has no file of (the panel says "not in this kernel").
    def in_use_text(fs)
      if fs.mounted?
        _("mounted")
      elsif fs.loaded?
        _("loaded")
      elsif fs.available? || fs.builtin?
        _("no")
      else
        "-"
      end
    end

    def decided_by(fs)
      case fs.origin
      when "default" then _("default")
      when "vendor"  then format(_("vendor: %s"), fs.source)
      when "local"   then format(_("local: %s"), fs.source)
      when "admin"   then format(_("admin: %s"), fs.source)
      when "runtime" then format(_("until reboot: %s"), fs.source)
      when "cmdline" then _("kernel command line")
      else [fs.origin, fs.source].reject { |s| s.to_s.empty? }.join(": ")
      end
    end

    # The table's "Decided by" cell: decided_by with the file's name instead of its path
    # ("vendor: 60-blacklist_fs-hfs.conf"); the origin says where it is (vendor:
    # /usr/lib/modprobe.d, local: /usr/local/lib/modprobe.d, admin: /etc/modprobe.d,
    # runtime: /run/modprobe.d), the panel shows the path.
    def deciding_file(fs)
      name = File.basename(fs.source.to_s)
      case fs.origin
      when "default" then _("default")
      when "vendor"  then format(_("vendor: %s"), name)
      when "local"   then format(_("local: %s"), name)
      when "admin"   then format(_("admin: %s"), name)
      # TRANSLATORS: in the table, short: a file in /run/modprobe.d, which applies until
      # the next boot (the panel below the table says "until reboot" and the whole path).
      when "runtime" then format(_("runtime: %s"), name)
      when "cmdline" then _("kernel command line")
      else [fs.origin.to_s, name].reject(&:empty?).join(": ")
      end
    end

    def yes_no(value)
      value ? _("yes") : _("no")
    end
  end
end
