# SPDX-License-Identifier: LGPL-2.1-or-later
"""The risk facts as data/risk's two files say them, read here on their own (not through the
C table the build generates from them): the oracle of test-risk and of the notifier's text."""

import os

from .util import CONFIG

RISK_KEYS = ('risk_title', 'risk_maintainers', 'risk_maintainers_section', 'risk_userns_mount', 'risk_deprecated',
             'risk_upstream', 'risk_upstream_source', 'risk_facts_source')


def _read_tsv(name):
    with open(os.path.join(CONFIG.source_root, 'data', 'risk', name)) as f:
        return [line.rstrip('\n').split('\t') for line in f if line.strip()]


def expected_facts():
    """{module: {key: value}}, the keys as Describe sends them."""
    rows = _read_tsv('kernel-facts.tsv')
    src = next(r for r in rows if r[0] == '#source')
    source = f'{src[1]} (Debian {src[2]} {src[3]})'
    facts = {}
    for r in rows:
        if r[0].startswith('#'):
            continue
        module, title, maintainers, section, userns, deprecated = (('' if v == '-' else v) for v in r)
        facts[module] = dict(risk_title=title, risk_maintainers=maintainers, risk_maintainers_section=section,
                             risk_userns_mount=userns == 'yes', risk_deprecated=deprecated, risk_upstream='',
                             risk_upstream_source='', risk_facts_source=source)
    for r in _read_tsv('curated.tsv'):
        if not r[0].startswith('#'):
            facts[r[0]].update(risk_upstream=r[1], risk_upstream_source=r[2])
    return facts


def expected_phrase(facts):
    """The notable facts in the words core/risk.c promises (org.fsgate.fsgate1(5)), "" if none."""
    m = facts['risk_maintainers']
    parts = []
    if not m:
        parts.append('no maintainer of its own')
    elif 'Orphan' in m:
        parts.append('orphaned upstream')
    elif 'Obsolete' in m:
        parts.append('obsolete upstream')
    elif 'Odd Fixes' in m:
        parts.append('little maintained (odd fixes)')
    if facts['risk_deprecated']:
        parts.append('deprecated')
    if facts['risk_upstream']:
        parts.append(facts['risk_upstream'])
    if facts['risk_userns_mount']:
        parts.append('any user can mount it in a user namespace')
    return '; '.join(parts)


def notify_risk_line(module):
    """What fsgate-notify's question adds for module, a line of its own: '\\nMODULE: PHRASE.' or
    '' (the choices say it with the module's title)."""
    facts = expected_facts().get(module)
    phrase = expected_phrase(facts) if facts else ''
    return f'\n{module}: {phrase}.' if phrase else ''
