# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Expectations that the bus and the offline examples share: both modes promise the same
# errors and the same view of the fixture, so they are checked by the same code.

module ClientExpectations
  # Expects the block to raise klass carrying the D-Bus error name; returns the error so that
  # an example can check what it says.
  def expect_error(klass, name, &call)
    raised = nil
    expect(&call).to raise_error(klass) { |e| raised = e }
    expect(raised.name).to eq(name)
    raised
  end

  # Every filesystem module, with hfs as TestEnv.restore leaves it (denied by its vendor file).
  def expect_fixture_list(list)
    expect(list.size).to be > 40
    expect(list.find { |f| f.module_name == "hfs" }).to have_attributes(
      types: ["hfs"], state: "denied", origin: "vendor", source: TestEnv.conf(TestEnv::VENDOR, "hfs"),
      available: true, builtin: false, loaded: false, mounted: false
    )
  end

  # The risk facts of every module, as data/risk has them: the same from the service and from
  # fsgatectl. A module that kernel source did not have (sunrpc's rpc_pipefs) has none.
  def expect_risks(risks, list)
    expect(risks["hfs"]).to have_attributes(
      maintainers: RiskFacts.of("hfs")["risk_maintainers"], section: RiskFacts.of("hfs")["risk_maintainers_section"],
      title: RiskFacts.of("hfs")["risk_title"], userns_mount: false, deprecated: "",
      upstream: RiskFacts.of("hfs")["risk_upstream"], upstream_source: RiskFacts.of("hfs")["risk_upstream_source"],
      facts_source: RiskFacts.of("hfs")["risk_facts_source"]
    )
    expect(risks["hfs"].summary).to start_with("orphaned upstream")
    expect(risks["fuse"]).to be_userns_mount
    expect(risks["reiserfs"].deprecated).to eq(RiskFacts.of("reiserfs")["risk_deprecated"])
    names = list.map(&:module_name)
    with, without = names.partition { |m| RiskFacts.all.key?(m) }
    expect(with.size).to be > 40
    expect(without).not_to be_empty
    expect(risks.keys).to match_array(with)
    with.each do |m|
      f = RiskFacts.of(m)
      expect(risks[m].to_h.values_at(:title, :maintainers, :section, :userns_mount, :deprecated, :upstream))
        .to eq(f.values_at("risk_title", "risk_maintainers", "risk_maintainers_section", "risk_userns_mount",
                           "risk_deprecated", "risk_upstream")), m
    end
  end
end

RSpec.configure { |config| config.include ClientExpectations }
