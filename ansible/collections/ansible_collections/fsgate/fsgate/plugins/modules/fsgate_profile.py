#!/usr/bin/python
# SPDX-License-Identifier: LGPL-2.1-or-later

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: fsgate_profile
short_description: Deny every filesystem module of an fsgate profile, all or nothing
version_added: "0.1.0"
description:
  - Applies one of fsgate's profiles (C(/usr/share/fsgate/profiles) on the managed host)
    through C(ApplyProfile) of the fsgate service C(fsgated), with C(busctl).
  - C(opensuse) is openSUSE's default list (soft), C(cis) the filesystem modules of the CIS
    Level 1 benchmarks (hard, so with C(install MODULE /bin/false) too, what OpenSCAP checks),
    C(unused) every filesystem module the host does not use, computed at the call.
  - All or nothing. When a module cannot be denied (a file fsgate did not write decides, or
    the module is in use without C(force)), nothing is written and the task fails with
    C(org.fsgate.fsgate1.Error.ProfileConflict), whose message names every such module.
  - Check mode asks for a dry run (C(DRY_RUN)), which writes nothing and asks polkit
    nothing, and reports the exact list of changes a real run would make.
author:
  - fsgate developers
options:
  name:
    description:
      - The profile, e.g. C(cis).
    type: str
    required: true
  hard:
    description:
      - Deny every module hard, even with a soft profile.
    type: bool
    default: false
  force:
    description:
      - Deny modules that are loaded or mounted now too (not with C(unused), which keeps them).
    type: bool
    default: false
  state:
    description:
      - C(present) applies the profile. C(absent) undoes it (C(UndoProfile)), resetting exactly the deny
        files the profile's apply wrote and nobody changed since; a module whose file
        an admin edited or denied again by hand is left alone and returned with change
        C(kept-edited) or C(kept-by-hand). C(hard) and C(force) do not apply to it.
      - Site profiles (C(/etc/fsgate/profiles/NAME.profile) on the managed host, with
        C(Include=)) are applied and undone as the shipped ones; one named like a shipped one wins.
    type: str
    choices: [present, absent]
    default: present
'''

EXAMPLES = r'''
- name: CIS Level 1 filesystem modules, hard-denied
  fsgate.fsgate.fsgate_profile:
    name: cis

- name: Undo it (only what cis denied and nobody changed since)
  fsgate.fsgate.fsgate_profile:
    name: cis
    state: absent

- name: Deny whatever this host does not use
  fsgate.fsgate.fsgate_profile:
    name: unused
'''

RETURN = r'''
changes:
  description: One entry per file written (or, in check mode, to write), in module order.
  returned: success
  type: list
  elements: dict
  contains:
    module: {description: The module., type: str}
    change:
      description: C(deny) or C(deny-hard); with state=absent C(reset), or C(kept-edited) or C(kept-by-hand) (left alone).
      type: str
    file: {description: The file fsgated wrote., type: str}
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.fsgate.fsgate.plugins.module_utils.fsgate import (FLAG_FORCE, FLAG_HARD, Fsgate,
                                                                           FsgateError)

FLAG_DRY_RUN = 0x10


def main():
    module = AnsibleModule(
        argument_spec=dict(name=dict(type='str', required=True),
                           hard=dict(type='bool', default=False),
                           force=dict(type='bool', default=False),
                           state=dict(type='str', choices=['present', 'absent'], default='present')),
        supports_check_mode=True)
    fs = Fsgate(module)
    p = module.params
    flags = (FLAG_HARD if p['hard'] else 0) | (FLAG_FORCE if p['force'] else 0)
    if module.check_mode:
        flags |= FLAG_DRY_RUN
    try:
        if p['state'] == 'absent':
            data = fs.call('UndoProfile', 'st', p['name'], flags & FLAG_DRY_RUN)
        else:
            data = fs.call('ApplyProfile', 'st', p['name'], flags)
    except FsgateError as e:
        fs.fail(e, changed=False)
    changes = [dict(module=m, change=c, file=f) for m, c, f in (data[0] if data else [])]
    diff = dict(before='', after=''.join('%s %s %s\n' % (c['change'], c['module'], c['file']) for c in changes))
    module.exit_json(changed=any(not c['change'].startswith('kept-') for c in changes), changes=changes, diff=diff)


if __name__ == '__main__':
    main()
