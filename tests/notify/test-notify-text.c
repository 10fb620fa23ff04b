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

static void set(char **field, const char *value) {
        free(*field);
        *field = strdup(value);
}

/* A notification's texts, each call below replacing the last. */
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

static void blocked_texts(Texts *t, const NotifyBlocked *b, bool ask, bool actions, bool open_safely) {
        texts_done(t);
        ASSERT(notify_text_blocked(b, ask, actions, open_safely, &t->summary, &t->body) == 0);
}

static void choices_texts(Texts *t, const NotifyBlocked *b, size_t n, bool ask, bool open_safely) {
        texts_done(t);
        ASSERT(notify_text_choices(b, n, ask, open_safely, &t->summary, &t->body) == 0);
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
        Texts t = {};
        char *markup;
        const char *drive;

        free(b.label);
        b.label = notify_clean("<b>X</b>\u2029Allowed\u202e\u200b", 64);
        free(b.vendor);
        b.vendor = notify_clean("Evil\xc2\x85" "Corp", 64);
        blocked_texts(&t, &b, true, true, false);
        ASSERT_STREQ(t.summary, "“<b>X</b> Allowed” was not mounted");
        /* What else names the drive is the last line; the two line breaks before it are ours
         * (the kernel source's word on hfs, then the drive). */
        drive = strrchr(t.body, '\n');
        ASSERT_STREQ(drive, "\nEvil Corp, /dev/sdb1");
        ASSERT(strchr(t.body, '\n') == strstr(t.body, "\nhfs: orphaned upstream"));
        ASSERT(strchr(strchr(t.body, '\n') + 1, '\n') == drive);
        /* The choices name the label in full, on its line, escaped for markup. */
        choices_texts(&t, &b, 1, true, false);
        ASSERT_STREQ(t.summary, "Choices for “<b>X</b> Allowed”");
        ASSERT(strstr(t.body, "\nLabel: <b>X</b> Allowed\nDrive: Evil Corp\n"));
        markup = notify_markup_escape(t.body);
        ASSERT(strstr(markup, "\nLabel: &lt;b&gt;X&lt;/b&gt; Allowed\n"));
        free(markup);
        texts_done(&t);
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
 * not every server draws, and spoke of modprobe.d paths. Issue 41: GNOME Shell drew three of
 * four buttons and six lines of the body, whose last line explained the fourth. Now: why, and
 * the safe way to the files (the first button's, or its one command without actions); the
 * rest behind "Other choices…". */
TEST(blocked_device) {
        NotifyBlocked b = blocked("/dev/sdb1", "BACKUP", "SanDisk", "Cruzer", 16008609792ULL);
        Texts t = {};

        blocked_texts(&t, &b, true, true, false);
        ASSERT_STREQ(t.summary, "“BACKUP” was not mounted");
        ASSERT_STREQ(t.body, "Its filesystem, hfs, is turned off on this computer. Open read-only turns it on for "
                     "this drive only, until it is removed.\n"
                     "hfs: orphaned upstream; removal proposed, then withdrawn (2025).\n"
                     "SanDisk Cruzer, 16.0 GB, /dev/sdb1");
        ASSERT(!strstr(t.body, "button"));
        ASSERT(!strstr(t.body, "modprobe.d"));
        /* No actions on this server: the one command that does the safe thing, on its line. */
        blocked_texts(&t, &b, true, false, false);
        ASSERT_STREQ(t.body, "Its filesystem, hfs, is turned off on this computer. To turn it on for this drive only, "
                     "until it is removed, then open it again:\n"
                     "fsgatectl allow --device=/dev/sdb1 hfs\n"
                     "hfs: orphaned upstream; removal proposed, then withdrawn (2025).");
        ASSERT(!strstr(t.body, "Allow"));
        ASSERT(!strstr(t.body, "Open"));
        notify_blocked_done(&b);

        /* Vendor and model name it when there is no label. */
        b = blocked("/dev/sdb1", "", "SanDisk", "Cruzer", 16008609792ULL);
        blocked_texts(&t, &b, true, true, false);
        ASSERT_STREQ(t.summary, "SanDisk Cruzer was not mounted");
        ASSERT(strstr(t.body, "\n16.0 GB, /dev/sdb1"));
        notify_blocked_done(&b);

        b = blocked("/dev/sdc1", "", "", "", 2000000);
        set(&b.origin, "admin");
        blocked_texts(&t, &b, true, true, false);
        ASSERT_STREQ(t.summary, "The drive /dev/sdc1 was not mounted");
        ASSERT(strstr(t.body, "Its filesystem, hfs, was turned off by an administrator. ") == t.body);
        ASSERT(strstr(t.body, "\n2.0 MB"));
        ASSERT(!strstr(t.body, "/dev/sdc1"));      /* the summary names it */
        /* Nothing beyond the node: the summary said it all, no line of its own. */
        b.size = 0;
        blocked_texts(&t, &b, true, true, false);
        ASSERT(!strstr(t.body, "/dev/sdc1"));
        ASSERT(!strstr(t.body, "2025).\n"));
        texts_done(&t);
        notify_blocked_done(&b);
}

/* Issue 38: where a route reads the type (squashfs: squashfuse), the files first, safely. */
TEST(blocked_open_safely) {
        NotifyBlocked b = blocked("/dev/sdb1", "PHOTOS", "", "", 0);
        Texts t = {};

        set(&b.type, "squashfs");
        set(&b.module, "squashfs");
        blocked_texts(&t, &b, true, true, true);
        ASSERT_STREQ(t.summary, "“PHOTOS” was not mounted");
        ASSERT_STREQ(t.body, "Its filesystem, squashfs, is turned off on this computer. Open safely still shows its "
                     "files, read-only, without turning squashfs on.\n"
                     "/dev/sdb1");
        blocked_texts(&t, &b, true, false, true);
        ASSERT_STREQ(t.body, "Its filesystem, squashfs, is turned off on this computer. Its files can still be read "
                     "safely, without it, with:\n"
                     "fsgatectl open /dev/sdb1");
        /* Information never offers it, nor a bare type. */
        blocked_texts(&t, &b, false, true, true);
        ASSERT(!strstr(t.body, "safely"));
        notify_blocked_done(&b);
        /* A node that needs quoting is quoted. */
        b = blocked("/dev/disk/by-label/MY STICK", "", "", "", 0);
        blocked_texts(&t, &b, true, false, true);
        ASSERT(strstr(t.body, "\nfsgatectl open '/dev/disk/by-label/MY STICK'\nhfs: "));
        blocked_texts(&t, &b, true, false, false);
        ASSERT(strstr(t.body, "\nfsgatectl allow '--device=/dev/disk/by-label/MY STICK' hfs\n"));
        texts_done(&t);
        notify_blocked_done(&b);
}

TEST(blocked_no_device) {
        NotifyBlocked b = blocked("", "", "", "", 0);
        Texts t = {};

        set(&b.source, "");
        set(&b.origin, "cmdline");
        blocked_texts(&t, &b, true, true, true);
        ASSERT_STREQ(t.summary, "A filesystem of type hfs was not mounted");
        ASSERT_STREQ(t.body, "Filesystem hfs is turned off on the kernel command line. Allow once turns it on until the "
                     "computer restarts, Allow from now on; then mount it again.\n"
                     "hfs: orphaned upstream; removal proposed, then withdrawn (2025).");
        blocked_texts(&t, &b, true, false, false);
        ASSERT(strstr(t.body, "An administrator can turn it on with:\nfsgatectl allow hfs\n"));
        texts_done(&t);
        notify_blocked_done(&b);
}

/* "Other choices…": every choice a line, the commands, then everything known. */
TEST(choices) {
        NotifyBlocked b[2] = { blocked("/dev/sdb1", "BACKUP", "SanDisk", "", 2000000),
                               blocked("/dev/sdc1", "", "", "", 0) };
        Texts t = {};

        choices_texts(&t, b, 2, true, false);
        ASSERT_STREQ(t.summary, "Choices for “BACKUP”");
        ASSERT(strstr(t.body, "Open read-only: hfs for this drive only.\nAllow once: hfs until the computer restarts.\n"
                      "Allow: hfs from now on.\nEach asks for an administrator's password.\n"
                      "hfs (Apple Macintosh file system support): orphaned upstream; removal proposed, then "
                      "withdrawn (2025).\n"
                      "In a terminal:\nfsgatectl allow --device=/dev/sdb1 hfs\nfsgatectl allow hfs\n") == t.body);
        ASSERT(strstr(t.body, "Device: /dev/sdb1\nLabel: BACKUP\nDrive: SanDisk\nSize: 2.0 MB\n"
                      "Also not mounted: /dev/sdc1\n"));
        ASSERT(strstr(t.body, "Why: denied by /usr/lib/modprobe.d/60-blacklist_fs-hfs.conf (distribution default)\n"));
        ASSERT(!strstr(t.body, "UUID"));
        ASSERT(!strstr(t.body, "safely"));
        ASSERT(strstr(t.body, "\nCause: a drive that appeared at seat0"));
        choices_texts(&t, b, 1, true, true);
        ASSERT(strstr(t.body, "Open safely: read-only, hfs stays off.\nOpen read-only: hfs for this drive only.\n") == t.body);
        ASSERT(strstr(t.body, "\nAll but Open safely ask for an administrator's password.\n"));
        ASSERT(strstr(t.body, "\nIn a terminal:\nfsgatectl open /dev/sdb1\nfsgatectl allow --device=/dev/sdb1 hfs\n"
                      "fsgatectl allow hfs\n"));
        texts_done(&t);
        notify_blocked_done(&b[0]);
        notify_blocked_done(&b[1]);
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
        Texts t = {};

        for (int actions = 0; actions <= 1; actions++) {
                blocked_texts(&t, &b, false, actions, true);
                ASSERT_STREQ(t.summary, "A filesystem of type hfs was not mounted");
                ASSERT_STREQ(t.body, "Filesystem hfs is turned off on this computer. Anyone may have asked for it. An "
                             "administrator can turn it on with:\n"
                             "fsgatectl allow hfs");
        }
        choices_texts(&t, &b, 1, false, true);
        ASSERT_STREQ(t.summary, "Filesystem hfs: details");
        ASSERT(strstr(t.body, "hfs (Apple Macintosh file system support): orphaned upstream") == t.body);
        ASSERT(strstr(t.body, "\nCause: a mount request; any user may have made it, also in a user namespace (fsgate "
                      "cannot tell who)"));
        ASSERT(!strstr(t.body, "Allow:"));
        ASSERT(!strstr(t.body, "Allow once:"));
        ASSERT(!strstr(t.body, "--device"));
        ASSERT(!strstr(t.body, "fsgatectl open"));
        ASSERT(strstr(t.body, "\nIn a terminal:\nfsgatectl allow hfs\n"));
        texts_done(&t);
        notify_blocked_done(&b);
}

/* The lines a body takes at width characters, its words wrapped as a notification server's
 * label wraps them (greedy; a word longer than a line takes lines of its own). */
static size_t wrapped_lines(const char *body, size_t width) {
        size_t lines = 0;

        for (const char *p = body;;) {
                size_t len = strcspn(p, "\n"), col = 0;
                const char *end = p + len;

                lines++;
                for (const char *w = p; w < end;) {
                        size_t n = strcspn(w, " "), chars = 0;

                        if (w + n > end)
                                n = end - w;
                        for (size_t k = 0; k < n; k++)
                                chars += ((unsigned char) w[k] & 0xc0) != 0x80;
                        if (col > 0 && col + 1 + chars > width) {
                                lines++;
                                col = 0;
                        }
                        col += (col > 0) + chars;
                        while (col > width) {
                                lines++;
                                col -= width;
                        }
                        w += n;
                        while (w < end && *w == ' ')
                                w++;
                }
                if (!*end)
                        return lines;
                p = end + 1;
        }
}

TEST(wrapped_lines) {
        ASSERT(wrapped_lines("", 50) == 1);
        ASSERT(wrapped_lines("a b\nc", 50) == 2);
        ASSERT(wrapped_lines("aaaa bbbb", 4) == 2);
        ASSERT(wrapped_lines("aaaa bbbb", 9) == 1);
        ASSERT(wrapped_lines("aaaaaaaaa", 4) == 3);
        ASSERT(wrapped_lines("ää öö", 5) == 1);
}

/* Issue 41: GNOME Shell shows six lines of a body, about 50 characters each at its banner's
 * width: the first notification says all it has to say in them, in every case; so do the
 * choices before their commands and details. Labels and drives as sticks name themselves
 * (FAT's 11 characters, SCSI's 8 and 16). */
TEST(six_lines) {
        static const char * const origins[] = { "vendor", "admin", "local", "runtime", "cmdline" };
        static const char * const types[] = { "hfs", "squashfs", "freevxfs" };
        static const struct { const char *device, *label, *vendor, *model; uint64_t size; } drives[] = {
                { "/dev/sdb1", "BACKUP 2024", "SanDisk", "Cruzer Blade", 16008609792ULL },
                { "/dev/sdb1", "", "Kingston", "DataTraveler 3.0", 64023257088ULL },
                { "/dev/nvme0n1p12", "", "", "", 0 },
                { "/dev/mmcblk0p1", "", "", "", 2000000 },
                { "", "", "", "", 0 },
        };

        for (size_t o = 0; o < ELEMENTSOF(origins); o++)
                for (size_t t = 0; t < ELEMENTSOF(types); t++)
                        for (size_t d = 0; d < ELEMENTSOF(drives); d++)
                                for (int mask = 0; mask < 8; mask++) {
                                        bool ask = mask & 1, actions = mask & 2, safely = mask & 4;
                                        NotifyBlocked b = blocked(drives[d].device, drives[d].label, drives[d].vendor,
                                                                  drives[d].model, drives[d].size);
                                        Texts tx = {};
                                        char *password;

                                        set(&b.origin, origins[o]);
                                        set(&b.type, types[t]);
                                        set(&b.module, types[t]);
                                        blocked_texts(&tx, &b, ask, actions, safely);
                                        if (wrapped_lines(tx.body, 50) > 6)
                                                fprintf(stderr, "%zu lines:\n%s\n", wrapped_lines(tx.body, 50), tx.body);
                                        ASSERT(wrapped_lines(tx.body, 50) <= 6);
                                        choices_texts(&tx, &b, 1, ask, safely);
                                        password = strstr(tx.body, "password.");
                                        ASSERT(!ask == !password);
                                        if (password) {
                                                password[strlen("password.")] = 0;
                                                ASSERT(wrapped_lines(tx.body, 50) <= 6);
                                        }
                                        texts_done(&tx);
                                        notify_blocked_done(&b);
                                }
}

/* Issue 41: at most three buttons (GNOME Shell draws no more) in every notification, the
 * safest first; nothing that changes anything on information. */
TEST(actions_bounded) {
        static const char * const known[] = {
                "default", "choices", "open-safely", "open-read-only", "allow-once", "allow",
        };

        for (NoteKind kind = NOTE_NONE; kind <= NOTE_OUTCOME; kind++)
                for (int mask = 0; mask < 8; mask++)
                        for (NotifyRequest req = NOTIFY_REQUEST_ALLOW; req <= NOTIFY_REQUEST_OPEN_SAFELY; req++)
                                for (NotifyOutcome o = NOTIFY_OUTCOME_ALLOWED; o <= NOTIFY_OUTCOME_FAILED; o++) {
                                        bool ask = mask & 1, device = mask & 2, safely = mask & 4;
                                        const char *a[NOTIFY_ACTIONS_MAX];
                                        size_t buttons = 0, n = 0;

                                        notify_actions(kind, ask, device, safely, req, o, a);
                                        for (; a[n]; n += 2) {
                                                bool ok = false;

                                                ASSERT(a[n + 1] && *a[n + 1]);
                                                for (size_t k = 0; k < ELEMENTSOF(known); k++)
                                                        ok = ok || streq(a[n], known[k]);
                                                ASSERT(ok);
                                                buttons += !streq(a[n], "default");
                                                if (!ask)
                                                        ASSERT(streq(a[n], "default"));
                                                if (streq(a[n], "open-safely"))
                                                        ASSERT(safely && device);
                                                if (streq(a[n], "open-read-only"))
                                                        ASSERT(device);
                                        }
                                        ASSERT(buttons <= NOTIFY_BUTTONS_MAX);
                                        ASSERT(NOTIFY_BUTTONS_MAX == 3);
                                }
}

static void assert_actions(const char * const *a, const char *want) {
        char got[256] = "";

        for (size_t n = 0; a[n]; n += 2) {
                if (*got)
                        strcat(got, " ");
                strcat(got, a[n]);
        }
        ASSERT_STREQ(got, want);
}

TEST(actions) {
        const char *a[NOTIFY_ACTIONS_MAX];

        notify_actions(NOTE_BLOCKED, true, true, true, 0, 0, a);
        assert_actions(a, "default open-safely open-read-only choices");
        ASSERT_STREQ(a[1], "Other choices…");
        ASSERT_STREQ(a[3], "Open safely");
        notify_actions(NOTE_BLOCKED, true, true, false, 0, 0, a);
        assert_actions(a, "default open-read-only choices");
        notify_actions(NOTE_BLOCKED, true, false, true, 0, 0, a);
        assert_actions(a, "default allow-once allow");
        notify_actions(NOTE_BLOCKED, false, true, true, 0, 0, a);
        assert_actions(a, "default");
        ASSERT_STREQ(a[1], "Details");
        notify_actions(NOTE_CHOICES, true, true, true, 0, 0, a);
        assert_actions(a, "open-safely allow-once allow");
        notify_actions(NOTE_CHOICES, true, true, false, 0, 0, a);
        assert_actions(a, "open-read-only allow-once allow");
        notify_actions(NOTE_CHOICES, false, true, false, 0, 0, a);
        assert_actions(a, "");
        notify_actions(NOTE_PROGRESS, true, true, true, NOTIFY_REQUEST_OPEN_SAFELY, 0, a);
        assert_actions(a, "");
        /* After a refusal or a closed dialog, the choices of the notification clicked. */
        notify_actions(NOTE_OUTCOME, true, true, false, NOTIFY_REQUEST_ALLOW, NOTIFY_OUTCOME_CANCELLED, a);
        assert_actions(a, "open-read-only allow-once allow");
        notify_actions(NOTE_OUTCOME, true, true, true, NOTIFY_REQUEST_OPEN_SAFELY, NOTIFY_OUTCOME_REFUSED, a);
        assert_actions(a, "default open-safely open-read-only choices");
        notify_actions(NOTE_OUTCOME, true, true, true, NOTIFY_REQUEST_OPEN_SAFELY, NOTIFY_OUTCOME_FAILED, a);
        assert_actions(a, "open-read-only choices");
        notify_actions(NOTE_OUTCOME, true, true, true, NOTIFY_REQUEST_OPEN_SAFELY, NOTIFY_OUTCOME_ALLOWED, a);
        assert_actions(a, "");
        notify_actions(NOTE_OUTCOME, true, true, false, NOTIFY_REQUEST_ALLOW, NOTIFY_OUTCOME_FAILED, a);
        assert_actions(a, "");
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
        /* Issue 41: in words, without polkit's reason in parentheses (the log has it). */
        outcome(&t, &b, NOTIFY_REQUEST_ALLOW, NOTIFY_OUTCOME_REFUSED, "The authorization check failed (x); refusing",
                NULL, 0);
        ASSERT_STREQ(t.summary, "hfs not allowed");
        ASSERT_STREQ(t.body, "Not authorized; nothing was changed.");
        outcome(&t, &b, NOTIFY_REQUEST_LOAD, NOTIFY_OUTCOME_CANCELLED, "x", NULL, 0);
        ASSERT_STREQ(t.summary, "Cancelled; nothing was changed");
        ASSERT_STREQ(t.body, "The password dialog for hfs was closed.");
        outcome(&t, &b, NOTIFY_REQUEST_ALLOW, NOTIFY_OUTCOME_FAILED, "A file decides", NULL, 0);
        ASSERT_STREQ(t.summary, "hfs could not be allowed");
        ASSERT_STREQ(t.body, "A file decides");
        texts_done(&t);
        notify_blocked_done(&b);
}

/* Open safely: a note while it works, then where the files are and how to close them; a
 * refusal or a failure in words, about the stick. */
TEST(outcome_open_safely) {
        NotifyBlocked b[2] = { blocked("/dev/sdb1", "PHOTOS", "", "", 0), blocked("/dev/sdc1", "", "", "", 0) };
        NotifyMount m[2] = { { .where = "/run/fsgate-open/0a1b" }, { .where = "/run/fsgate-open/2c3d" } };
        Texts t = {};

        set(&b[0].type, "squashfs");
        ASSERT(notify_text_progress(&b[0], &t.summary, &t.body) == 0);
        ASSERT_STREQ(t.summary, "Opening “PHOTOS” safely…");
        ASSERT_STREQ(t.body, "Read-only, without turning squashfs on.");
        outcome(&t, b, NOTIFY_REQUEST_OPEN_SAFELY, NOTIFY_OUTCOME_ALLOWED, NULL, m, 1);
        ASSERT_STREQ(t.summary, "“PHOTOS” is open safely");
        ASSERT_STREQ(t.body, "Read-only; squashfs stays turned off.\n"
                     "“PHOTOS” is open at /run/fsgate-open/0a1b. To close it:\n"
                     "fsgatectl close /dev/sdb1");
        outcome(&t, b, NOTIFY_REQUEST_OPEN_SAFELY, NOTIFY_OUTCOME_ALLOWED, NULL, m, 2);
        ASSERT_STREQ(t.summary, "“PHOTOS” and /dev/sdc1 are open safely");
        ASSERT(strstr(t.body, "\nThe drive /dev/sdc1 is open at /run/fsgate-open/2c3d. To close it:\n"
                      "fsgatectl close /dev/sdc1"));
        outcome(&t, b, NOTIFY_REQUEST_OPEN_SAFELY, NOTIFY_OUTCOME_REFUSED, "Not authorized (polkit)", NULL, 0);
        ASSERT_STREQ(t.summary, "“PHOTOS” was not opened safely");
        ASSERT_STREQ(t.body, "Not authorized; nothing was changed.");
        outcome(&t, b, NOTIFY_REQUEST_OPEN_SAFELY, NOTIFY_OUTCOME_CANCELLED, NULL, NULL, 0);
        ASSERT_STREQ(t.summary, "Cancelled; nothing was changed");
        ASSERT_STREQ(t.body, "The password dialog for “PHOTOS” was closed.");
        outcome(&t, b, NOTIFY_REQUEST_OPEN_SAFELY, NOTIFY_OUTCOME_FAILED,
                notify_open_error_text("org.fsgate.fsgate1.Error.InUse"), NULL, 0);
        ASSERT_STREQ(t.summary, "“PHOTOS” could not be opened safely");
        ASSERT_STREQ(t.body, "It is in use: mounted, or held by another program.");
        ASSERT(notify_open_error_text("org.fsgate.fsgate1.Error.OpenFailed"));
        ASSERT(notify_open_error_text("org.fsgate.fsgate1.Error.NoRoute"));
        ASSERT(notify_open_error_text("org.freedesktop.DBus.Error.LimitsExceeded"));
        ASSERT(!notify_open_error_text("org.fsgate.fsgate1.Error.InvalidArgs"));
        ASSERT(!notify_open_error_text(NULL));
        texts_done(&t);
        notify_blocked_done(&b[0]);
        notify_blocked_done(&b[1]);
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
        outcome(&t, &b[1], NOTIFY_REQUEST_OPEN_READ_ONLY, NOTIFY_OUTCOME_ALLOWED, NULL, &m[1], 2);
        ASSERT_STREQ(t.summary, "The drive /dev/sdc1 and /dev/sdd1 are open, read-only");
        outcome(&t, b, NOTIFY_REQUEST_ALLOW, NOTIFY_OUTCOME_ALLOWED, NULL, m, 3);
        ASSERT_STREQ(t.summary, "“ONE” and 2 other drives are mounted");
        outcome(&t, b, NOTIFY_REQUEST_OPEN_SAFELY, NOTIFY_OUTCOME_ALLOWED, NULL, m, 3);
        ASSERT_STREQ(t.summary, "“ONE” and 2 other drives are open safely");
        m[1] = (NotifyMount) { .error = "boom" };
        outcome(&t, b, NOTIFY_REQUEST_ALLOW, NOTIFY_OUTCOME_ALLOWED, NULL, m, 2);
        ASSERT_STREQ(t.summary, "hfs allowed");
        outcome(&t, b, NOTIFY_REQUEST_ALLOW, NOTIFY_OUTCOME_CANCELLED, "Not authorized (nothing was changed)", NULL, 0);
        ASSERT(strstr(t.summary, "Cancelled; nothing was changed"));
        ASSERT(!strstr(t.body, "ancelled"));
        ASSERT(!strstr(t.body, "nothing was changed"));
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
        Texts t = {};

        ASSERT(dir && *dir);    /* meson sets it: BUILD/po */
        setenv("LC_ALL", "C.UTF-8", 1);
        setenv("LANGUAGE", "de", 1);
        fsg_i18n_init();
        blocked_texts(&t, &b, true, true, false);
        ASSERT(strstr(t.body, "\nhfs: upstream verwaist; Entfernung vorgeschlagen, dann zurückgezogen (2025)."));
        for (size_t i = 0; i < ELEMENTSOF(english); i++) {
                if (strstr(t.body, english[i]))
                        fprintf(stderr, "English \"%s\" in: %s\n", english[i], t.body);
                ASSERT(!strstr(t.body, english[i]));
        }
        /* The C locale, as without fsg_i18n_init(): gettext answers in English, LANGUAGE or not. */
        unsetenv("LANGUAGE");
        setlocale(LC_ALL, "C");
        blocked_texts(&t, &b, true, true, false);
        ASSERT(strstr(t.body, "orphaned upstream"));
        texts_done(&t);
        notify_blocked_done(&b);
}
