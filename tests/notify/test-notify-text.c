/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fsgate-notify's texts and its reading of error replies, without a bus. */
#include <locale.h>
#include <stdlib.h>
#include <string.h>

#include "fsg-error.h"
#include "fsg-i18n.h"
#include "macro.h"
#include "notify-text.h"
#include "utf8.h"
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
                /* As fsgated says it: a device udev reported (seat0, no ID_SEAT), else a mount
                 * request of the kernel's. */
                .cause = strdup(*device ? "device" : "kernel"),
                .seat = strdup(*device ? "seat0" : ""),
        };
}

TEST(classify) {
        ASSERT(notify_classify_error("org.freedesktop.DBus.Error.AccessDenied") == NOTIFY_OUTCOME_REFUSED);
        ASSERT(notify_classify_error("org.freedesktop.DBus.Error.InteractiveAuthorizationRequired") ==
               NOTIFY_OUTCOME_REFUSED);
        ASSERT(notify_classify_error("org.freedesktop.PolicyKit1.Error.Cancelled") == NOTIFY_OUTCOME_CANCELLED);
        ASSERT(notify_classify_error("org.fsgate.fsgate1.Error.AuthenticationCancelled") == NOTIFY_OUTCOME_CANCELLED);
        /* The name decides, never the message (fsgated's for a dismissed dialog is an
         * AuthenticationCancelled's; an AccessDenied is a refusal whatever it says). */
        ASSERT(notify_classify_error(fsg_error_dbus_name(FSG_ERR_AUTH_CANCELLED)) == NOTIFY_OUTCOME_CANCELLED);
        ASSERT(notify_classify_error("org.fsgate.fsgate1.Error.ForeignConfig") == NOTIFY_OUTCOME_FAILED);
        ASSERT(notify_classify_error("org.freedesktop.DBus.Error.NoReply") == NOTIFY_OUTCOME_FAILED);
        ASSERT(notify_classify_error(NULL) == NOTIFY_OUTCOME_FAILED);
}

TEST(clean) {
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

static void assert_clean(const char *in, size_t max, const char *want) {
        char *s = notify_clean(in, max);

        ASSERT_STREQ(s, want);
        ASSERT(fsg_utf8_is_valid(s));
        free(s);
}

/* Regression: a label is the stick's to choose. Line and paragraph separators, bidi
 * controls, zero-width and other format characters, C1 controls and invalid UTF-8 each got
 * through, so a label could break the notification's line, reverse it or hide text. */
TEST(clean_unicode) {
        /* Line breaks of every kind become spaces: U+2028, U+2029, U+0085 (NEL), CR, VT, FF. */
        assert_clean("A\u2028B\u2029C\xc2\x85" "D\rE\vF\fG", 64, "A B C D E F G");
        assert_clean("\u2028BACKUP\u2029", 64, "BACKUP");
        /* C1 controls (U+0080, U+009B CSI, U+009F): spaces, as C0 ones are. */
        assert_clean("A\xc2\x80" "B\xc2\x9b" "C\xc2\x9f" "D\x7f", 64, "A B C D");
        /* Bidi controls are dropped: "evil\u202Efdp.exe" would show as "evilexe.pdf". */
        assert_clean("evil\u202efdp.exe", 64, "evilfdp.exe");
        assert_clean("a\u200eb\u200fc\u202ad\u202be\u202cf\u202dg\u202eh", 64, "abcdefgh");
        assert_clean("a\u2066b\u2067c\u2068d\u2069e\u061cf", 64, "abcdef");
        /* Zero-width and other format characters (Unicode category Cf) are dropped too. */
        assert_clean("B\u200bA\u200cC\u200dK\u2060U\u2061P\u2064!", 64, "BACKUP!");
        assert_clean("\ufeffSOFT\u00adHYPHEN\U000e0041", 64, "SOFTHYPHEN");
        /* Invalid UTF-8 (a stray byte, an overlong '/', a surrogate, a cut sequence): U+FFFD
         * for each byte, and the rest kept. */
        assert_clean("a\xff" "b", 64, "a\ufffdb");
        assert_clean("\xc0\xaf", 64, "\ufffd\ufffd");
        assert_clean("x\xed\xa0\x80", 64, "x\ufffd\ufffd\ufffd");
        assert_clean("ok\xe2\x82", 64, "ok\ufffd\ufffd");
        /* Printable text of any script stays, and so does markup (escaped later). */
        assert_clean("Données 日本 😀 <b>&amp;", 64, "Données 日本 😀 <b>&amp;");
}

/* The cap counts characters, not bytes, and never cuts a sequence. */
TEST(clean_cap) {
        char in[4 * 100 + 1] = "", want[4 * 64 + 1] = "";
        char *s;

        for (size_t i = 0; i < 100; i++)
                strcat(in, "😀");
        for (size_t i = 0; i < 63; i++)
                strcat(want, "😀");
        strcat(want, "…");
        assert_clean(in, 64, want);
        /* Exactly 64 characters (256 bytes): not cut. */
        in[64 * 4] = 0;
        assert_clean(in, 64, in);
        /* 65 two-byte characters: 63 of them and the ellipsis. */
        in[0] = 0;
        for (size_t i = 0; i < 65; i++)
                strcat(in, "é");
        s = notify_clean(in, 64);
        ASSERT(strlen(s) == 63 * 2 + strlen("…"));
        ASSERT(streq(s + 63 * 2, "…"));
        free(s);
        /* Dropped characters do not count; blanks before the ellipsis go. */
        assert_clean("\u202eab\u200bcd", 4, "abcd");
        assert_clean("ab    cdef", 4, "ab…");
        assert_clean("abcdef", 1, "…");
}

/* What a person sees: a hostile label and drive stay on their line, inert, escaped. */
TEST(blocked_hostile_label) {
        NotifyBlocked b = blocked("/dev/sdb1", "", "", "", 0);
        char *summary, *body, *markup;
        const char *want, *risk;

        free(b.label);
        b.label = notify_clean("<b>X</b>\u2029Allowed\u202e\u200b", 64);
        free(b.vendor);
        b.vendor = notify_clean("Evil\xc2\x85" "Corp", 64);
        ASSERT(notify_text_blocked(&b, true, true, &summary, &body) == 0);
        ASSERT_STREQ(summary, "“<b>X</b> Allowed” was not mounted");
        want = "“<b>X</b> Allowed” (Evil Corp, /dev/sdb1) was not mounted because";
        ASSERT(strncmp(body, want, strlen(want)) == 0);
        ASSERT(strchr(body, '\n') == strrchr(body, '\n'));   /* the one line break is ours */
        /* The kernel source's word on hfs, in the same first line. */
        risk = strstr(body, ". hfs (Apple Macintosh file system support): orphaned upstream");
        ASSERT(risk && risk < strchr(body, '\n'));
        markup = notify_markup_escape(body);
        ASSERT(strstr(markup, "“&lt;b&gt;X&lt;/b&gt; Allowed” (Evil Corp, /dev/sdb1)"));
        free(markup);
        free(summary);
        free(body);
        notify_blocked_done(&b);
}

TEST(size) {
        char buf[32];

        ASSERT_STREQ(notify_format_size(512, buf), "512 B");
        ASSERT_STREQ(notify_format_size(1000, buf), "1.0 kB");
        ASSERT_STREQ(notify_format_size(16008609792ULL, buf), "16.0 GB");
        ASSERT_STREQ(notify_format_size(999999999ULL, buf), "1.0 GB");
        ASSERT_STREQ(notify_format_size(UINT64_MAX, buf), "18.4 EB");
}

TEST(markup) {
        char *s = notify_markup_escape("“<i>A&B</i>”");
        ASSERT_STREQ(s, "“&lt;i&gt;A&amp;B&lt;/i&gt;”");
        free(s);
}

/* Regression: the text promised buttons ("Allow, or Allow once") that
 * not every server draws, and spoke of modprobe.d paths. Now: what the stick is, why it was
 * not mounted, what Allow does; true with buttons, with a menu, and without actions. */
TEST(blocked_device) {
        NotifyBlocked b = blocked("/dev/sdb1", "BACKUP", "SanDisk", "Cruzer", 16008609792ULL);
        char *summary, *body;

        ASSERT(notify_text_blocked(&b, true, true, &summary, &body) == 0);
        ASSERT_STREQ(summary, "“BACKUP” was not mounted");
        ASSERT_STREQ(body, "“BACKUP” (SanDisk Cruzer, 16.0 GB, /dev/sdb1) was not mounted because its filesystem, "
                     "hfs, is turned off on this computer. hfs (Apple Macintosh file system support): orphaned "
                     "upstream; removal proposed, then withdrawn (2025).\n"
                     "Open read-only turns hfs on for this drive only, until it is removed, and mounts it "
                     "read-only; Allow turns hfs on from now on and mounts the drive; Allow once does the same "
                     "until the computer restarts. Each asks for an administrator's password.");
        ASSERT(!strstr(body, "button"));
        ASSERT(!strstr(body, "modprobe.d"));
        free(summary);
        free(body);
        /* No actions on this server: the way out in words, and no word of actions. */
        ASSERT(notify_text_blocked(&b, true, false, &summary, &body) == 0);
        ASSERT(strstr(body, "An administrator can turn it on with the command: fsgatectl allow hfs"));
        ASSERT(!strstr(body, "Allow"));
        free(summary);
        free(body);
        notify_blocked_done(&b);

        /* Vendor and model name it when there is no label. */
        b = blocked("/dev/sdb1", "", "SanDisk", "Cruzer", 16008609792ULL);
        ASSERT(notify_text_blocked(&b, true, true, &summary, &body) == 0);
        ASSERT_STREQ(summary, "SanDisk Cruzer was not mounted");
        ASSERT(strstr(body, "SanDisk Cruzer (16.0 GB, /dev/sdb1) was not mounted because") == body);
        free(summary);
        free(body);
        notify_blocked_done(&b);

        b = blocked("/dev/sdc1", "", "", "", 2000000);
        free(b.origin);
        b.origin = strdup("admin");
        ASSERT(notify_text_blocked(&b, true, true, &summary, &body) == 0);
        ASSERT_STREQ(summary, "The drive /dev/sdc1 was not mounted");
        ASSERT(strstr(body, "The drive /dev/sdc1 (2.0 MB) was not mounted because its filesystem, hfs, was turned "
                      "off by an administrator. hfs (Apple Macintosh file system support): orphaned upstream"));
        free(summary);
        free(body);
        notify_blocked_done(&b);
}

TEST(blocked_no_device) {
        NotifyBlocked b = blocked("", "", "", "", 0);
        char *summary, *body;

        free(b.source);
        b.source = strdup("");
        free(b.origin);
        b.origin = strdup("cmdline");
        ASSERT(notify_text_blocked(&b, true, true, &summary, &body) == 0);
        ASSERT_STREQ(summary, "A filesystem of type hfs was not mounted");
        ASSERT_STREQ(body, "A filesystem of type hfs could not be mounted because it is turned off on the kernel "
                     "command line. hfs (Apple Macintosh file system support): orphaned upstream; removal "
                     "proposed, then withdrawn (2025).\n"
                     "Allow turns hfs on from now on, Allow once until the computer restarts; then mount it again. "
                     "Both ask for an administrator's password.");
        free(summary);
        free(body);
        notify_blocked_done(&b);
}

TEST(details) {
        NotifyBlocked b[2] = { blocked("/dev/sdb1", "BACKUP", "SanDisk", "", 2000000),
                               blocked("/dev/sdc1", "", "", "", 0) };
        char *summary, *body;

        ASSERT(notify_text_details(b, 2, true, &summary, &body) == 0);
        ASSERT_STREQ(summary, "Filesystem hfs: details");
        ASSERT(strstr(body, "Device: /dev/sdb1\nLabel: BACKUP\nDrive: SanDisk\nSize: 2.0 MB\n"
                      "Also not mounted: /dev/sdc1\n"));
        ASSERT(strstr(body, "Why: denied by /usr/lib/modprobe.d/60-blacklist_fs-hfs.conf (distribution default)\n"));
        ASSERT(!strstr(body, "UUID"));
        ASSERT(strstr(body, "Cause: a drive that appeared at seat0\nOpen read-only: load hfs for this drive only and "
                      "mount it read-only; once the drive is removed, hfs is unloaded again.\nAllow: the kernel may "
                      "load hfs"));
        ASSERT(strstr(body, "Each asks for an administrator's password.\n"));
        free(summary);
        free(body);
        notify_blocked_done(&b[0]);
        notify_blocked_done(&b[1]);
}

static void set(char **field, const char *value) {
        free(*field);
        *field = strdup(value);
}

/* Regression: every session asked "Allow hfs?" for every block, whoever caused
 * it; any local user can make the kernel ask (unshare -Urm mount -t hfs). Only a medium at
 * this session's seat asks now; a mount request is information; another seat's medium is
 * not shown. */
TEST(scope) {
        NotifyBlocked stick = blocked("/dev/sdb1", "", "", "", 0), mount = blocked("", "", "", "", 0);

        ASSERT(notify_scope(&stick, "seat0") == NOTIFY_SCOPE_ASK);
        ASSERT(notify_scope(&stick, "seat1") == NOTIFY_SCOPE_NONE);
        ASSERT(notify_scope(&stick, NULL) == NOTIFY_SCOPE_NONE);     /* a remote or inactive session */
        ASSERT(notify_scope(&mount, "seat0") == NOTIFY_SCOPE_INFO);
        ASSERT(notify_scope(&mount, NULL) == NOTIFY_SCOPE_INFO);
        /* The attacker's block never asks, whatever else the signal says. */
        set(&mount.seat, "seat0");
        ASSERT(notify_scope(&mount, "seat0") == NOTIFY_SCOPE_INFO);
        set(&mount.cause, "device");                                  /* "device" without a device */
        ASSERT(notify_scope(&mount, "seat0") == NOTIFY_SCOPE_INFO);
        /* An older fsgated says nothing of the cause: a mount request, failing safe. */
        set(&stick.cause, "");
        ASSERT(notify_scope(&stick, "seat0") == NOTIFY_SCOPE_INFO);
        set(&stick.cause, "usb");
        ASSERT(notify_scope(&stick, "seat0") == NOTIFY_SCOPE_INFO);
        set(&stick.cause, "device");
        set(&stick.seat, "");
        ASSERT(notify_scope(&stick, "seat0") == NOTIFY_SCOPE_INFO);
        notify_blocked_done(&stick);
        notify_blocked_done(&mount);
}

/* Information: says that anyone may have caused it, names the way out, offers nothing. */
TEST(blocked_information) {
        NotifyBlocked b = blocked("", "", "", "", 0);
        char *summary, *body;

        for (int actions = 0; actions <= 1; actions++) {
                ASSERT(notify_text_blocked(&b, false, actions, &summary, &body) == 0);
                ASSERT_STREQ(summary, "A filesystem of type hfs was not mounted");
                ASSERT_STREQ(body, "A filesystem of type hfs could not be mounted because it is turned off on this "
                             "computer. hfs (Apple Macintosh file system support): orphaned upstream; removal "
                             "proposed, then withdrawn (2025).\n"
                             "It may have been caused by another user or by a program in a user namespace: fsgate "
                             "cannot tell who, so it offers no Allow here. If you need hfs, an administrator can "
                             "turn it on with the command: fsgatectl allow hfs");
                free(summary);
                free(body);
        }
        ASSERT(notify_text_details(&b, 1, false, &summary, &body) == 0);
        ASSERT(strstr(body, "Cause: a mount request; any user may have made it, also in a user namespace (fsgate "
                      "cannot tell who)\n"));
        ASSERT(!strstr(body, "Allow:"));
        ASSERT(!strstr(body, "Allow once:"));
        ASSERT(strstr(body, "fsgatectl allow hfs"));
        free(summary);
        free(body);
        notify_blocked_done(&b);
}

/* A notification's texts: notify_text_outcome()'s, each call replacing the last. */
typedef struct Texts {
        char *summary, *body;
} Texts;

static void texts_done(Texts *t) {
        free(t->summary);
        free(t->body);
        *t = (Texts) {};
}

static void outcome(Texts *t, const NotifyBlocked *b, NotifyRequest req, NotifyOutcome o, const char *message,
                    const NotifyMount *mounts, size_t n_mounts) {
        texts_done(t);
        ASSERT(notify_text_outcome(b, req, o, message, mounts, n_mounts, &t->summary, &t->body) == 0);
}

TEST(outcome) {
        NotifyBlocked b = blocked("/dev/sdb1", "", "", "", 0);
        NotifyMount mounted = { .where = "/media/u/disk" }, failed = { .error = "boom" }, untried = {};
        Texts t = {};

        outcome(&t, &b, NOTIFY_REQUEST_ALLOW, NOTIFY_OUTCOME_ALLOWED, NULL, NULL, 0);
        ASSERT_STREQ(t.summary, "hfs allowed");
        ASSERT(strstr(t.body, "Mount the drive again."));
        outcome(&t, &b, NOTIFY_REQUEST_LOAD, NOTIFY_OUTCOME_ALLOWED, NULL, NULL, 0);
        ASSERT_STREQ(t.summary, "hfs allowed until the computer restarts");
        /* After the Allow, udisks2 mounted it: say where. */
        outcome(&t, &b, NOTIFY_REQUEST_ALLOW, NOTIFY_OUTCOME_ALLOWED, NULL, &mounted, 1);
        ASSERT_STREQ(t.summary, "The drive /dev/sdb1 is mounted");
        ASSERT(strstr(t.body, "\nThe drive /dev/sdb1 is mounted at /media/u/disk."));
        outcome(&t, &b, NOTIFY_REQUEST_ALLOW, NOTIFY_OUTCOME_ALLOWED, NULL, &failed, 1);
        ASSERT_STREQ(t.summary, "hfs allowed");
        ASSERT(strstr(t.body, "\nThe drive /dev/sdb1 could not be mounted: boom"));
        outcome(&t, &b, NOTIFY_REQUEST_ALLOW, NOTIFY_OUTCOME_ALLOWED, NULL, &untried, 1);
        ASSERT(strstr(t.body, "\nThe drive /dev/sdb1: mount it again."));
        outcome(&t, &b, NOTIFY_REQUEST_ALLOW, NOTIFY_OUTCOME_REFUSED, "Not authorized", NULL, 0);
        ASSERT_STREQ(t.summary, "hfs not allowed");
        ASSERT_STREQ(t.body, "Not authorized; nothing was changed.");
        outcome(&t, &b, NOTIFY_REQUEST_LOAD, NOTIFY_OUTCOME_CANCELLED, "x", NULL, 0);
        ASSERT_STREQ(t.summary, "hfs: cancelled");
        outcome(&t, &b, NOTIFY_REQUEST_ALLOW, NOTIFY_OUTCOME_FAILED, "A file decides", NULL, 0);
        ASSERT_STREQ(t.summary, "hfs could not be allowed");
        ASSERT_STREQ(t.body, "A file decides");
        texts_done(&t);
        notify_blocked_done(&b);
}

/* Issue 41: after two sticks of one question both are mounted, and the summary names both (it
 * named the first only); three: the first and how many more. A cancelled dialog says so once. */
TEST(outcome_two_sticks) {
        NotifyBlocked b[3] = { blocked("/dev/sdb1", "ONE", "", "", 0), blocked("/dev/sdc1", "", "", "", 0),
                               blocked("/dev/sdd1", "", "", "", 0) };
        NotifyMount m[3] = { { .where = "/media/u/ONE" }, { .where = "/media/u/disk" }, { .where = "/media/u/d2" } };
        Texts t = {};

        outcome(&t, b, NOTIFY_REQUEST_ALLOW, NOTIFY_OUTCOME_ALLOWED, NULL, m, 2);
        ASSERT_STREQ(t.summary, "“ONE” and /dev/sdc1 are mounted");
        ASSERT(strstr(t.body, "\n“ONE” is mounted at /media/u/ONE.\nThe drive /dev/sdc1 is mounted at /media/u/disk."));
        outcome(&t, &b[1], NOTIFY_REQUEST_READ_ONLY, NOTIFY_OUTCOME_ALLOWED, NULL, &m[1], 2);
        ASSERT_STREQ(t.summary, "The drive /dev/sdc1 and /dev/sdd1 are open, read-only");
        outcome(&t, b, NOTIFY_REQUEST_ALLOW, NOTIFY_OUTCOME_ALLOWED, NULL, m, 3);
        ASSERT_STREQ(t.summary, "“ONE” and 2 other drives are mounted");
        m[1] = (NotifyMount) { .error = "boom" };
        outcome(&t, b, NOTIFY_REQUEST_ALLOW, NOTIFY_OUTCOME_ALLOWED, NULL, m, 2);
        ASSERT_STREQ(t.summary, "hfs allowed");
        outcome(&t, b, NOTIFY_REQUEST_ALLOW, NOTIFY_OUTCOME_CANCELLED, "Not authorized (nothing was changed)", NULL, 0);
        ASSERT_STREQ(t.body, "The password dialog was closed; nothing was changed.");
        texts_done(&t);
        for (size_t i = 0; i < ELEMENTSOF(b); i++)
                notify_blocked_done(&b[i]);
}

/* Issue 41: in German the kernel source's word on a module is German too; no English phrase
 * of core/risk.c is left. Last in the file: it binds the catalog, and English comes back
 * only with LANGUAGE unset again. */
TEST(german_risk_phrase) {
        static const char * const english[] = {
                "orphaned", "removal proposed", "withdrawn", "deprecated", "any user", "maintained", "upstream;",
        };
        NotifyBlocked b = blocked("/dev/sdb1", "", "", "", 0);
        const char *dir = getenv("FSGATE_LOCALEDIR");
        char *summary, *body;

        ASSERT(dir && *dir);    /* meson sets it: BUILD/po */
        setenv("LC_ALL", "C.UTF-8", 1);
        setenv("LANGUAGE", "de", 1);
        fsg_i18n_init();
        ASSERT(notify_text_blocked(&b, true, true, &summary, &body) == 0);
        ASSERT(strstr(body, "hfs (Apple Macintosh file system support): upstream verwaist; Entfernung vorgeschlagen, "
                            "dann zurückgezogen (2025)."));
        for (size_t i = 0; i < ELEMENTSOF(english); i++) {
                if (strstr(body, english[i]))
                        fprintf(stderr, "English \"%s\" in: %s\n", english[i], body);
                ASSERT(!strstr(body, english[i]));
        }
        free(summary);
        free(body);
        /* The C locale, as without fsg_i18n_init(): gettext answers in English, LANGUAGE or not. */
        unsetenv("LANGUAGE");
        setlocale(LC_ALL, "C");
        ASSERT(notify_text_blocked(&b, true, true, &summary, &body) == 0);
        ASSERT(strstr(body, "orphaned upstream"));
        free(summary);
        free(body);
        notify_blocked_done(&b);
}
