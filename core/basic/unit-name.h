/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

/* systemd allows 255 characters in a unit name. */
#define FSG_UNIT_NAME_MAX 255

/* The name of TEMPLATE's instance for PATH, as `systemd-escape --path --template=TEMPLATE
 * PATH` writes it (systemd.unit(5), "String Escaping for Inclusion in Unit Names"), so that
 * the unit's %f gives PATH back. TEMPLATE is "prefix@.suffix". Only canonical absolute paths
 * are taken (no "//", "/./", "/../", no trailing "/"): anything else is -EINVAL, as is a name
 * longer than FSG_UNIT_NAME_MAX; -ENOBUFS if it does not fit in SIZE bytes. */
int fsg_unit_name_from_path(const char *template, const char *path, char *buf, size_t size);
/* The unit systemd names after PATH, as `systemd-escape --path --suffix=SUFFIX PATH` writes it
 * ("/dev/sdb1", ".device": "dev-sdb1.device"); SUFFIX begins with '.'. Errors as above. */
int fsg_unit_name_of_path(const char *path, const char *suffix, char *buf, size_t size);
