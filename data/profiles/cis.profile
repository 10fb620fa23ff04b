# SPDX-License-Identifier: LGPL-2.1-or-later
# The filesystem modules that the CIS Level 1 benchmarks name ("Ensure ... kernel module is
# not available"), as SCAP Security Guide selects them for CIS Level 1 (Ubuntu 22.04,
# ssg-debderived: kernel_module_M_disabled in cis_level1_server and cis_level1_workstation).
# Hard: CIS audits that `modprobe M` is refused, so explicit loads are refused too.
# Not here: squashfs (Level 2: snaps and live images need it), overlayfs (Level 2),
# usb-storage (a Level 1 item, but a USB driver, not a filesystem module).
Description=CIS Level 1: cramfs freevxfs hfs hfsplus jffs2 udf, hard-denied
Hard=yes
Modules=cramfs freevxfs hfs hfsplus jffs2 udf
