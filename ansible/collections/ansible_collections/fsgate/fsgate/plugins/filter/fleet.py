# SPDX-License-Identifier: LGPL-2.1-or-later
"""Filters that turn every host's fsgate_observation_info result into one fleet report.

fleet_report(hostvars, hosts, var='fsgate_observation', profile='') -> dict
    {"profile", "generated_usec", "summary": {"hosts", "would_break", "clean", "errors"},
     "hosts": [{"host", "status" (would-break | clean | not-observed | error), "profile",
                "observing", "since_usec", "compliant", "would_break", "would_break_types",
                "would_break_modules": [audit's observed entries], "error"}]}
    hosts in the order given; a host whose result is missing, failed or unreachable is an
    "error" row with the reason.
fleet_table(report) -> str
    The same as a plain text table, one row per host and module that would break.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import time

from ansible.errors import AnsibleFilterError


def _utc(usec):
    if not usec:
        return '-'
    return time.strftime('%Y-%m-%d %H:%M', time.gmtime(int(usec) // 1000000))


def _result(hostvars, host, var):
    try:
        hv = hostvars[host]
    except KeyError:
        return None
    try:
        return hv.get(var) if hasattr(hv, 'get') else hv[var]
    except Exception:  # an undefined variable of that host
        return None


def _row(host, r, profile):
    row = dict(host=host, status='error', profile=profile, observing=False, since_usec=0, compliant=None,
               would_break=False, would_break_types=[], would_break_modules=[], error='')
    if not isinstance(r, dict) or not r:
        row['error'] = 'no result (the host was not reached, or the task did not run)'
        return row
    if r.get('unreachable') or r.get('failed') or r.get('skipped'):
        row['error'] = str(r.get('msg') or ('unreachable' if r.get('unreachable') else 'failed'))
        return row
    obs = r.get('observation') or {}
    row.update(profile=r.get('profile') or profile, observing=bool(r.get('observing')),
               since_usec=int(obs.get('since_usec') or 0) if r.get('observing') else 0,
               compliant=r.get('compliant'), would_break=bool(r.get('would_break')),
               would_break_types=list(r.get('would_break_types') or []),
               would_break_modules=list(r.get('would_break_modules') or []))
    if not row['profile']:
        row['status'] = 'not-observed'
    elif row['would_break']:
        row['status'] = 'would-break'
    elif row['observing']:
        row['status'] = 'clean'
    else:
        row['status'] = 'not-observed'
    return row


def fleet_report(hostvars, hosts, var='fsgate_observation', profile=''):
    if not isinstance(hosts, (list, tuple)):
        raise AnsibleFilterError('fleet_report: hosts must be a list of inventory names')
    rows = [_row(h, _result(hostvars, h, var), profile) for h in hosts]
    profiles = sorted(set(r['profile'] for r in rows if r['profile']))
    return dict(profile=profile or (profiles[0] if len(profiles) == 1 else ''),
                generated_usec=int(time.time() * 1000000),
                summary=dict(hosts=len(rows),
                             would_break=[r['host'] for r in rows if r['status'] == 'would-break'],
                             clean=[r['host'] for r in rows if r['status'] == 'clean'],
                             not_observed=[r['host'] for r in rows if r['status'] == 'not-observed'],
                             errors=[r['host'] for r in rows if r['status'] == 'error']),
                hosts=rows)


def _who(m):
    uid = int(m.get('last_uid', -1))
    if uid < 0:
        return '-'
    return '%s (uid %d)' % (m['last_user'], uid) if m.get('last_user') else 'uid %d' % uid


def fleet_table(report):
    head = ('HOST', 'PROFILE', 'OBSERVED SINCE', 'COMPLIANT', 'VERDICT', 'MODULE', 'TYPES', 'COUNT',
            'LAST USE (UTC)', 'LAST USER', 'LAST DEVICE')
    lines = []
    for r in report.get('hosts', []):
        compliant = '-' if r.get('compliant') is None else ('yes' if r['compliant'] else 'no')
        base = (r['host'], r.get('profile') or '-', _utc(r.get('since_usec')), compliant, r['status'])
        if r['status'] == 'error':
            lines.append(base + ('-',) * 6)
            continue
        mods = r.get('would_break_modules') or []
        if not mods:
            lines.append(base + ('-',) * 6)
        for m in mods:
            lines.append(base + (m.get('module', '?'), ','.join((m.get('types') or '-').split()),
                                 str(m.get('count', 0)), _utc(m.get('last_usec')), _who(m),
                                 m.get('last_device') or '-'))
    widths = [max(len(x[i]) for x in [head] + lines) for i in range(len(head))]
    out = ['  '.join(c.ljust(w) for c, w in zip(x, widths)).rstrip() for x in [head] + lines]
    s = report.get('summary', {})
    prof = report.get('profile') or 'the profile'
    out.append('')
    out.append('%d of %d hosts would break if %s were enforced%s' % (
        len(s.get('would_break', [])), s.get('hosts', 0), prof,
        ': ' + ', '.join(s['would_break']) if s.get('would_break') else '.'))
    if s.get('errors'):
        out.append('Not reported (see report.json): %s' % ', '.join(s['errors']))
        for r in report.get('hosts', []):
            if r['status'] == 'error':
                out.append('  %s: %s' % (r['host'], r.get('error', '')))
    return '\n'.join(out) + '\n'


class FilterModule(object):
    def filters(self):
        return dict(fleet_report=fleet_report, fleet_table=fleet_table)
