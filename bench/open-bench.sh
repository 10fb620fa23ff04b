#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The guest's half of bench/run-open-bench (a benchmark, not a test: it asserts no timing and
# is not in the meson test list). Run in the VM suite's guest by tests/vm/run-scenario with
# --data DIR, where DIR holds "params" (ROUNDS=N) and, under root/, the drivers the image
# lacks with their libraries (copied in without replacing anything the image has).
#
# One image tree (a few MB of incompressible files in two levels of directories) as squashfs
# and as ext4, on an ext4 scratch disk. Per route whose driver is in the guest, a warm-up and
# then ROUNDS rounds, each of them:
#   open    Open safely: `fsgatectl open IMAGE` (fsgated, root here, runs the driver in its
#           own sandbox: the in-process route of service/bus-open.c, not a transient unit) to
#           the first listing of the mountpoint; the driver's VmRSS then; a read of every
#           file; the driver's VmRSS and VmHWM after it; `fsgatectl close`.
#   kernel  `mount -o ro,loop IMAGE` to the first listing; the same read; umount.
# Caches are dropped before each mount and each read, so both read the medium. Each
# measurement is one line `OPENBENCH {json}` on the console, which run-open-bench reads.
# vm-boots: 1
# vm-timeout: 1200

# shellcheck shell=bash
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@" # $EPOCHREALTIME: no fork to read the clock
set -eu
# shellcheck source=../tests/vm/guest/lib.sh
. "$FSGATE_VM_LIB"

DATA=/fsgate-vm/data
ROUNDS=10
[ -f "$DATA/params" ] && . "$DATA/params"
BENCH=/bench
TREE=/tmp/open-bench-tree

# usec — the clock in microseconds.
usec() {
        local t=$EPOCHREALTIME
        echo $((${t/./}))
}
# ms START END — microseconds to milliseconds, 3 decimals.
ms() {
        local d=$(($2 - $1))
        printf '%d.%03d' $((d / 1000)) $((d % 1000))
}
# status_kb PID KEY — VmRSS or VmHWM of PID in kB ("null" if gone).
status_kb() {
        awk -v k="$2:" '$1 == k {print $2; found = 1} END {if (!found) print "null"}' "/proc/$1/status" 2>/dev/null ||
                echo null
}
emit() {
        echo "OPENBENCH $*"
}
drop_caches() {
        sync
        echo 3 >/proc/sys/vm/drop_caches
}
# first_listing MP — list MP until it names something (the call may return before).
first_listing() {
        local i=0
        until [ -n "$(ls -A "$1" 2>/dev/null)" ]; do
                i=$((i + 1))
                [ $i -gt 2000 ] && fail "$1 lists nothing"
        done
}
# tree_sum DIR — one checksum of every file's name and bytes under DIR.
tree_sum() {
        (cd "$1" && find . -type f | LC_ALL=C sort | xargs -d '\n' md5sum | md5sum)
}
# read_tree MP — every file's bytes, once.
read_tree() {
        find "$1" -type f -print0 | xargs -0 cat >/dev/null
}
driver_pid() {
        pgrep -n -x "$1" || true
}
# fsgated_pid_json — fsgated's pid, or null if it is not running (idle exit).
fsgated_pid_json() {
        local p
        p=$(fsgated_pid)
        echo "${p:-null}"
}

step "setting up"
if [ -d "$DATA/root" ]; then
        # The drivers the image lacks (fuse2fs: tests/vm/build-initramfs adds squashfuse only).
        (cd "$DATA/root" && find . ! -type d) | while read -r f; do
                f=${f#.}
                [ -e "$f" ] && continue
                mkdir -p "$(dirname "$f")"
                cp -a "$DATA/root$f" "$f"
                info "added from the host: $f"
        done
fi
modprobe fuse || fail "modprobe fuse failed"
modprobe loop 2>/dev/null || true
mkfs.ext4 -q -F "$FSGATE_SCRATCH_DISK" || fail "mkfs.ext4 $FSGATE_SCRATCH_DISK failed"
mkdir -p "$BENCH" /mnt/kernel
mount -t ext4 "$FSGATE_SCRATCH_DISK" "$BENCH" || fail "cannot mount the scratch disk"

# 4 directories of 5 of 8 files each: 160 files of 4, 16, 64 and 128 KiB (8.4 MiB) of random
# bytes, so that squashfs compresses nothing away.
files=0
for a in 1 2 3 4; do
        for b in 1 2 3 4 5; do
                d="$TREE/dir $a/sub$b"
                mkdir -p "$d"
                for c in 1 2 3 4 5 6 7 8; do
                        case $((c % 4)) in 0) kb=4 ;; 1) kb=16 ;; 2) kb=64 ;; 3) kb=128 ;; esac
                        head -c $((kb * 1024)) /dev/urandom >"$d/file$c.bin"
                        files=$((files + 1))
                done
        done
done
printf 'hello\n' >"$TREE/README"
files=$((files + 1))
bytes=$(find "$TREE" -type f -print0 | xargs -0 cat | wc -c)
sums=$(tree_sum "$TREE")
out=$(mksquashfs "$TREE" "$BENCH/tree.squashfs" -quiet -no-progress 2>&1) || fail "mksquashfs: $out"
dd if=/dev/zero of="$BENCH/tree.ext4" bs=1M count=0 seek=24 status=none
out=$(mke2fs -q -F -t ext4 -L openbench -d "$TREE" "$BENCH/tree.ext4" 2>&1) || fail "mke2fs -d: $out"
sync
info "tree: $files files, $bytes bytes; squashfs $(stat -c %s "$BENCH/tree.squashfs") bytes, ext4 $(stat -c %s "$BENCH/tree.ext4") bytes"

fsg_call GetFilesystem s ext4 >/dev/null || fail "fsgated does not answer"
fpid=$(fsgated_pid)
emit "{\"kind\":\"setup\",\"rounds\":$ROUNDS,\"files\":$files,\"bytes\":$bytes,\"kernel\":\"$(uname -r)\",\"nproc\":$(nproc),\"fsgated_uid\":$(awk '/^Uid:/ {print $3}' "/proc/$fpid/status"),\"fsgated_capeff\":\"$(awk '/^CapEff:/ {print $2}' "/proc/$fpid/status")\",\"pid1\":\"$(cat /proc/1/comm)\"}"

# route TYPE DRIVER MODULE — one route: warm-up, then ROUNDS rounds of open and kernel.
route() {
        local type="$1" driver="$2" module="$3" img="$BENCH/tree.$1" r way t0 tc t1 t1b t2 mp pid rss hwm rss_ready
        step "$type: Open safely ($driver) beside the kernel ($module), $ROUNDS rounds after a warm-up"
        if ! command -v "$driver" >/dev/null; then
                emit "{\"kind\":\"skip\",\"route\":\"$type\",\"driver\":\"$driver\",\"reason\":\"$driver is not in the guest (nor on the host to copy in)\"}"
                return 0
        fi
        for r in $(seq 0 "$ROUNDS"); do
                for way in open kernel; do
                        drop_caches
                        if [ $way = open ]; then
                                t0=$(usec)
                                mp=$(fsgatectl open "$img") || fail "fsgatectl open $img: $mp"
                                tc=$(usec)
                                first_listing "$mp"
                                t1=$(usec)
                                pid=$(driver_pid "$driver")
                                [ -n "$pid" ] || fail "no $driver process for $mp"
                                rss_ready=$(status_kb "$pid" VmRSS)
                        else
                                mp=/mnt/kernel
                                t0=$(usec)
                                mount -o ro,loop -t "$type" "$img" "$mp" || fail "mount -o ro,loop $img"
                                tc=$(usec)
                                first_listing "$mp"
                                t1=$(usec)
                        fi
                        if [ "$r" = 0 ]; then
                                [ "$(tree_sum "$mp")" = "$sums" ] ||
                                        fail "$way $type: the files read differ from the tree's"
                                pass "$way $type: every file read back as written"
                        fi
                        drop_caches
                        t1b=$(usec)
                        read_tree "$mp"
                        t2=$(usec)
                        if [ $way = open ]; then
                                rss=$(status_kb "$pid" VmRSS)
                                hwm=$(status_kb "$pid" VmHWM)
                                fsgatectl close "$mp" || fail "fsgatectl close $mp"
                                wait_while 100 "$driver ($pid) still runs after close" test -d "/proc/$pid"
                                [ "$r" = 0 ] || emit "{\"kind\":\"sample\",\"route\":\"$type\",\"way\":\"open\",\"round\":$r,\"call_ms\":$(ms "$t0" "$tc"),\"ready_ms\":$(ms "$t0" "$t1"),\"read_ms\":$(ms "$t1b" "$t2"),\"rss_ready_kb\":$rss_ready,\"rss_kb\":$rss,\"hwm_kb\":$hwm,\"fsgated_pid\":$(fsgated_pid_json)}"
                        else
                                umount "$mp" || fail "umount $mp"
                                [ "$r" = 0 ] || emit "{\"kind\":\"sample\",\"route\":\"$type\",\"way\":\"kernel\",\"round\":$r,\"call_ms\":$(ms "$t0" "$tc"),\"ready_ms\":$(ms "$t0" "$t1"),\"read_ms\":$(ms "$t1b" "$t2")}"
                        fi
                done
                if [ "$r" = 0 ]; then info "warm-up done"; else info "round $r of $ROUNDS done"; fi
        done
        # What the kernel's side costs in memory: its modules' size (core text and data).
        emit "{\"kind\":\"module\",\"route\":\"$type\",\"module\":\"$module\",\"size_kb\":$(awk -v m="$module" '$1 == m {print int($2 / 1024); f = 1} END {if (!f) print "null"}' /proc/modules)}"
}

route squashfs squashfuse squashfs
route ext4 fuse2fs ext4
fpid=$(fsgated_pid)
[ -n "$fpid" ] && emit "{\"kind\":\"fsgated\",\"rss_kb\":$(status_kb "$fpid" VmRSS),\"hwm_kb\":$(status_kb "$fpid" VmHWM)}"
umount "$BENCH"
pass "benchmark done"
