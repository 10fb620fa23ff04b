# SPDX-License-Identifier: LGPL-2.1-or-later

module Y2Fsgate
  # One filesystem module as fsgated describes it: the D-Bus entry (sassssbbbb).
  Filesystem = Struct.new(:module_name, :types, :state, :origin, :source,
    :available, :builtin, :loaded, :mounted, keyword_init: true) do
    # @param entry [Array] (sassssbbbb) as ruby-dbus returns it
    def self.from_dbus(entry)
      module_name, types, state, origin, source, available, builtin, loaded, mounted = entry
      new(module_name: module_name, types: types, state: state, origin: origin, source: source,
          available: available, builtin: builtin, loaded: loaded, mounted: mounted)
    end

    # @param hash [Hash] one object of `fsgatectl --json`
    def self.from_json(hash)
      new(module_name: hash.fetch("module"), types: hash.fetch("types"), state: hash.fetch("state"),
          origin: hash.fetch("origin"), source: hash.fetch("deciding_file"),
          available: hash.fetch("available"), builtin: hash.fetch("builtin"),
          loaded: hash.fetch("loaded"), mounted: hash.fetch("mounted"))
    end

    def denied?
      state == "denied"
    end

    def allowed?
      state == "allowed"
    end

    def available?
      available
    end

    def builtin?
      builtin
    end

    def loaded?
      loaded
    end

    def mounted?
      mounted
    end
  end
end
