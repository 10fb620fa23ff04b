# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The risk facts as data/risk's two files say them, read here on their own (not through the
# service or the C table the build makes of them): the oracle of the examples that check
# what the client reads and what the panel below the table shows.

module RiskFacts
  DIR = File.expand_path("../../../data/risk", __dir__)

  module_function

  def rows(name)
    File.readlines(File.join(DIR, name), chomp: true).reject { |l| l.strip.empty? }.map { |l| l.split("\t", -1) }
  end

  # @return [Hash{String => Hash}] by module: the keys as Describe sends them
  def all
    @all ||= begin
      src = rows("kernel-facts.tsv").find { |r| r.first == "#source" }
      source = "#{src[1]} (Debian #{src[2]} #{src[3]})"
      facts = rows("kernel-facts.tsv").reject { |r| r.first.start_with?("#") }.to_h do |r|
        mod, title, maintainers, section, userns, deprecated = r.map { |v| v == "-" ? "" : v }
        [mod, { "risk_title" => title, "risk_maintainers" => maintainers, "risk_maintainers_section" => section,
                "risk_userns_mount" => userns == "yes", "risk_deprecated" => deprecated, "risk_upstream" => "",
                "risk_upstream_source" => "", "risk_facts_source" => source }]
      end
      rows("curated.tsv").reject { |r| r.first.start_with?("#") }.each do |mod, upstream, address|
        facts.fetch(mod).update("risk_upstream" => upstream, "risk_upstream_source" => address)
      end
      facts
    end
  end

  # @return [Hash] one module's facts; KeyError if the data has none
  def of(mod)
    all.fetch(mod)
  end

  # The line the panel below the table shows for mod (FilesystemsPresenter#risk_text),
  # built here from the data alone.
  def panel_line(mod)
    f = of(mod)
    code = if f["risk_maintainers"].empty?
      "Kernel code: no maintainer of its own in MAINTAINERS"
    else
      "Kernel code: #{f["risk_maintainers"]} (#{f["risk_maintainers_section"]})"
    end
    parts = [f["risk_title"], code]
    parts << "Deprecated: #{f["risk_deprecated"]}" unless f["risk_deprecated"].empty?
    parts << "Users can mount it in a user namespace: #{f["risk_userns_mount"] ? "yes" : "no"}"
    parts << "Upstream: #{f["risk_upstream"]}" unless f["risk_upstream"].empty?
    parts << "Facts from Linux #{f["risk_facts_source"]}"
    parts.join(" · ")
  end
end
