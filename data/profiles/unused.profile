# SPDX-License-Identifier: LGPL-2.1-or-later
# Every filesystem module this machine does not use, computed at the moment of each call:
# not built in, not loaded, not mounted, not named as a type in /etc/fstab or in a mount
# unit, not the type udev found on a block device present, not a dependency of one of
# these. Soft unless asked for hard: root's `modprobe M` still loads a module when needed.
Description=Every filesystem module this machine does not use (computed at each call)
Hard=no
Compute=unused
