# SPDX-License-Identifier: LGPL-2.1-or-later
"""An initramfs made the way initramfs-tools makes one, without running it: a newc cpio,
zstd-compressed, with the modules asked for (and depmod's output for them) and the regular
files of modprobe.d only (its copy_file leaves a /dev/null mask out). The real
update-initramfs runs in the system image (tests/system/scenarios/install.sh)."""

import os
import shlex
import shutil
import subprocess
import tempfile

VENDOR = 'usr/lib/modprobe.d'
ETC = 'etc/modprobe.d'


def make_initramfs(root, kver, modules, scratch):
    """ROOT/boot/initrd.img-KVER from ROOT's module tree and modprobe.d; scratch: a directory
    for the tree while it is packed."""
    tree = tempfile.mkdtemp(dir=scratch)
    moddir = f'lib/modules/{kver}'
    src = os.path.join(root, moddir)
    os.makedirs(os.path.join(tree, moddir))
    for f in ('modules.order', 'modules.builtin', 'modules.builtin.modinfo'):
        if os.path.exists(os.path.join(src, f)):
            shutil.copy(os.path.join(src, f), os.path.join(tree, moddir, f))
    for m in modules:
        rel = f'kernel/fs/{m}/{m}.ko'
        os.makedirs(os.path.dirname(os.path.join(tree, moddir, rel)), exist_ok=True)
        shutil.copy(os.path.join(src, rel), os.path.join(tree, moddir, rel))
    subprocess.run(['depmod', '-b', tree, kver], check=True)
    for d in (ETC, VENDOR):
        full = os.path.join(root, d)
        for name in os.listdir(full) if os.path.isdir(full) else []:
            path = os.path.join(full, name)
            if os.path.isfile(path) and not os.path.islink(path):
                os.makedirs(os.path.join(tree, d), exist_ok=True)
                shutil.copy(path, os.path.join(tree, d, name))
    image = os.path.join(root, 'boot', f'initrd.img-{kver}')
    os.makedirs(os.path.dirname(image), exist_ok=True)
    # Quoted: a test's root or release may be hostile on purpose (test-initramfs.py).
    subprocess.run(f'cd {shlex.quote(tree)} && find . | cpio -o -H newc --quiet | zstd -q -f -o {shlex.quote(image)}',
                   shell=True, check=True)
    shutil.rmtree(tree)
    return image
