/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fsgate-notify's texts and its reading of error replies, without a bus. */
#include "notify-text.h"
#include "../unit/test-util.h"

static NotifyBlocked blocked(const char *device, const char *label, const char *vendor, const char *model,
                             uint64_t size) {
        return (NotifyBlocked) {
                .type = strdup("hfs"),
                .module = strdup("hfs"),
                .device = strdup(device),
                .source = strdup("/usr/lib/modprobe.d/60-blacklist_fs-hfs.conf"),
                .origin = strdup("vendor"),
                .label = strdup(label),
                .uuid = strdup(""),
                .vendor = strdup(vendor),
                .model = strdup(model),
                .size = size,
        };
}

TEST(test_classify) {
        ASSERT(notify_classify_error("org.freedesktop.DBus.Error.AccessDenied",
                                     "Not authorized: polkit refused org.fsgate.fsgate1.allow") == NOTIFY_OUTCOME_REFUSED);
        ASSERT(notify_classify_error("org.freedesktop.DBus.Error.InteractiveAuthorizationRequired", "x") ==
               NOTIFY_OUTCOME_REFUSED);
        ASSERT(notify_classify_error("org.freedesktop.PolicyKit1.Error.Cancelled", "") == NOTIFY_OUTCOME_CANCELLED);
        ASSERT(notify_classify_error("org.fsgate.fsgate1.Error.Cancelled", NULL) == NOTIFY_OUTCOME_CANCELLED);
        ASSERT(notify_classify_error("org.freedesktop.DBus.Error.AccessDenied",
                                     "Authentication dialog was dismissed") == NOTIFY_OUTCOME_CANCELLED);
        ASSERT(notify_classify_error("org.fsgate.fsgate1.Error.ForeignConfig", "edit /etc/x") == NOTIFY_OUTCOME_FAILED);
        ASSERT(notify_classify_error("org.freedesktop.DBus.Error.NoReply", NULL) == NOTIFY_OUTCOME_FAILED);
        ASSERT(notify_classify_error(NULL, NULL) == NOTIFY_OUTCOME_FAILED);
}

TEST(test_clean) {
        char *s;

        s = notify_clean("  BACKUP\n<b>\t", 64);
        ASSERT_STREQ(s, "BACKUP <b>");
        free(s);
        s = notify_clean(NULL, 10);
        ASSERT_STREQ(s, "");
        free(s);
        /* Cut on a character boundary: "é" is two bytes and must not be split. */
        s = notify_clean("abcd\xc3\xa9" "fgh", 5);
        ASSERT_STREQ(s, "abcd…");
        free(s);
        s = notify_clean("abcde", 5);
        ASSERT_STREQ(s, "abcde");
        free(s);
}

TEST(test_size) {
        char buf[32];

        ASSERT_STREQ(notify_format_size(512, buf), "512 B");
        ASSERT_STREQ(notify_format_size(1000, buf), "1.0 kB");
        ASSERT_STREQ(notify_format_size(16008609792ULL, buf), "16.0 GB");
        ASSERT_STREQ(notify_format_size(999999999ULL, buf), "1.0 GB");
        ASSERT_STREQ(notify_format_size(UINT64_MAX, buf), "18.4 EB");
}

TEST(test_markup) {
        char *s = notify_markup_escape("“<i>A&B</i>”");
        ASSERT_STREQ(s, "“&lt;i&gt;A&amp;B&lt;/i&gt;”");
        free(s);
}

TEST(test_blocked_device) {
        NotifyBlocked b = blocked("/dev/sdb1", "BACKUP", "SanDisk", "Cruzer", 16008609792ULL);
        char *summary, *body;

        ASSERT(notify_text_blocked(&b, true, &summary, &body) == 0);
        ASSERT_STREQ(summary, "Filesystem blocked: hfs");
        ASSERT_STREQ(body, "/dev/sdb1 (“BACKUP”, SanDisk Cruzer, 16.0 GB) holds a filesystem of type hfs, which "
                     "the kernel may not load on its own: module hfs is denied by "
                     "/usr/lib/modprobe.d/60-blacklist_fs-hfs.conf (distribution default).\n"
                     "An administrator can allow it: Allow, or Allow once for this boot only.");
        free(summary);
        free(body);
        /* No buttons on this server: the way out in words. */
        ASSERT(notify_text_blocked(&b, false, &summary, &body) == 0);
        ASSERT(strstr(body, "An administrator can allow it with: fsgatectl allow hfs"));
        free(summary);
        free(body);
        notify_blocked_done(&b);

        b = blocked("/dev/sdc1", "", "", "", 0);
        ASSERT(notify_text_blocked(&b, true, &summary, &body) == 0);
        ASSERT(strncmp(body, "/dev/sdc1 holds a filesystem of type hfs", 40) == 0);
        free(summary);
        free(body);
        notify_blocked_done(&b);
}

TEST(test_blocked_no_device) {
        NotifyBlocked b = blocked("", "", "", "", 0);
        char *summary, *body;

        free(b.source);
        b.source = strdup("");
        free(b.origin);
        b.origin = strdup("cmdline");
        ASSERT(notify_text_blocked(&b, true, &summary, &body) == 0);
        ASSERT_STREQ(body, "A filesystem of type hfs could not be mounted: the kernel may not load module hfs on "
                     "its own, it is denied on the kernel command line (modprobe.blacklist=).\n"
                     "An administrator can allow it: Allow, or Allow once for this boot only.");
        free(summary);
        free(body);
        notify_blocked_done(&b);
}

TEST(test_details) {
        NotifyBlocked b = blocked("/dev/sdb1", "BACKUP", "SanDisk", "", 2000000);
        char *summary, *body;

        ASSERT(notify_text_details(&b, &summary, &body) == 0);
        ASSERT_STREQ(summary, "Filesystem blocked: hfs (details)");
        ASSERT(strstr(body, "Device: /dev/sdb1\nLabel: BACKUP\nDrive: SanDisk\nSize: 2.0 MB\n"));
        ASSERT(strstr(body, "Why: denied by /usr/lib/modprobe.d/60-blacklist_fs-hfs.conf (distribution default)\n"));
        ASSERT(!strstr(body, "UUID"));
        free(summary);
        free(body);
        notify_blocked_done(&b);
}

TEST(test_outcome) {
        NotifyBlocked b = blocked("/dev/sdb1", "", "", "", 0);
        char *summary, *body;

        ASSERT(notify_text_outcome(&b, NOTIFY_REQUEST_ALLOW, NOTIFY_OUTCOME_ALLOWED, NULL, &summary, &body) == 0);
        ASSERT_STREQ(summary, "hfs allowed — mount the device again");
        ASSERT(strstr(body, "Mount /dev/sdb1 again."));
        free(summary);
        free(body);
        ASSERT(notify_text_outcome(&b, NOTIFY_REQUEST_LOAD, NOTIFY_OUTCOME_ALLOWED, NULL, &summary, &body) == 0);
        ASSERT_STREQ(summary, "hfs loaded for this boot — mount the device again");
        free(summary);
        free(body);
        ASSERT(notify_text_outcome(&b, NOTIFY_REQUEST_ALLOW, NOTIFY_OUTCOME_REFUSED, "Not authorized", &summary,
                                   &body) == 0);
        ASSERT_STREQ(summary, "hfs not allowed");
        ASSERT_STREQ(body, "Refused: Not authorized");
        free(summary);
        free(body);
        ASSERT(notify_text_outcome(&b, NOTIFY_REQUEST_LOAD, NOTIFY_OUTCOME_CANCELLED, "x", &summary, &body) == 0);
        ASSERT_STREQ(summary, "hfs: cancelled");
        free(summary);
        free(body);
        ASSERT(notify_text_outcome(&b, NOTIFY_REQUEST_ALLOW, NOTIFY_OUTCOME_FAILED, "A file decides", &summary,
                                   &body) == 0);
        ASSERT_STREQ(summary, "hfs could not be allowed");
        ASSERT_STREQ(body, "A file decides");
        free(summary);
        free(body);
        notify_blocked_done(&b);
}

int main(void) {
        RUN(test_classify);
        RUN(test_clean);
        RUN(test_size);
        RUN(test_markup);
        RUN(test_blocked_device);
        RUN(test_blocked_no_device);
        RUN(test_details);
        RUN(test_outcome);
        return 0;
}
