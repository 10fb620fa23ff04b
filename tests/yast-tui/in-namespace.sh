#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# in-namespace.sh LOGDIR BINDIR TARGET STATUSFILE CMD [ARG...]
#
# Runs CMD (YaST) as root in a private mount namespace, so that it finds what an installed
# system gives it without anything being written to the host:
#   /var/log  is LOGDIR: YaST running as root logs to /var/log/YaST2/y2log, a hard-coded path
#   /usr/bin  also holds BINDIR's files (a read-only overlay): the built fsgatectl where the
#             module looks for it, /usr/bin/fsgatectl
#   /mnt      is TARGET when it is not empty: the installation target, where YaST's
#             Installation.destdir points during installation (Stage.initial)
#   /usr/share also holds $FSGATE_TUI_SHARE's files when that is set (a read-only overlay):
#             YaST2/locale, where YaST reads its catalogs (a fixed path in Yast::I18n)
# CMD's standard error goes to LOGDIR/stderr (the terminal belongs to the UI); its exit
# status is written to STATUSFILE once it has exited.
set -euo pipefail

if [[ ${1:-} != --inside ]]; then
        exec unshare --mount --propagation private -- "$0" --inside "$@"
fi
shift
[[ $# -ge 5 ]] || { echo "usage: ${0##*/} LOGDIR BINDIR TARGET STATUSFILE CMD [ARG...]" >&2; exit 2; }
log=$1 bin=$2 target=$3 status=$4
shift 4

mount --bind "$log" /var/log
mount -t overlay overlay -o "ro,lowerdir=$bin:/usr/bin" /usr/bin
[[ -z $target ]] || mount --bind "$target" /mnt
if [[ -n ${FSGATE_TUI_SHARE:-} ]]; then
        mount -t overlay overlay -o "ro,lowerdir=$FSGATE_TUI_SHARE:/usr/share" /usr/share
fi
unset FSGATE_TUI_SHARE

rc=0
"$@" 2>>/var/log/stderr || rc=$?
echo "$rc" >"$status"
