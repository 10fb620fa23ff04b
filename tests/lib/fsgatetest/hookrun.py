# SPDX-License-Identifier: LGPL-2.1-or-later
"""What a test needs to run fsgate-blocked on the host as the kernel's request would: a file
for its kernel log lines (FSGATE_KMSG), a state directory of its own (the rate limits count
per test) and a stand-in for /sbin/modprobe (FSGATE_MODPROBE: the host loads no module) that
records what the hook asked, which is the hook's whole part of a load."""

import os
import tempfile


class HookRun:
    def __init__(self, workdir):
        scratch = tempfile.mkdtemp(dir=workdir)
        self.kmsg = os.path.join(scratch, 'kmsg')
        open(self.kmsg, 'w').close()    # the hook appends to it, as to /dev/kmsg; it creates nothing
        self.rundir = os.path.join(scratch, 'run-fsgate')
        self.modprobe_log = os.path.join(scratch, 'modprobe.log')
        self.modprobe = os.path.join(scratch, 'modprobe')
        with open(self.modprobe, 'w') as f:
            f.write(f'#!/bin/sh\necho "$@" >> {self.modprobe_log}\n')
        os.chmod(self.modprobe, 0o755)
        self.scratch = scratch

    def env(self, base, root, **extra):
        return dict(base, FSGATE_ROOT=root, FSGATE_KMSG=self.kmsg, FSGATE_MODPROBE=self.modprobe,
                    FSGATE_RUNTIME_DIR=self.rundir, **extra)

    def loads(self):
        """modprobe's command lines so far, one a load."""
        try:
            with open(self.modprobe_log) as f:
                return f.read().splitlines()
        except FileNotFoundError:
            return []

    def kernel_log(self):
        with open(self.kmsg) as f:
            return f.read()
