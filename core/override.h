/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "conffile.h"
#include "sha256.h"

/* An override: a file fsgate writes in /etc/modprobe.d under the name of a vendor file that
 * denies several modules. kmod reads it instead of the vendor file (same basename, higher
 * precedence), so one module can be allowed without lifting the others and without editing
 * a file a package owns: it holds the vendor file's lines minus those of the modules
 * allowed, and a header that names the vendor file, its checksum (to see it change) and the
 * modules. */

#define FSG_OVERRIDE_HEADER FSG_HEADER ": this file replaces "
#define FSG_OVERRIDE_OF     "# fsgate-override-of: "
#define FSG_OVERRIDE_SHA256 "# fsgate-vendor-sha256: "
#define FSG_OVERRIDE_ALLOWS "# fsgate-allows: "

typedef struct FsgOverrideHeader {
        char *vendor;                           /* system path of the vendor file */
        char sha256[FSG_SHA256_HEX_SIZE];       /* of the vendor file as it was copied */
        char **allows;                          /* the modules whose lines are left out */
} FsgOverrideHeader;

void fsg_override_header_done(FsgOverrideHeader *h);
/* Whether content is an override (1, *ret filled) or not (0). Negative errno on ENOMEM. */
int fsg_override_header_parse(const char *content, FsgOverrideHeader *ret);
/* The same for the file at abs below the root: 0 when it is absent or no override. */
int fsg_override_read(const FsgContext *c, const char *abs, FsgOverrideHeader *ret);

/* Whether a vendor file's name can go into an override (its header and fsgate's messages):
 * printable ASCII without blanks. */
bool fsg_override_name_ok(const char *path);

/* The override of vendor (system path; its content vendor_content) leaving out the logical
 * lines whose rule names one of strip (normalized names: modules, fs_TYPE aliases), the
 * header listing allows. NULL on ENOMEM. */
char *fsg_override_content(const char *vendor, const char *vendor_content, char * const *allows,
                           char * const *strip);

/* The logical lines of content whose rule names one of strip, as "line N: TEXT" (N the first
 * physical line), in order. Returns a negative errno. */
int fsg_conf_lines_naming(const char *content, char * const *strip, char ***ret);

/* strip for module: its name and the fs-TYPE alias of each of its types, normalized. */
int fsg_override_strip_add(char ***strip, const char *module, char * const *types);
