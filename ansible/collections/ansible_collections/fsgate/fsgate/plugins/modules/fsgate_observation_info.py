#!/usr/bin/python
# SPDX-License-Identifier: LGPL-2.1-or-later

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: fsgate_observation_info
short_description: What observing an fsgate profile recorded on a host, and whether enforcing it would break something
version_added: "0.1.0"
description:
  - Reads the observation on now (C(GetObservation) of the fsgate service C(fsgated)), the
    profile's audit with what its observation recorded in the journal
    (C(fsgatectl --json audit NAME), whose C(observed) part this returns as it is), and a dry
    run of enforcing the profile (C(ApplyProfile) with DRY_RUN; nothing written, polkit not
    asked).
  - C(would_break) is the verdict for the host, the one C(fsgatectl apply NAME) and
    M(fsgate.fsgate.fsgate_profile) go by; enforcing the profile now would deny a module that
    was used while it was observed.
  - Changes nothing; runs in check mode too. C(playbooks/fleet_report.yml) of this collection
    gathers it from every host into one report.
author:
  - fsgate developers
options:
  profile:
    description:
      - The profile. Default, the one being observed; when none is and none is given, only
        C(observation) is returned (C(profile) empty).
    type: str
  hard:
    description:
      - Plan the enforcement as C(fsgate_profile) with C(hard) would.
    type: bool
    default: false
'''

EXAMPLES = r'''
- name: What observing cis recorded
  fsgate.fsgate.fsgate_observation_info:
    profile: cis
  register: obs

- name: Hosts where enforcing cis would break something
  ansible.builtin.debug:
    msg: "{{ obs.would_break_text }}"
  when: obs.would_break
'''

RETURN = r'''
profile:
  description: The profile looked at (empty when none was given and none is observed).
  returned: always
  type: str
observing:
  description: Whether this profile is being observed now.
  returned: always
  type: bool
observation:
  description: The observation on now (of any profile), as GetObservation gives it; C(profile) empty when none is.
  returned: always
  type: dict
  contains:
    profile: {description: The profile observed, or empty., type: str}
    since_usec: {description: When it began, microseconds since the epoch., type: int}
    modules: {description: The modules observed., type: list, elements: str}
compliant:
  description: The audit's verdict (C(fsgatectl audit)), every module of the profile denied as it requires.
  returned: when profile is not empty
  type: bool
noncompliant:
  description: The profile's modules that are not compliant.
  returned: when profile is not empty
  type: list
  elements: str
observed:
  description:
    - C(fsgatectl --json audit)'s C(observed) part, unchanged - C(profile), C(since_usec)
      (0 when the profile is not observed now, then all the journal holds for it), C(incomplete),
      C(modules) (C(module), C(types), C(count), C(first_usec), C(last_usec), C(last_device),
      C(last_uid), C(last_user), C(last_session), C(last_command)).
  returned: when profile is not empty
  type: dict
would_deny:
  description: The modules enforcing the profile now would deny (its dry run).
  returned: when profile is not empty
  type: list
  elements: str
would_break:
  description: Whether enforcing the profile now would deny a module that was used while it was observed.
  returned: always
  type: bool
would_break_modules:
  description: Those modules, as in C(observed.modules).
  returned: always
  type: list
  elements: dict
would_break_types:
  description: The filesystem types asked for through them, sorted.
  returned: always
  type: list
  elements: str
would_break_text:
  description: C(would_break_modules) as C(fsgatectl apply) lists them, one line each.
  returned: always
  type: list
  elements: str
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.fsgate.fsgate.plugins.module_utils.fsgate import (FLAG_HARD, Fsgate, FsgateError,
                                                                           describe_use)


def main():
    module = AnsibleModule(argument_spec=dict(profile=dict(type='str'), hard=dict(type='bool', default=False)),
                           supports_check_mode=True)
    fs = Fsgate(module)
    flags = FLAG_HARD if module.params['hard'] else 0
    result = dict(changed=False, profile='', observing=False,
                  observation=dict(profile='', since_usec=0, modules=[]),
                  would_break=False, would_break_modules=[], would_break_types=[], would_break_text=[])
    try:
        ob = fs.observation()
        if ob:
            result['observation'] = ob
        name = module.params['profile'] or (ob['profile'] if ob else '')
        if not name:
            module.exit_json(**result)
        audit = fs.audit(name)
        modules = audit.get('modules', [])
        observed = audit.get('observed') or dict(profile=name, since_usec=0, incomplete=False, modules=[])
        would_deny = [c['module'] for c in fs.plan(name, flags)]
        observing = bool(ob and ob['profile'] == name)
        # The verdict of fsgatectl apply: only an observation on now counts.
        used = [m for m in observed.get('modules', []) if m.get('module') in would_deny] if observing else []
        types = sorted(set(t for m in used for t in m.get('types', '').split()))
        result.update(profile=name, observing=observing, compliant=bool(audit.get('compliant')),
                      noncompliant=[m['module'] for m in modules if not m.get('compliant')],
                      observed=observed, would_deny=would_deny, would_break=bool(used),
                      would_break_modules=used, would_break_types=types,
                      would_break_text=[describe_use(m) for m in used])
    except FsgateError as e:
        fs.fail(e, **result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
