#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# build-vm-appliance.sh — the libguestfs appliance Open safely's VM route boots in the tests:
# service/fsgate-vm-appliance (what the package ships) over the Debian kernel fetch-kernel.sh
# caches, into ${FSGATE_CACHE:-$HOME/.cache/fsgate}/vm, keyed there on the kernel and the
# libguestfs/supermin versions (a second call with the same inputs is instant). Started early
# by tools/test-all; tests/bus/test-open-vm.py calls it too and waits on the same lock.
#
# Prints VM_CACHE=<dir> (FSGATE_CACHE for fsgated: the one cache, read by both the same way). Exit 77: supermin or guestmount missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

for tool in supermin guestmount; do
        command -v "$tool" >/dev/null || { echo "build-vm-appliance: $tool missing (tools/install-deps)" >&2; exit 77; }
done
eval "$("$here/fetch-kernel.sh")"
cache=${FSGATE_CACHE:-${HOME:?}/.cache/fsgate}
FSGATE_CACHE=$cache "$here/../../service/fsgate-vm-appliance" --kernel-root "$KROOT" --kernel-version "$KVER" >&2
echo "VM_CACHE=$cache"
