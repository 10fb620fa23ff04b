/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

/* The kernel's MODULE_NAME_LEN is 64 including the NUL; filesystem types are shorter still. */
#define FSG_NAME_MAX 55

/* A plausible module or filesystem type name: 1..FSG_NAME_MAX characters of [A-Za-z0-9_-].
 * Everything a file name or a shell could misread ('/', '.', whitespace, quotes) is refused. */
bool fsg_name_is_valid(const char *s);

/* Calls fn for each filesystem type a mount table's type field names (fstab, a mount unit,
 * /proc/mounts, udev): a list ("ext4,btrfs": mount tries each) names each member, a subtype
 * ("fuse.sshfs") its main type; what is no plausible name is skipped. A non-zero return of
 * fn ends the walk and is returned; -ENOMEM. */
int fsg_name_foreach_type_in_field(const char *field, int (*fn)(const char *type, void *userdata), void *userdata);

/* kmod treats '-' and '_' in module names as the same character. */
void fsg_name_normalize(char *s);
/* s, normalized, into buf: the key a name is looked up by. False when s is NULL or longer than
 * any module's name, which then names nothing. */
bool fsg_name_normalize_into(const char *s, char buf[static FSG_NAME_MAX + 1]);
