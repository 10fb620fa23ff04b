/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fsg-error.h"

/* Open safely's VM route (core/open-route.h, FSG_OPEN_START_VM): what fsgated needs of the
 * host before it starts guestmount. fsgated never builds the appliance itself: that is
 * fsgate-vm-appliance's, as root, once per kernel and libguestfs version. */

/* The route's time limit for the first answer: QEMU under TCG boots the appliance in 12-28 s
 * (../shared/facts/open-safely.md), far over a FUSE driver's 15 s; with a load of 10 on two
 * cores an open took 66 s and a failing one 87 s, so twice the usual and more. */
#define OPEN_VM_READY_USEC (120 * 1000000ULL)
/* That limit, or FSGATE_OPEN_VM_TIMEOUT's seconds (1-600): the tests' way to see it hit. */
uint64_t open_vm_ready_usec(void);

/* The appliance fsgate-vm-appliance left in ${FSGATE_CACHE:-/var/cache/fsgate}/appliance:
 * its real directory in ret, root's alone with the files libguestfs boots. NoRoute, saying
 * how to build it, when there is none. */
int open_vm_appliance(char *ret, size_t size, FsgError *e);
/* Whether QEMU as nobody can use KVM: the CPU has VMX or SVM and /dev/kvm is everyone's.
 * Otherwise TCG, chosen here: a /dev/kvm that opens may still not run a stock kernel. */
bool open_vm_kvm_works(void);
