/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

/* Commands fsgate prints for a person to run (fsgatectl's advice, the initramfs command) are
 * pasted into a shell: every word that comes from a path, an image or a name goes through
 * fsg_shell_quote(), never straight into the text. */

/* Whether sh reads w back as itself unquoted: only [A-Za-z0-9/._+@=:,-], not empty. As an
 * argument, that is ('=' would make a first word an assignment). */
bool fsg_shell_word_is_plain(const char *w);

/* w as one shell word: itself when plain (so that everyday advice reads as it always did),
 * otherwise in single quotes, each ' as '\''. The empty word is ''. Control characters stay
 * as they are (quoted, sh takes them literally): a caller printing to a terminal escapes the
 * result (ctl_sh()). NULL: out of memory. */
char *fsg_shell_quote(const char *w);

/* The NULL-terminated words, each quoted, joined by single spaces: a command line. NULL: out
 * of memory. */
char *fsg_shell_join(const char * const *words);

/* A kernel release fsgate accepts from an image (a directory name under lib/modules) or from
 * --kernel-release: [A-Za-z0-9._+-]+, not "." or "..", at most 64 characters (uname's
 * field). It ends up in paths and in printed commands. */
bool fsg_kernel_release_is_valid(const char *s);
