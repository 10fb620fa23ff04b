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
end

RSpec.configure { |config| config.include ClientExpectations }
