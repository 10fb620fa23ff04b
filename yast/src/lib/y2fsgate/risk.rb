# SPDX-License-Identifier: LGPL-2.1-or-later

module Y2Fsgate
  # What the kernel source says of one module: the risk facts of Describe (see
  # org.fsgate.fsgate1(5)), compiled into the service from one kernel source. The texts are
  # the kernel's own (MAINTAINERS, Kconfig), in English.
  Risk = Struct.new(:summary, :title, :maintainers, :section, :userns_mount, :deprecated,
    :upstream, :upstream_source, :facts_source, keyword_init: true) do
    # @param description [Hash] Describe's a{sv} (ruby-dbus unpacks the variants) or one
    #   object of `fsgatectl --json`: the keys are the same
    # @return [Risk, nil] nil for a module that kernel source did not have, and from a
    #   service that sends no risk facts
    def self.from_description(description)
      source = description["risk_facts_source"].to_s
      return nil if source.empty?

      new(summary: description["risk_summary"].to_s, title: description["risk_title"].to_s,
          maintainers: description["risk_maintainers"].to_s,
          section: description["risk_maintainers_section"].to_s,
          userns_mount: description["risk_userns_mount"] == true,
          deprecated: description["risk_deprecated"].to_s, upstream: description["risk_upstream"].to_s,
          upstream_source: description["risk_upstream_source"].to_s, facts_source: source)
    end

    # Any user can mount it in a user namespace (FS_USERNS_MOUNT).
    def userns_mount?
      userns_mount
    end
  end
end
