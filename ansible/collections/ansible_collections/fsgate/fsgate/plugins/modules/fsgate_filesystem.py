#!/usr/bin/python
# SPDX-License-Identifier: LGPL-2.1-or-later

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: fsgate_filesystem
short_description: Allow, deny or reset the autoloading of a filesystem module with fsgate
version_added: "0.1.0"
description:
  - Decides whether the kernel may load a filesystem module on its own (when something
    mounts, or probes, a filesystem of that type), through the fsgate service C(fsgated) on
    the managed host.
  - Talks to C(org.fsgate.fsgate1) on the system bus with C(busctl) (part of systemd), so a
    managed host needs nothing besides systemd and fsgate itself. C(DBUS_SYSTEM_BUS_ADDRESS)
    is honoured.
  - fsgated writes C(/etc/modprobe.d/60-blacklist_fs-MODULE.conf) (or the same name in
    C(/run/modprobe.d) with C(runtime)), openSUSE's file name. It never overwrites or
    removes a file it did not write; the task then fails with
    C(org.fsgate.fsgate1.Error.ForeignConfig) and the file's name.
  - The task reports C(changed) only when the module's state, origin or deciding file
    changed (or it was loaded, with C(load)).
author:
  - fsgate developers
options:
  name:
    description:
      - A filesystem module (C(freevxfs)) or a filesystem type it serves (C(vxfs)).
    type: str
    required: true
  state:
    description:
      - C(allowed) lets the kernel autoload the module (a mask over a vendor deny file).
      - C(denied) blocks autoloading; an explicit C(modprobe MODULE) by root still works,
        unless C(hard).
      - C(default) removes fsgate's own override (in C(/etc), or in C(/run) with
        C(runtime)), so the vendor's files decide again.
    type: str
    required: true
    choices: [allowed, denied, default]
  runtime:
    description:
      - Change C(/run/modprobe.d) only, so that the change lasts until the next boot.
      - A file of the same name in C(/etc/modprobe.d) takes precedence; fsgated then refuses
        with C(org.fsgate.fsgate1.Error.Overridden).
    type: bool
    default: false
  load:
    description:
      - With C(state=allowed), also load the module now, unless it is loaded already.
    type: bool
    default: false
  for:
    description:
      - With C(state=allowed), a grant instead of an allow. The module is loaded now for this
        many seconds (C(600)) or this span (C(90s), C(10min), C(2h), C(1d); at most 7 days),
        the configuration is not changed, and fsgated unloads the module once the time is up
        and nothing uses it (C(fsgatectl allow --for)). polkit action
        C(org.fsgate.fsgate1.grant).
      - Idempotent by the module. While a grant of it is active, or when nothing is to be
        granted (the module is allowed already, built in, or loaded without a grant), nothing
        is done. C(state=denied) ends an active grant.
      - Not with C(runtime) or C(load).
    type: str
  force:
    description:
      - With C(state=denied), deny even a module that is loaded or mounted now. Without it
        fsgated refuses with C(org.fsgate.fsgate1.Error.InUse), because the next boot could
        not mount what this system uses.
    type: bool
    default: false
  hard:
    description:
      - With C(state=denied), a hard deny, as audits (CIS, DISA STIG, OpenSCAP's
        C(kernel_module_MODULE_disabled)) want it; fsgated adds C(install MODULE /bin/false),
        so an explicit C(modprobe MODULE) fails too, and blocked mounts are still reported.
      - C(false) with C(state=denied) turns fsgate's own hard deny into a soft one (fsgated then
        asks for the allow authorization). Left out, an existing hard deny stays hard; a plain
        C(state=denied) never weakens one. A hard deny written by someone else (a CIS role's
        C(install MODULE /bin/true)) counts as hard.
    type: bool
attributes:
  check_mode:
    support: full
    details: Reads the module's entry and predicts the change; makes no changing call.
  diff_mode:
    support: full
    details: The entry's state, origin, deciding file and loaded flag before and after.
notes:
  - Changes are authorized by polkit on the managed host. As root (C(become=true)) no
    authorization is asked; other users need polkit rules that allow the
    C(org.fsgate.fsgate1.allow), C(.deny) or C(.load) action, otherwise the task fails with
    C(org.freedesktop.DBus.Error.AccessDenied). No password is ever prompted for.
  - A change in modprobe.d reaches an initramfs only when it is regenerated.
  - In check mode a reset's result is not known (the vendor's files decide); the predicted
    entry says so.
requirements:
  - systemd 246 or newer (its busctl) on the managed host, and fsgated (activatable on the system bus).
seealso:
  - module: fsgate.fsgate.fsgate_filesystems_info
'''

EXAMPLES = r'''
- name: Let the kernel autoload hfs (for Mac disks), from now on
  fsgate.fsgate.fsgate_filesystem:
    name: hfs
    state: allowed
  become: true

- name: Block freevxfs (by its type name) until the next boot only
  fsgate.fsgate.fsgate_filesystem:
    name: vxfs
    state: denied
    runtime: true
  become: true

- name: Block squashfs even though it is in use now
  fsgate.fsgate.fsgate_filesystem:
    name: squashfs
    state: denied
    force: true
  become: true

- name: Make cramfs impossible to load at all (CIS 1.1.1.1)
  fsgate.fsgate.fsgate_filesystem:
    name: cramfs
    state: denied
    hard: true
  become: true

- name: Load hfs for ten minutes to copy a Mac disk, then unload it again
  fsgate.fsgate.fsgate_filesystem:
    name: hfs
    state: allowed
    for: 10min
  become: true

- name: Go back to the distribution's default for hfs
  fsgate.fsgate.fsgate_filesystem:
    name: hfs
    state: default
  become: true
'''

RETURN = r'''
filesystem:
  description:
    - The module's entry after the task, as fsgated reports it (predicted in check mode).
    - When fsgated refuses the change, the entry as it was (and still is).
  returned: success, and when fsgated refuses the change
  type: dict
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
      sample: denied
    origin:
      description: What decides, one of C(default), C(vendor), C(local), C(runtime), C(admin), C(cmdline).
      type: str
      sample: admin
    source:
      description: The file that decides (empty for C(default) and C(cmdline)).
      type: str
      sample: /etc/modprobe.d/60-blacklist_fs-freevxfs.conf
    available:
      description: A module file exists for the kernel.
      type: bool
    builtin:
      description: Compiled into the kernel (cannot be denied).
      type: bool
    loaded:
      description: Loaded now.
      type: bool
    mounted:
      description: One of its types is mounted now.
      type: bool
    hard:
      description: An install command refuses explicit loads too (a hard deny, whoever wrote it).
      type: bool
grant:
  description:
    - With C(for), the active grant of the module after the task (C(id), C(until) as
      ISO 8601 UTC); empty when there is none.
  returned: with for
  type: dict
  sample: {id: 0123456789abcdef0123456789abcdef, until: "2026-12-07T01:02:03Z"}
dbus_calls:
  description:
    - The changing calls made, e.g. C(Allow(hfs, 0x0)), C(Grant(hfs, 600s)); empty in check mode. A call that
      changed nothing is listed too (fsgated accepts a no-op silently).
  returned: always
  type: list
  elements: str
  sample: ["Deny(freevxfs, 0x1)"]
dbus_error:
  description: The D-Bus error name of a failed call (empty if busctl got no reply at all).
  returned: failure
  type: str
  sample: org.fsgate.fsgate1.Error.ForeignConfig
dbus_message:
  description: The message of that error.
  returned: failure
  type: str
'''

import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.fsgate.fsgate.plugins.module_utils.fsgate import (
    FLAG_FORCE, FLAG_HARD, FLAG_LOAD_NOW, FLAG_RUNTIME, FLAG_SOFT, Fsgate, FsgateError, target_file)

# What `changed` and the diff look at. `mounted` (and `loaded`, unless we load) can change
# under us for reasons of their own.
COMPARED = ('state', 'origin', 'source', 'hard')


def get(fsgate, name):
    """The entry plus whether it is a hard deny, from Describe (a{sv})."""
    e = fsgate.get(name)
    d = fsgate.call('Describe', 's', e['module'])[0]
    e['hard'] = bool(d.get('hard', {}).get('data', False))
    return e


def plan(before, state, runtime, load, force, hard=None):
    """The call to make, and the predicted entry after it, judged from the entry before."""
    flags = FLAG_RUNTIME if runtime else 0
    target = target_file(before['module'], runtime)
    after = dict(before)
    origin = 'runtime' if runtime else 'admin'
    if state == 'allowed':
        if load and not before['loaded'] and not before['builtin']:
            flags |= FLAG_LOAD_NOW
            after['loaded'] = True
        if before['state'] == 'denied':
            after.update(state='allowed', origin=origin, source=target)
        return 'Allow', flags, after
    if state == 'denied':
        if force:
            flags |= FLAG_FORCE
        if hard:
            flags |= FLAG_HARD
        elif hard is False:
            flags |= FLAG_SOFT
        # Like fsgated: a denial that outlives a reboot (or any denial, for a runtime deny)
        # leaves nothing to add, unless it is to become hard, or fsgate's own hard one soft
        # (asked for with hard=false only: left out, a hard deny stays).
        if before['state'] != 'denied' or (not runtime and before['origin'] == 'runtime') or \
                (hard and not before['hard']) or (hard is False and before['hard'] and before['source'] == target):
            after.update(state='denied', origin=origin, source=target,
                         hard=bool(hard) or (hard is None and before['hard'] and before['state'] == 'denied'))
        return 'Deny', flags, after
    # default: only fsgate's own file in the target directory is removed.
    if before['source'] == target:
        after.update(state='(as the vendor files decide)', origin='(vendor or default)', source='')
    return 'Reset', flags, after


SPAN_UNITS = (('min', 60), ('s', 1), ('h', 3600), ('d', 86400), ('', 1))


def span_seconds(text):
    """"600", "90s", "10min", "2h", "1d" as seconds, or None for anything else."""
    text = text.strip()
    for suffix, factor in SPAN_UNITS:
        number = text[:len(text) - len(suffix)] if suffix and text.endswith(suffix) else (text if not suffix else None)
        if number and number.isdigit():
            return int(number) * factor
    return None


def active_grant(fsgate, module):
    """The module's active grant with the latest end, as (id, until in µs), or None."""
    grants = [g for g in fsgate.get_property('Grants') if g[1] == module]
    return max(((g[0], g[4]) for g in grants), key=lambda g: g[1]) if grants else None


def grant_view(g):
    if not g:
        return {}
    return dict(id=g[0], until=time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(g[1] // 1000000)))


def run_grant(module, fsgate, before, seconds):
    """state=allowed with for: a Grant, unless one is active or nothing is to be granted."""
    existing = active_grant(fsgate, before['module'])
    nothing = before['builtin'] or before['state'] != 'denied' or (before['loaded'] and not existing)
    changed = not existing and not nothing
    if changed and not module.check_mode:
        label = 'Grant(%s, %ds)' % (before['module'], seconds)
        fsgate.changes.append(label)
        try:
            fsgate.call('Grant', 'sa{sv}t', before['module'], 1, 'seconds', 't', seconds, 0, label=label)
        except FsgateError as e:
            fsgate.fail(e, filesystem=before, dbus_calls=fsgate.changes)
        existing = active_grant(fsgate, before['module'])
    after = before if module.check_mode else get(fsgate, before['module'])
    if changed and module.check_mode:
        after = dict(before, loaded=True)
    module.exit_json(changed=changed, filesystem=after, grant=grant_view(existing), dbus_calls=fsgate.changes,
                     diff=dict(before=view(before, True), after=view(after, True)))


def view(e, with_loaded):
    return dict((k, e[k]) for k in COMPARED + (('loaded',) if with_loaded else ()))


def main():
    module = AnsibleModule(
        argument_spec=dict(
            name=dict(type='str', required=True),
            state=dict(type='str', required=True, choices=['allowed', 'denied', 'default']),
            runtime=dict(type='bool', default=False),
            load=dict(type='bool', default=False),
            force=dict(type='bool', default=False),
            hard=dict(type='bool'),
            # "for" is a keyword in Python, not in a task.
            **{'for': dict(type='str')}
        ),
        supports_check_mode=True,
    )
    p = module.params
    if p['load'] and p['state'] != 'allowed':
        module.fail_json(msg='load=true needs state=allowed')
    if p['force'] and p['state'] != 'denied':
        module.fail_json(msg='force=true needs state=denied')
    if p['hard'] is not None and p['state'] != 'denied':
        module.fail_json(msg='hard needs state=denied')
    seconds = None
    if p['for'] is not None:
        seconds = span_seconds(p['for'])
        if p['state'] != 'allowed' or p['runtime'] or p['load']:
            module.fail_json(msg='for needs state=allowed, without runtime and load')
        if seconds is None or not 1 <= seconds <= 7 * 86400:
            module.fail_json(msg='for: %r is no span from 1 second to 7 days (600, 90s, 10min, 2h, 1d)' % p['for'])

    fsgate = Fsgate(module)
    try:
        before = get(fsgate, p['name'])
    except FsgateError as e:
        fsgate.fail(e, dbus_calls=fsgate.changes)

    if seconds is not None:
        run_grant(module, fsgate, before, seconds)

    method, flags, predicted = plan(before, p['state'], p['runtime'], p['load'], p['force'], p['hard'])
    with_loaded = bool(flags & FLAG_LOAD_NOW)
    # A Deny or Reset ends the module's grants: a change even where the files stay as they are.
    try:
        ends_grant = method != 'Allow' and active_grant(fsgate, before['module']) is not None
    except FsgateError:
        ends_grant = False      # an older fsgated: no grants
    if module.check_mode:
        after = predicted
    else:
        try:
            fsgate.change(method, before['module'], flags)
            after = get(fsgate, before['module'])
        except FsgateError as e:
            fsgate.fail(e, filesystem=before, dbus_calls=fsgate.changes)

    changed = view(before, with_loaded) != view(after, with_loaded) or ends_grant
    label = 'fsgate: %s' % before['module']
    module.exit_json(
        changed=changed,
        filesystem=after,
        dbus_calls=fsgate.changes,
        diff=dict(before=view(before, with_loaded), after=view(after, with_loaded),
                  before_header=label, after_header=label),
    )


if __name__ == '__main__':
    main()
