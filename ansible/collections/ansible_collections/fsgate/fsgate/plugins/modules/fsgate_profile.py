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
      - With C(state=present), also enforce a profile whose observation shows use of a module
        it would deny (as C(fsgatectl apply --force) does); that ends the observation.
    type: bool
    default: false
  state:
    description:
      - C(present) enforces the profile (denies its modules). When the profile is being
        observed and the journal shows that a module it would deny was used meanwhile, nothing
        is changed and C(on_observed_use) decides the task's outcome (unless C(force)).
        Enforcing ends the profile's observation.
      - C(observed) observes it instead (C(ApplyProfile) with OBSERVE, what
        C(fsgatectl apply --observe) does) and denies nothing; each autoload the profile would
        block goes ahead and fsgate's hook records it in the journal as "would block".
        Changed only when this profile was not being observed already (a running
        observation is left as it is, with its start time and evidence). Observing another
        profile replaces the observation of the one before.
      - C(unobserved) ends the observation of this profile, if one is on (C(StopObserving),
        what C(fsgatectl stop-observing) does), and denies nothing. An observation of another
        profile is left alone.
      - C(absent) undoes the profile (C(UndoProfile), what C(fsgatectl undo) does), resetting
        exactly the deny files the profile's apply wrote and nobody changed since; a module
        whose file an admin edited or denied again by hand is left alone and returned with
        change C(kept-edited) or C(kept-by-hand). C(hard) and C(force) do not apply to it.
      - Site profiles (C(/etc/fsgate/profiles/NAME.profile) on the managed host, with
        C(Include=)) are applied, observed and undone as the shipped ones; one named like a
        shipped one wins.
    type: str
    choices: [present, absent, observed, unobserved]
    default: present
  on_observed_use:
    description:
      - With C(state=present) and without C(force), when the profile's observation shows use
        of a module it would deny. C(fail) fails the task with the evidence
        (C(observed_use), and C(dbus_error) C(org.fsgate.fsgate1.Error.ObservedUse), the error
        C(fsgatectl apply) gives). C(skip) leaves the host as it is (still observed) and
        reports the task skipped, with the reason in C(msg) and the evidence in
        C(observed_use). In check mode the same is predicted.
      - The evidence is read with C(fsgatectl --json audit NAME) on the managed host, which
        reads the journal (C(FSGATE_JOURNAL_DIR) when set).
    type: str
    choices: [fail, skip]
    default: fail
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

- name: Observe CIS first; nothing is denied, what it would block is recorded
  fsgate.fsgate.fsgate_profile:
    name: cis
    state: observed

- name: Later, enforce it where nothing it denies was used; leave the other hosts observed
  fsgate.fsgate.fsgate_profile:
    name: cis
    on_observed_use: skip

- name: End the observation without enforcing
  fsgate.fsgate.fsgate_profile:
    name: cis
    state: unobserved
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
      description: C(deny), C(deny-hard), or C(observe) with C(state=observed); with C(state=absent) C(reset), or C(kept-edited) or C(kept-by-hand) (left alone).
      type: str
    file: {description: The file fsgated wrote., type: str}
observation:
  description:
    - The observation on after the task (before it, in check mode), as C(GetObservation) gives
      it; C(profile) is empty when none is on.
  returned: always
  type: dict
  contains:
    profile: {description: The profile observed, or empty., type: str}
    since_usec: {description: When the observation began (microseconds since the epoch)., type: int}
    modules: {description: The modules observed., type: list, elements: str}
observation_ended:
  description: Whether the task ended an observation of this profile (enforcing it, or C(unobserved)).
  returned: always
  type: bool
observed_use:
  description:
    - With C(state=present) on a host where the profile is observed, the modules it would deny
      that were used while it was observed, as in C(fsgatectl --json audit)'s C(observed.modules)
      (C(module), C(types), C(count), C(first_usec), C(last_usec), C(last_device), C(last_uid),
      C(last_user), C(last_session), C(last_command)); each said in a line in C(observed_use_text).
  returned: always
  type: list
  elements: dict
observed_use_text:
  description: C(observed_use) as C(fsgatectl apply) lists it, one line per module.
  returned: always
  type: list
  elements: str
skipped:
  description: True when C(on_observed_use=skip) left the host as it was; C(msg) says why.
  returned: when skipped
  type: bool
'''

import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.fsgate.fsgate.plugins.module_utils.fsgate import (FLAG_DRY_RUN, FLAG_FORCE, FLAG_HARD,
                                                                           FLAG_OBSERVE, Fsgate, FsgateError,
                                                                           describe_use)

OBSERVED_USE = 'org.fsgate.fsgate1.Error.ObservedUse'
NO_OBSERVATION = dict(profile='', since_usec=0, modules=[])


def utc(usec):
    return time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(int(usec) // 1000000))


def changes_of(data):
    return [dict(module=m, change=c, file=f) for m, c, f in (data[0] if data else [])]


def diff_of(changes):
    return dict(before='', after=''.join('%s %s %s\n' % (c['change'], c['module'], c['file']) for c in changes))


def observe(module, fs, name, result):
    """state=observed."""
    before = fs.observation()
    if before and before['profile'] == name:
        module.exit_json(changed=False, observation=before, **result)
    flags = FLAG_OBSERVE | (FLAG_DRY_RUN if module.check_mode else 0)
    changes = changes_of(fs.call('ApplyProfile', 'st', name, flags))
    after = before if module.check_mode else fs.observation()
    changed = bool(changes) or bool(after and after['profile'] == name) or module.check_mode
    result.update(changes=changes)
    module.exit_json(changed=changed, observation=after or NO_OBSERVATION, diff=diff_of(changes), **result)


def unobserve(module, fs, name, result):
    """state=unobserved."""
    before = fs.observation()
    if not before or before['profile'] != name:
        module.exit_json(changed=False, observation=before or NO_OBSERVATION, **result)
    if not module.check_mode:
        fs.stop_observing()
    after = before if module.check_mode else fs.observation()
    result.update(observation_ended=True,
                  diff=dict(before='observing %s\n' % name, after=''))
    module.exit_json(changed=True, observation=after or NO_OBSERVATION, **result)


def enforce(module, fs, name, flags, result):
    """state=present: the observation's evidence first, as fsgatectl apply does."""
    p = module.params
    before = fs.observation()
    if before and before['profile'] == name:
        used = fs.observed_use(name, flags)
        result.update(observed_use=used, observed_use_text=[describe_use(m) for m in used])
        if used and not p['force']:
            why = ('while profile %s was observed (since %s), %d module%s it would now deny %s used: %s'
                   % (name, utc(before['since_usec']), len(used), '' if len(used) == 1 else 's',
                      'was' if len(used) == 1 else 'were', '; '.join(result['observed_use_text'])))
            if p['on_observed_use'] == 'skip':
                module.exit_json(changed=False, skipped=True, observation=before,
                                 msg='fsgate: not enforced (on_observed_use=skip): %s. The host is left as it '
                                     'was, still observed.' % why, **result)
            module.fail_json(changed=False, observation=before, dbus_error=OBSERVED_USE,
                             dbus_message='Nothing was changed: ' + why,
                             msg='fsgate: %s: nothing was changed: %s. Enforcing profile %s would block them; '
                                 'to enforce it all the same: force: true' % (OBSERVED_USE, why, name), **result)
    if module.check_mode:
        flags |= FLAG_DRY_RUN
    changes = changes_of(fs.call('ApplyProfile', 'st', name, flags))
    after = before if module.check_mode else fs.observation()
    ended = bool(before and before['profile'] == name and not module.check_mode and
                 not (after and after['profile'] == name))
    result.update(changes=changes, observation_ended=ended)
    module.exit_json(changed=bool(changes) or ended, observation=after or NO_OBSERVATION,
                     diff=diff_of(changes), **result)


def undo(module, fs, name, result):
    """state=absent: exactly what the profile's apply wrote, as it wrote it."""
    changes = changes_of(fs.call('UndoProfile', 'st', name, FLAG_DRY_RUN if module.check_mode else 0))
    result.update(changes=changes)
    module.exit_json(changed=any(not c['change'].startswith('kept-') for c in changes), diff=diff_of(changes),
                     **result)


def main():
    module = AnsibleModule(
        argument_spec=dict(name=dict(type='str', required=True),
                           hard=dict(type='bool', default=False),
                           force=dict(type='bool', default=False),
                           state=dict(type='str', default='present',
                                      choices=['present', 'absent', 'observed', 'unobserved']),
                           on_observed_use=dict(type='str', default='fail', choices=['fail', 'skip'])),
        supports_check_mode=True)
    fs = Fsgate(module)
    p = module.params
    flags = (FLAG_HARD if p['hard'] else 0) | (FLAG_FORCE if p['force'] else 0)
    result = dict(changes=[], observation_ended=False, observed_use=[], observed_use_text=[])
    try:
        if p['state'] == 'observed':
            observe(module, fs, p['name'], result)
        elif p['state'] == 'unobserved':
            unobserve(module, fs, p['name'], result)
        elif p['state'] == 'absent':
            undo(module, fs, p['name'], result)
        else:
            enforce(module, fs, p['name'], flags, result)
    except FsgateError as e:
        fs.fail(e, changed=False, **result)


if __name__ == '__main__':
    main()
