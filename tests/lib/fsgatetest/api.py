# SPDX-License-Identifier: LGPL-2.1-or-later
"""Values the tests read from the C sources instead of copying them: a limit or an id that
may change with the code, where a copy would only go stale. (What is public contract, the
names in names.py, is copied on purpose: a test must fail when the C spelling changes.)"""

import os
import re

SOURCE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

_DEFINE = re.compile(r'^\s*#\s*define\s+(\w+)\s+(.*?)\s*(?:/\*.*)?$')
_INTEGER = re.compile(r'^\(?\s*(?:U?INT\d+_C\()?\s*(0[xX][0-9a-fA-F]+|\d+)\s*\)?\s*(?:[uU]?[lL]{0,2})\s*\)?$')


def define(path, name):
    """The value of `#define NAME VALUE` in path (relative to the source tree): an int for an
    integer literal (decimal or hex, with or without UINT64_C() or a U/L suffix), a str for
    a string literal. Anything else (an expression) is refused: read it by hand."""
    with open(os.path.join(SOURCE_ROOT, path)) as f:
        for line in f:
            m = _DEFINE.match(line)
            if not m or m.group(1) != name:
                continue
            value = m.group(2)
            number = _INTEGER.match(value)
            if number:
                return int(number.group(1), 0)
            if len(value) >= 2 and value[0] == value[-1] == '"':
                return value[1:-1]
            raise ValueError(f'{path}: {name} is {value!r}, neither an integer nor a string literal')
    raise KeyError(f'{path} defines no {name}')
