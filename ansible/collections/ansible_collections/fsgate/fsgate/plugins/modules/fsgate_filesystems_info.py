#!/usr/bin/python
# SPDX-License-Identifier: LGPL-2.1-or-later

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: fsgate_filesystems_info
short_description: Report which filesystem modules the kernel may autoload, from fsgate
version_added: "0.1.0"
description:
  - Returns fsgated's entries (C(ListFilesystems), or C(GetFilesystem) for each of C(names))
    as a list of dicts, plus the service's version and the kernel release it describes.
  - Talks to C(org.fsgate.fsgate1) on the system bus with C(busctl) (part of systemd);
    C(DBUS_SYSTEM_BUS_ADDRESS) is honoured. Needs no privileges and no polkit authorization.
author:
  - fsgate developers
options:
  names:
    description:
      - Report only these filesystem modules or types (C(vxfs) reports C(freevxfs)), in this
        order. A name fsgated does not know fails the task
        (C(org.fsgate.fsgate1.Error.NoSuchFilesystem)).
      - Without it, every filesystem module the kernel's module tree knows, plus every
        module named by a deny or allow rule.
    type: list
    elements: str
attributes:
  check_mode:
    support: full
    details: Only reads.
requirements:
  - systemd 246 or newer (its busctl) on the managed host, and fsgated (activatable on the system bus).
seealso:
  - module: fsgate.fsgate.fsgate_filesystem
'''

EXAMPLES = r'''
- name: Ask fsgate about every filesystem module
  fsgate.fsgate.fsgate_filesystems_info:
  register: fs

- name: Show what is denied
  ansible.builtin.debug:
    msg: "{{ fs.filesystems | selectattr('state', 'eq', 'denied') | map(attribute='module') | list }}"

- name: Only two of them
  fsgate.fsgate.fsgate_filesystems_info:
    names: [hfs, vxfs]
  register: two
'''

RETURN = r'''
filesystems:
  description: One dict per filesystem module (the fields of fsgated's C((sassssbbbb)) entry).
  returned: success
  type: list
  elements: dict
  contains:
    module:
      description: The kernel module.
      type: str
      sample: freevxfs
    types:
      description: The filesystem types it serves.
      type: list
      elements: str
      sample: [vxfs]
    state:
      description: C(allowed) or C(denied).
      type: str
    origin:
      description: What decides, one of C(default), C(vendor), C(local), C(runtime), C(admin), C(cmdline).
      type: str
    source:
      description: The file that decides (empty for C(default) and C(cmdline)).
      type: str
    available:
      description: A module file exists for the kernel.
      type: bool
    builtin:
      description: Compiled into the kernel.
      type: bool
    loaded:
      description: Loaded now.
      type: bool
    mounted:
      description: One of its types is mounted now.
      type: bool
version:
  description: fsgated's version.
  returned: success
  type: str
  sample: 0.1.0
kernel_release:
  description: The kernel release the entries describe.
  returned: success
  type: str
  sample: 6.1.0-57-amd64
dbus_error:
  description: The D-Bus error name of a failed call (empty if busctl got no reply at all).
  returned: failure
  type: str
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.fsgate.fsgate.plugins.module_utils.fsgate import Fsgate, FsgateError


def main():
    module = AnsibleModule(
        argument_spec=dict(names=dict(type='list', elements='str')),
        supports_check_mode=True,
    )
    fsgate = Fsgate(module)
    try:
        if module.params['names'] is None:
            filesystems = fsgate.list()
        else:
            filesystems = [fsgate.get(n) for n in module.params['names']]
        version = fsgate.get_property('Version')
        kernel_release = fsgate.get_property('KernelRelease')
    except FsgateError as e:
        fsgate.fail(e)
    module.exit_json(changed=False, filesystems=filesystems, version=version,
                     kernel_release=kernel_release)


if __name__ == '__main__':
    main()
