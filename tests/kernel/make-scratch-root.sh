#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# make-scratch-root.sh ROOT [--with-kmod]
#
# Builds a scratch system root at ROOT from the cached Debian kernel (fetch-kernel.sh):
#   ROOT/usr/lib/modules/KVER    modules.* copied; module files hard-linked from the cache
#                                (whole tree) when on the same filesystem, else copied:
#                                filesystem modules and what they depend on only
#   ROOT/{lib,bin,sbin,lib64}    symlinks to usr/... (merged /usr)
#   ROOT/etc/modprobe.d, ROOT/run/modprobe.d, ROOT/usr/local/lib/modprobe.d,
#   ROOT/usr/lib/modprobe.d      empty (existing files in them are left alone)
#   ROOT/proc/{modules,mounts,cmdline}  plain files describing a small booted system
#   ROOT/dev/null                the character device (target of masking symlinks)
# With --with-kmod, the host's kmod binary (as usr/bin/kmod, with usr/sbin/modprobe etc.
# pointing to it), its shared libraries and a shell, true and false are copied in, so that
# `chroot ROOT /usr/sbin/modprobe -n -v fs-hfs` works.
#
# Prints KVER=<release> on stdout. Must run as root (hard links to root-owned files,
# chroot). Set FSGATE_SCRATCH_COPY=1 to force the copying mode.

set -euo pipefail

me=${0##*/}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
die() {
        echo "$me: error: $*" >&2
        exit 1
}
usage() {
        echo "usage: $me ROOT [--with-kmod]" >&2
        exit 2
}

root=
with_kmod=0
for arg; do
        case $arg in
        --with-kmod) with_kmod=1 ;;
        -h | --help) usage ;;
        -*) echo "$me: unknown option '$arg'" >&2; usage ;;
        *)
                [[ -z $root ]] || usage
                root=$arg
                ;;
        esac
done
[[ -n $root ]] || usage
[[ $(id -u) -eq 0 ]] || die "must run as root"

fetched=$("$here/fetch-kernel.sh") || die "fetch-kernel.sh failed"
kroot=$(sed -n 's/^KROOT=//p' <<<"$fetched")
kver=$(sed -n 's/^KVER=//p' <<<"$fetched")
[[ -n $kroot && -n $kver ]] || die "fetch-kernel.sh printed no KROOT=/KVER= lines"
src=$kroot/lib/modules/$kver
[[ -d $src ]] || die "fetch-kernel.sh named $src, which does not exist"

mkdir -p -- "$root"
chmod 755 "$root"
root=$(cd "$root" && pwd -P)
[[ $root != / ]] || die "refusing to use / as a scratch root"

# Merged /usr.
mkdir -p "$root"/usr/{bin,sbin,lib,lib64}
for d in bin sbin lib lib64; do
        if [[ -L $root/$d ]]; then
                [[ $(readlink "$root/$d") == "usr/$d" ]] || die "$root/$d is a symlink, but not to usr/$d"
        elif [[ -e $root/$d ]]; then
                die "$root/$d exists and is not a symlink to usr/$d"
        else
                ln -s "usr/$d" "$root/$d"
        fi
done

mkdir -p "$root"/etc/modprobe.d "$root"/run/modprobe.d \
        "$root"/usr/local/lib/modprobe.d "$root"/usr/lib/modprobe.d "$root"/proc

# The module tree (rebuilt from scratch on every call).
dst=$root/usr/lib/modules/$kver
rm -rf -- "$dst"
mkdir -p "$root/usr/lib/modules"

linked=0
if [[ ${FSGATE_SCRATCH_COPY:-0} != 1 &&
        $(stat -c %d "$src") == $(stat -c %d "$root/usr/lib/modules") ]]; then
        if cp -al -- "$src" "$dst" 2>/dev/null; then
                linked=1
        else
                rm -rf -- "$dst"
        fi
fi

if [[ $linked == 0 ]]; then
        mkdir -p "$dst"
        # Modules under kernel/fs/, modules any fs-* alias resolves to, and (modules.dep lists
        # the full closure on each line) everything those depend on.
        awk '
                FNR == 1 { file++ }
                file == 1 && $1 == "alias" && $2 ~ /^fs-/ { m = $3; gsub(/-/, "_", m); want[m] = 1; next }
                file == 2 {
                        path = $1; sub(/:$/, "", path)
                        name = path; sub(/.*\//, "", name); sub(/\.ko(\.[a-z]+)?$/, "", name); gsub(/-/, "_", name)
                        if (path ~ /^kernel\/fs\// || (name in want))
                                for (i = 1; i <= NF; i++) { p = $i; sub(/:$/, "", p); print p }
                }
        ' "$src/modules.alias" "$src/modules.dep" | sort -u >"$root/.modlist.$$"
        [[ -s $root/.modlist.$$ ]] || die "found no filesystem modules in $src/modules.dep"
        (cd "$src" && xargs -d '\n' cp --parents -t "$dst" --) <"$root/.modlist.$$" ||
                die "cannot copy modules from $src"
        rm -f -- "$root/.modlist.$$"
fi

# modules.* are copied, never linked: a depmod in the scratch root must not touch the cache.
for f in "$src"/modules.*; do
        rm -f -- "$dst/${f##*/}"
        cp -- "$f" "$dst/"
done

# /dev/null, the target of masking symlinks (modprobe.d, systemd), exists on a real system.
mkdir -p "$root/dev"
if [[ ! -c $root/dev/null ]]; then
        rm -f -- "$root/dev/null"
        mknod -m 666 "$root/dev/null" c 1 3 2>/dev/null ||
                echo "$me: warning: cannot create $root/dev/null (mknod not permitted)" >&2
fi

# A small booted system, as fsgate and kmod see it through /proc.
: >"$root/proc/modules"
echo "/dev/vda / ext4 rw,relatime 0 0" >"$root/proc/mounts"
echo "BOOT_IMAGE=/vmlinuz root=/dev/vda quiet" >"$root/proc/cmdline"

# Copy a host binary and its shared libraries into the root, at the same paths.
copy_with_libs() {
        local bin=$1 target=$2 lib
        mkdir -p -- "$(dirname "$root$target")"
        cp -L -- "$bin" "$root$target"
        while read -r lib; do
                [[ -e $root$lib ]] && continue
                mkdir -p -- "$(dirname "$root$lib")"
                cp -L -- "$lib" "$root$lib"
        done < <(ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $3; next } $1 ~ /^\// { print $1 }')
}

if [[ $with_kmod == 1 ]]; then
        kmod=$(command -v kmod || true)
        [[ -n $kmod ]] || die "kmod not found on the host"
        command -v ldd >/dev/null || die "ldd not found on the host"
        copy_with_libs "$kmod" /usr/bin/kmod
        for tool in modprobe insmod rmmod lsmod modinfo depmod; do
                ln -sfn ../bin/kmod "$root/usr/sbin/$tool"
        done
        # Install commands are run through /bin/sh (never in a dry run, but keep it real).
        sh_bin=$(type -P dash || type -P sh)
        copy_with_libs "$sh_bin" /usr/bin/sh
        copy_with_libs "$(type -P true)" /usr/bin/true
        copy_with_libs "$(type -P false)" /usr/bin/false
        chroot "$root" /usr/sbin/modprobe --version >/dev/null ||
                die "chroot $root /usr/sbin/modprobe does not run"
fi

echo "KVER=$kver"
