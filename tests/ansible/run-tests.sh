#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# run-tests.sh BUILD_DIR
#
# The Ansible collection (ansible/) against the real fsgated: a private system-like
# dbus-daemon with fsgate's bus policy, BUILD_DIR/service/fsgated over a scratch root, and
# Debian's ansible-playbook (-i localhost, -c local) running the playbooks beside this
# script. Files on disk are checked here, between the playbooks. The host's /etc is never
# touched. Root only (the scratch root); exits 77 (skipped) without ansible-playbook.
set -euo pipefail

me=${0##*/}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib/script-lib.sh
. "$here/../lib/script-lib.sh"

[[ $# -eq 1 ]] || { echo "usage: $me BUILD_DIR" >&2; exit 2; }
use_build "$1"
# The profiles of this build (fsgate_profile), not installed ones; fsgated inherits it.
export FSGATE_PROFILE_DIR=$build/data/profiles
command -v ansible-playbook >/dev/null || skip "ansible-playbook not installed (Debian: ansible-core)"
[[ $(id -u) -eq 0 ]] || skip "must run as root (scratch root)"
for tool in dbus-daemon dbus-monitor busctl setpriv; do
        command -v "$tool" >/dev/null || skip "$tool not installed"
done

make_work ansible

# The scratch root: the kernel's module tree, openSUSE's vendor file for hfs, a hardening
# role's file for ufs (fsgate must refuse to touch it), and nilfs2 loaded.
root=$work/root
kver=$("${FSGATE_MAKE_SCRATCH_ROOT:-$src/tests/kernel/make-scratch-root.sh}" "$root" | sed -n 's/^KVER=//p')
[[ -n $kver ]] || die "make-scratch-root.sh printed no KVER="
echo "blacklist hfs" >"$root/usr/lib/modprobe.d/60-blacklist_fs-hfs.conf"
echo "install ufs /bin/true" >"$root/etc/modprobe.d/60-blacklist_fs-ufs.conf"
echo "nilfs2 16384 0 - Live 0x0000000000000000" >"$root/proc/modules"
etc=$root/etc/modprobe.d
run=$root/run/modprobe.d

# The bus and the service. Root may also monitor the bus (dbus-monitor, for check mode).
start_private_fsgated "$work" --root="$root" --fsgated="$fsgated" \
        --fsgated-arg=--kernel-release="$kver" --allow-monitoring ||
        die "fsgated did not start: $(cat "$work/fsgated.log" 2>/dev/null)"

# Ansible, configured for this run only (nothing read from or written to ~/.ansible or /etc/ansible).
mkdir -p "$work/ansible-home"
chmod 1777 "$work/ansible-home"
cat >"$work/ansible.cfg" <<EOF
[defaults]
collections_path = $src/ansible/collections
collections_on_ansible_version_mismatch = error
interpreter_python = auto_silent
local_tmp = $work/ansible-home/root/tmp
remote_tmp = $work/ansible-home/root/remote-tmp
retry_files_enabled = false
nocows = true
deprecation_warnings = true
EOF
export ANSIBLE_CONFIG=$work/ansible.cfg ANSIBLE_HOME=$work/ansible-home/root ANSIBLE_NOCOLOR=1
export ANSIBLE_COLLECTIONS_PATH=$src/ansible/collections
cd "$work"

play() {
        local book=$1
        shift
        echo "== $book $*"
        ansible-playbook -i localhost, -c local "$here/$book.yml" "$@" ||
                die "playbook $book failed (fsgated log: $(tail -n 5 "$work/fsgated.log"))"
}
# expect_link FILE: FILE is fsgate's allow mask.
expect_link() {
        [[ -L $1 && $(readlink "$1") == /dev/null ]] || die "$1 is not a symlink to /dev/null"
}
# expect_deny FILE MODULE: FILE is fsgate's deny file for MODULE.
expect_deny() {
        [[ -f $1 && ! -L $1 ]] || die "$1 is not a regular file"
        grep -q '^# Written by fsgate' "$1" || die "$1 has no fsgate header"
        grep -qx "blacklist $2" "$1" || die "$1 does not blacklist $2"
}
expect_absent() {
        [[ ! -e $1 && ! -L $1 ]] || die "$1 exists"
}
snapshot() {
        (cd "$root" && find etc/modprobe.d run/modprobe.d usr/lib/modprobe.d -printf '%p %y %l %s %T@\n' | sort)
}

# The documentation parses, and the collection builds.
for m in fsgate_filesystem fsgate_filesystems_info fsgate_profile fsgate_observation_info; do
        ansible-doc "fsgate.fsgate.$m" >"$work/doc.txt" 2>&1 && grep -q '^OPTIONS' "$work/doc.txt" ||
                die "ansible-doc fsgate.fsgate.$m: $(cat "$work/doc.txt")"
done
for f in fleet_report fleet_table; do
        ansible-doc -t filter "fsgate.fsgate.$f" >"$work/doc.txt" 2>&1 && grep -q '^OPTIONS' "$work/doc.txt" ||
                die "ansible-doc -t filter fsgate.fsgate.$f: $(cat "$work/doc.txt")"
done
ansible-galaxy collection build --output-path "$work" \
        "$src/ansible/collections/ansible_collections/fsgate/fsgate" >/dev/null || die "ansible-galaxy collection build"

# Apply, then re-apply: the second run changes nothing, on disk either.
play apply -e first_run=true
expect_link "$etc/60-blacklist_fs-hfs.conf"
expect_deny "$etc/60-blacklist_fs-freevxfs.conf" freevxfs
expect_absent "$etc/60-blacklist_fs-bfs.conf"
before=$(snapshot)
play apply -e first_run=false
[[ $(snapshot) == "$before" ]] || die "re-applying changed files: $(diff <(echo "$before") <(snapshot))"

# Check mode: predictions only. dbus-monitor shows what reached the service.
dbus-monitor --address "$DBUS_SYSTEM_BUS_ADDRESS" \
        "type='method_call',destination='org.fsgate.fsgate1'" >"$work/monitor.log" 2>&1 &
monitor=$!
pids+=($monitor)
for _ in $(seq 50); do [[ -s $work/monitor.log ]] && break; sleep 0.1; done
play check --check --diff
sleep 0.2
kill "$monitor"
grep -q 'member=GetFilesystem' "$work/monitor.log" || die "dbus-monitor saw no GetFilesystem: $(cat "$work/monitor.log")"
! grep -E 'member=(Allow|Deny|Reset|Load|ExemptLoaded)\b' "$work/monitor.log" ||
        die "check mode made a changing call"
[[ $(snapshot) == "$before" ]] || die "check mode changed files: $(diff <(echo "$before") <(snapshot))"

# Deny until reboot: /run only.
play runtime
expect_deny "$run/60-blacklist_fs-minix.conf" minix
expect_absent "$etc/60-blacklist_fs-minix.conf"

# A hard deny: the line OpenSCAP accepts, the route to the hook kept.
play hard
expect_deny "$etc/60-blacklist_fs-jfs.conf" jfs
grep -qx 'install jfs /bin/false' "$etc/60-blacklist_fs-jfs.conf" || die "no hard deny line for jfs"
grep -qx 'alias fs-jfs fsgate_blocked_jfs' "$etc/60-blacklist_fs-jfs.conf" || die "the hard deny lost the route to the hook"
ansible localhost -i localhost, -c local -m fsgate.fsgate.fsgate_filesystem -a 'name=jfs state=default' >/dev/null ||
        die "resetting jfs after the hard deny failed"
expect_absent "$etc/60-blacklist_fs-jfs.conf"

# Back to the defaults: fsgate's files go, the vendor file stays.
play default
expect_absent "$etc/60-blacklist_fs-hfs.conf"
expect_absent "$run/60-blacklist_fs-minix.conf"
[[ $(cat "$root/usr/lib/modprobe.d/60-blacklist_fs-hfs.conf") == "blacklist hfs" ]] || die "the vendor file changed"

# Refused changes: clear failures; the foreign file and the disk stay as they were.
ufs_before=$(stat -c '%i %s %Y' "$etc/60-blacklist_fs-ufs.conf")
play refused
[[ $(stat -c '%i %s %Y' "$etc/60-blacklist_fs-ufs.conf") == "$ufs_before" ]] || die "the foreign ufs file changed"
[[ $(cat "$etc/60-blacklist_fs-ufs.conf") == "install ufs /bin/true" ]] || die "the foreign ufs file changed"
expect_deny "$etc/60-blacklist_fs-nilfs2.conf" nilfs2
for f in "$etc"/* "$run"/*; do
        [[ -e $f ]] || continue
        case ${f##*/} in
        60-blacklist_fs-freevxfs.conf | 60-blacklist_fs-nilfs2.conf | 60-blacklist_fs-ufs.conf) ;;
        # The service's routes for the vendor files' silent denies (core/routes.h), rebuilt
        # after each change: derived, not a decision.
        fsgate-routes.conf) [[ $f == "$run/fsgate-routes.conf" ]] || die "unexpected file $f" ;;
        *) die "unexpected file $f" ;;
        esac
done

# Grants (for): a grant of nilfs2 (denied now, loaded) as fsgated finds it after a restart.
grant_id=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
now_us=$(date +%s%6N)
mkdir -p "$root/run/fsgate/grants"
printf 'module=nilfs2\nuid=0\nsince=%s\nuntil=%s\nboot=%s\n' "$now_us" "$((now_us + 3600000000))" \
        "$(tr -d '-' </proc/sys/kernel/random/boot_id)" >"$root/run/fsgate/grants/$grant_id"
"$src/tools/private-fsgated" stop-fsgated "$work"
"$src/tools/private-fsgated" start-fsgated --dir="$work" --root="$root" --fsgated="$fsgated" \
        --fsgated-arg=--kernel-release="$kver" >/dev/null || die "fsgated did not start again"
play grant -e nilfs2_grant="$grant_id"
[[ -z $(ls -A "$root/run/fsgate/grants") ]] || die "the grant's record is still there: $(ls "$root/run/fsgate/grants")"

# An ordinary user: polkit cannot be asked, so changes are refused (AccessDenied by name).
before=$(snapshot)
setpriv --reuid=65534 --regid=65534 --clear-groups --reset-env \
        env DBUS_SYSTEM_BUS_ADDRESS="$DBUS_SYSTEM_BUS_ADDRESS" ANSIBLE_CONFIG="$ANSIBLE_CONFIG" \
        ANSIBLE_HOME="$work/ansible-home/nobody" ANSIBLE_LOCAL_TEMP="$work/ansible-home/nobody/tmp" \
        ANSIBLE_REMOTE_TEMP="$work/ansible-home/nobody/remote-tmp" ANSIBLE_NOCOLOR=1 HOME="$work/ansible-home" \
        ansible-playbook -i localhost, -c local "$here/unprivileged.yml" ||
        die "playbook unprivileged failed"
[[ $(snapshot) == "$before" ]] || die "a refused change changed files"

# The info module reports what all of that left.
play info -e expected_kver="$kver"

# Profiles: the check-mode run writes nothing; the opensuse refusal writes nothing either.
before=$(snapshot)
play profile
for m in cramfs freevxfs hfs hfsplus jffs2 udf; do
        expect_deny "$etc/60-blacklist_fs-$m.conf" "$m"
        grep -qx "install $m /bin/false" "$etc/60-blacklist_fs-$m.conf" || die "cis: $m is not denied hard"
done
[[ ! -e $etc/60-blacklist_fs-bfs.conf ]] || die "the refused opensuse profile wrote bfs"

echo "$me: all Ansible tests passed"
