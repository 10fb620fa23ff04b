#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Check 10 of the VM suite (tests/vm/README.md): for every filesystem the Debian kernel has, the state fsgated
# reports agrees with what the kernel does on a real mount attempt (mount -t TYPE of the
# blank disk: allowed = the module gets loaded; denied = "unknown filesystem type" and the
# module stays out). Checked twice: with the vendor defaults, and with every module flipped
# (each denied one allowed, each allowed one denied), so that every module is seen both ways.
# /etc stays on tmpfs, so that nothing (ext4 for an /etc disk) is loaded before the checks.
# vm-boots: 1
# vm-etc: volatile
# vm-timeout: 600

set -eu
# shellcheck source=../guest/lib.sh
. "$FSGATE_VM_LIB"

KDIR=/lib/modules/$(uname -r)

step "the list covers every filesystem type of the kernel"
assert_bus_activated
fs_list >/tmp/list
info "$(wc -l </tmp/list) entries"
awk '$1 == "alias" && $2 ~ /^fs-/ {sub(/^fs-/, "", $2); print $2, $3}' $KDIR/modules.alias | sort -u >/tmp/aliases
n_alias=$(wc -l </tmp/aliases)
awk 'NR == FNR {n = split($9, t, ","); for (i = 1; i <= n; i++) have[$1 " " t[i]] = 1; next}
     !(($2 " " $1) in have)' /tmp/list /tmp/aliases >/tmp/aliases.missing
while read -r type mod; do
        check_failed "fs-$type -> $mod (modules.alias) is not in ListFilesystems as a type of $mod"
done </tmp/aliases.missing
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

# unload_new MODULE — take out MODULE and whatever else the last probe loaded: modprobe -r
# removes the module with its unused dependencies; rmmod what is left (newest first).
unload_new() {
        is_loaded "$1" && modprobe -r "$1" 2>/dev/null || true
        for _m in $PROBE_NEW; do
                is_loaded "$_m" && rmmod "$_m" 2>/dev/null || true
        done
}

# check_type TYPE MODULE STATE ORIGIN SOURCE BUILTIN — one mount attempt, compared with
# the reported state.
check_type() {
        type=$1 mod=$2 state=$3 origin=$4 source=$5 builtin=$6
        if [ "$builtin" = true ]; then
                probe_mount "$type"
                if [ "$PROBE_RESULT" = unknown ]; then
                        check_failed "$type: built into the kernel, yet mount says: $PROBE_OUTPUT"
                else
                        _agree=$((_agree + 1))
                fi
                return 0
        fi
        if is_loaded "$mod" && ! modprobe -r "$mod" 2>/dev/null; then
                info "$type ($mod): loaded and cannot be unloaded: the kernel cannot be asked"
                _skip=$((_skip + 1))
                return 0
        fi
        probe_mount "$type"
        if is_loaded "$mod"; then
                kernel=allowed
        elif [ "$PROBE_RESULT" = unknown ]; then
                kernel=denied
        else
                kernel="? ($PROBE_RESULT: $PROBE_OUTPUT)"
        fi
        unload_new "$mod"
        if [ "$kernel" = "$state" ]; then
                _agree=$((_agree + 1))
                echo "    $type ($mod): $state, kernel agrees${PROBE_NEW:+ (loaded ${PROBE_NEW% })}"
                return 0
        fi
        if [ "$state" = allowed ] && [ "$kernel" = denied ]; then
                # A module that cannot initialize here (efivarfs without EFI, xenfs outside
                # Xen) fails an explicit load just the same: nothing to compare.
                if _why=$(modprobe --ignore-install "$mod" 2>&1); then
                        modprobe -r "$mod" 2>/dev/null || true
                        check_failed "$type ($mod): reported allowed ($origin $source), but mount -t $type did not load it: $PROBE_OUTPUT"
                else
                        info "$type ($mod): reported allowed; the module does not load here at all ($_why): not comparable"
                        _skip=$((_skip + 1))
                fi
                return 0
        fi
        check_failed "$type ($mod): reported $state ($origin $source), kernel: $kernel"
}

# check_agreement WHAT — one mount attempt per type of every listed module.
check_agreement() {
        _agree=0 _skip=0
        fs_list >/tmp/list.now
        while read -r _mod _state _origin _source _avail _builtin _loaded _mounted _types; do
                if [ "$_types" = - ]; then
                        info "$_mod: no filesystem type in this kernel ($_state, available=$_avail): nothing to mount"
                        _skip=$((_skip + 1))
                        continue
                fi
                _rest=$_types
                while [ -n "$_rest" ]; do
                        _type=${_rest%%,*}
                        case $_rest in *,*) _rest=${_rest#*,} ;; *) _rest= ;; esac
                        check_type "$_type" "$_mod" "$_state" "$_origin" "$_source" "$_builtin"
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
