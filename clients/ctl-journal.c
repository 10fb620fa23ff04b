/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The journal as fsgatectl reads it (log, audit's evidence, status's observation): opened or
 * refused in words, a field of an entry, a time for people. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-id128.h>
#include <time.h>
#include <unistd.h>

#include "ctl-journal.h"
#include "fsg-i18n.h"
#include "macro.h"

char *ctl_journal_field(sd_journal *j, const char *name) {
        const void *data;
        size_t len, nl = strlen(name);

        if (sd_journal_get_data(j, name, &data, &len) < 0 || len <= nl || ((const char *) data)[nl] != '=')
                return strdup("");
        return strndup((const char *) data + nl + 1, len - nl - 1);
}

static const char *journal_denied_message(void) {
        return _("Cannot read the system journal: only root and the members of the groups "
                 "systemd-journal and adm may (journalctl's rule). Nothing is shown");
}

/* Without read access to the system journal, sd-journal opens nothing and says nothing: an
 * empty answer would read as "nothing was blocked". Refused instead, with the reason. */
static int check_journal_readable(FsgError *e) {
        static const char * const dirs[] = { "/var/log/journal", "/run/log/journal" };
        sd_id128_t mid;
        bool seen = false;

        if (geteuid() == 0)
                return 0;
        if (sd_id128_get_machine(&mid) < 0)
                return 0;
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                char path[128];
                int fd;

                snprintf(path, sizeof(path), "%s/" SD_ID128_FORMAT_STR "/system.journal", dirs[i],
                         SD_ID128_FORMAT_VAL(mid));
                fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
                if (fd >= 0) {
                        close(fd);
                        return 0;
                }
                seen = seen || errno != ENOENT;
        }
        if (!seen)
                return 0;       /* no system journal at all: an empty answer is the truth */
        return fsg_error(e, FSG_ERR_ACCESS_DENIED, "%s", journal_denied_message());
}

void ctl_format_time(uint64_t usec, bool seconds, char buf[static 32]) {
        time_t t = (time_t) (usec / 1000000);
        struct tm tm;

        if (!localtime_r(&t, &tm) || strftime(buf, 32, seconds ? "%Y-%m-%d %H:%M:%S" : "%Y-%m-%d %H:%M", &tm) == 0)
                snprintf(buf, 32, "@%llu", (unsigned long long) (usec / 1000000));
}

int ctl_journal_open(sd_journal **ret, FsgError *e) {
        /* FSGATE_JOURNAL_DIR: tests read journal files they made (docs/ENVIRONMENT.md). */
        const char *dir = secure_getenv("FSGATE_JOURNAL_DIR");
        int r;

        if (!dir && check_journal_readable(e) < 0)
                return -EACCES;
        r = dir ? sd_journal_open_directory(ret, dir, 0) : sd_journal_open(ret, SD_JOURNAL_LOCAL_ONLY | SD_JOURNAL_SYSTEM);
        if (r == -EACCES || r == -EPERM)
                /* Who may read it, not errno's word: exit 4, as for the system journal's files. */
                return fsg_error(e, FSG_ERR_ACCESS_DENIED, "%s", journal_denied_message());
        if (r < 0)
                return fsg_error(e, FSG_ERR_FAILED, _("Failed to open the journal: %s"), strerror(-r));
        return 0;
}
