#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Issue 3, scenario 10: for every filesystem the Debian kernel has, the state fsgated
# reports agrees with what the kernel does on a real mount attempt (mount -t TYPE of the
# blank disk: allowed = the module gets loaded; denied = "unknown filesystem type" and the
# module stays out). Checked twice: with the vendor defaults, and with every module flipped
# (each denied one allowed, each allowed one denied), so that every module is seen both ways.
# /etc stays on tmpfs, so that nothing (ext4 for an /etc disk) is loaded before the checks.
# vm-boots: 1
# vm-etc: volatile

set -eu
. "$FSGATE_VM_LIB"

KDIR=/lib/modules/$(uname -r)

step "the list covers every filesystem type of the kernel"
assert_bus_activated
fs_list >/tmp/list
info "$(wc -l </tmp/list) entries"
awk '$1 == "alias" && $2 ~ /^fs-/ {sub(/^fs-/, "", $2); print $2, $3}' $KDIR/modules.alias | sort -u >/tmp/aliases
n_alias=$(wc -l </tmp/aliases)
while read -r type mod; do
        awk -v m="$mod" -v t="$type" '$1 == m && ("," $9 ",") ~ ("," t ",") {f = 1} END {exit !f}' /tmp/list ||
                check_failed "fs-$type -> $mod (modules.alias) is not in ListFilesystems as a type of $mod"
done </tmp/aliases
pass "checked $n_alias fs-* aliases of modules.alias"
# Built-in filesystems with an fs-* alias (Debian 6.1: debugfs, tracefs): kmod keeps these
# aliases in modules.builtin.modinfo (and its index modules.builtin.alias.bin).
tr '\0' '\n' <$KDIR/modules.builtin.modinfo | sed -n 's/^\([^.]*\)\.alias=fs-\(.*\)/\2 \1/p' | sort -u >/tmp/builtin
while read -r type mod; do
        awk -v m="$mod" '$1 == m && $6 == "true" {f = 1} END {exit !f}' /tmp/list ||
                check_failed "built-in filesystem $mod (fs-$type in modules.builtin.modinfo) is not listed as built in" \
                        "(GetFilesystem $type: $(fsg_call GetFilesystem s "$type" 2>&1 || true))"
done </tmp/builtin
pass "checked $(wc -l </tmp/builtin) built-in fs-* aliases"

# unload_new — take out whatever the last probe loaded (reverse order, so users go first).
unload_new() {
        for _pass in 1 2 3; do
                for _m in $(echo "$PROBE_NEW" | tr ' ' '\n' | tac); do
                        is_loaded "$_m" && modprobe -r "$_m" 2>/dev/null || true
                done
        done
}

# check_agreement WHAT — one mount attempt per type of every listed module; compares the
# kernel's verdict with the reported state.
check_agreement() {
        _agree=0 _skip=0
        fs_list >/tmp/list.now
        while read -r mod state origin source avail builtin loaded mounted types; do
                if [ "$types" = - ]; then
                        info "$mod: no filesystem type in this kernel ($state, available=$avail): nothing to mount"
                        _skip=$((_skip + 1))
                        continue
                fi
                for type in $(echo "$types" | tr , ' '); do
                        if [ "$builtin" = true ]; then
                                probe_mount "$type"
                                if [ "$PROBE_RESULT" = unknown ]; then
                                        check_failed "$type: built into the kernel, yet mount says: $PROBE_OUTPUT"
                                else
                                        _agree=$((_agree + 1))
                                fi
                                continue
                        fi
                        if is_loaded "$mod"; then
                                modprobe -r "$mod" 2>/dev/null || {
                                        info "$type ($mod): loaded and cannot be unloaded: the kernel cannot be asked"
                                        _skip=$((_skip + 1))
                                        continue
                                }
                        fi
                        probe_mount "$type"
                        if is_loaded "$mod"; then
                                kernel=allowed
                        elif [ "$PROBE_RESULT" = unknown ]; then
                                kernel=denied
                        else
                                kernel="? ($PROBE_RESULT: $PROBE_OUTPUT)"
                        fi
                        unload_new
                        if [ "$kernel" = "$state" ]; then
                                _agree=$((_agree + 1))
                                echo "    $type ($mod): $state, kernel agrees${PROBE_NEW:+ (loaded ${PROBE_NEW% })}"
                                continue
                        fi
                        if [ "$state" = allowed ] && [ "$kernel" = denied ]; then
                                # A module that cannot initialize here (efivarfs without EFI)
                                # fails an explicit load just the same: nothing to compare.
                                if _why=$(modprobe --ignore-install "$mod" 2>&1); then
                                        modprobe -r "$mod" 2>/dev/null || true
                                        check_failed "$type ($mod): reported allowed ($origin $source), but mount -t $type did not load it: $PROBE_OUTPUT"
                                else
                                        info "$type ($mod): reported allowed; the module does not load here at all ($_why): not comparable"
                                        _skip=$((_skip + 1))
                                fi
                                continue
                        fi
                        check_failed "$type ($mod): reported $state ($origin $source), kernel: $kernel"
                done
        done </tmp/list.now
        pass "$1: $_agree types agree, $_skip not comparable"
}

step "10: vendor defaults"
check_agreement "vendor defaults"

step "10: every module flipped"
awk '$5 == "true" && $6 == "false" && $9 != "-" {print $1, $2}' /tmp/list.now >/tmp/flip
while read -r mod state; do
        if [ "$state" = denied ]; then
                fsg_call Allow st "$mod" 0 >/dev/null || check_failed "Allow $mod failed"
        else
                fsg_call Deny st "$mod" 0 >/dev/null || check_failed "Deny $mod failed"
        fi
done </tmp/flip
fs_list >/tmp/list.flipped
while read -r mod state; do
        want=allowed
        [ "$state" = allowed ] && want=denied
        got=$(awk -v m="$mod" '$1 == m {print $2}' /tmp/list.flipped)
        [ "$got" = "$want" ] || check_failed "$mod: $state before the flip, expected $want after, got $got"
done </tmp/flip
pass "flipped $(wc -l </tmp/flip) modules: $(awk '$2 == "denied"' /tmp/flip | wc -l) allowed, $(awk '$2 == "allowed"' /tmp/flip | wc -l) denied"
check_agreement "flipped"

checks_done
