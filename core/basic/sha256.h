/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* SHA-256 (FIPS 180-4), small and slow enough for a modprobe.d file: fsgate links no crypto
 * library, and an override names the vendor file it was made from by this checksum, the one
 * sha256sum(1) prints, so that an admin can check it by hand. Not for secrets. */
#define FSG_SHA256_HEX_SIZE 65

void fsg_sha256(const void *data, size_t len, uint8_t ret[static 32]);
/* Lower-case hex into buf, NUL-terminated. */
char *fsg_sha256_hex(const void *data, size_t len, char buf[static FSG_SHA256_HEX_SIZE]);
