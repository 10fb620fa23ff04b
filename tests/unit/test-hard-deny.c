/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Hard denies: which install commands refuse explicit loads, the file a hard deny writes, and
 * the state (hard, deciding file, what each file says) over the real Debian module tree. */
#define _GNU_SOURCE
#include <sys/stat.h>

#include "autoload.h"
#include "load.h"
#include "store.h"
#include "strv.h"
#include "test-util.h"

static char *root;
static FsgContext *ctx;

TEST(install_command_loads) {
        /* What hardening tools write: nothing loads. */
        ASSERT(!fsg_install_command_loads("/bin/false", "cramfs"));
        ASSERT(!fsg_install_command_loads("/bin/true", "cramfs"));
        ASSERT(!fsg_install_command_loads("/usr/bin/disabled-filesys-by-security-misc", "cramfs"));
        ASSERT(!fsg_install_command_loads("/bin/echo modprobe --ignore-install cramfs", "cramfs"));
        /* modprobe without --ignore-install would run the same line again, another module is
         * not this one. */
        ASSERT(!fsg_install_command_loads("/sbin/modprobe cramfs", "cramfs"));
        ASSERT(!fsg_install_command_loads("/sbin/modprobe --ignore-install squashfs", "cramfs"));
        /* What loads it after all. */
        ASSERT(fsg_install_command_loads("/usr/lib/module-init-tools/unblacklist hfs; /sbin/modprobe --ignore-install hfs",
                                         "hfs"));
        ASSERT(fsg_install_command_loads("/sbin/modprobe --ignore-install hfs $CMDLINE_OPTS", "hfs"));
        ASSERT(fsg_install_command_loads("/sbin/modprobe -qi $MODPROBE_MODULE", "hfs"));
        ASSERT(fsg_install_command_loads("logger x && exec modprobe -i ocfs2-dlmfs", "ocfs2_dlmfs"));
        ASSERT(fsg_install_command_loads("/sbin/insmod /lib/modules/6.1/hfs.ko", "hfs"));
}

TEST(deny_file_content) {
        char *soft = fsg_deny_file_content("hfs", "hfs", "/etc/modprobe.d/60-blacklist_fs-hfs.conf", "/hook");
        char *hard = fsg_deny_file_content_mode("hfs", "hfs", "/etc/modprobe.d/60-blacklist_fs-hfs.conf", "/hook", true);

        ASSERT(soft && hard);
        ASSERT(!strstr(soft, "\ninstall hfs "));
        /* The exact line OpenSCAP's kernel_module_hfs_disabled rule matches:
         * ^\s*install\s+hfs\s+(/bin/false|/bin/true)$ */
        ASSERT(strstr(hard, "\ninstall hfs /bin/false\n"));
        ASSERT(strstr(hard, "\nblacklist hfs\n"));
        ASSERT(strstr(hard, "\nalias fs-hfs fsgate_blocked_hfs\n"));
        ASSERT(strncmp(hard, "# Written by fsgate", 19) == 0);
        free(soft);
        free(hard);
}

static const FsgEntry *get(FsgState **s, const char *name) {
        const FsgEntry *x = state_entry(ctx, s, name);
        ASSERT(x->described);
        return x;
}

static int change(FsgOp op, const char *name, uint64_t flags, FsgError *e) {
        return store_change(ctx, op, name, flags, e);
}

static bool mentions(const FsgEntry *x, const char *path, const char *line) {
        for (char **p = x->mentions; p && p[0] && p[1]; p += 2)
                if (streq(p[0], path) && streq(p[1], line))
                        return true;
        return false;
}

TEST(hard_deny_state) {
        FsgState *s = NULL;
        FsgError e = {};
        const FsgEntry *x;
        FsgPlan plan;
        char *load = NULL;

        x = get(&s, "minix");
        ASSERT(!x->hard && x->explicit_load && !x->denied);
        ASSERT_STREQ(x->install_command, "");
        ASSERT(!x->mentions);

        ASSERT_OK_E(change(FSG_OP_DENY, "minix", FSG_FLAG_HARD, &e), &e);
        x = get(&s, "minix");
        ASSERT(x->denied && x->hard && !x->explicit_load && x->blocks_reported);
        ASSERT_STREQ(x->install_command, "/bin/false");
        ASSERT_STREQ(x->install_file, "/etc/modprobe.d/60-blacklist_fs-minix.conf");
        ASSERT_STREQ(x->deciding_file, "/etc/modprobe.d/60-blacklist_fs-minix.conf");
        ASSERT(mentions(x, "/etc/modprobe.d/60-blacklist_fs-minix.conf", "install minix /bin/false"));
        ASSERT(mentions(x, "/etc/modprobe.d/60-blacklist_fs-minix.conf", "alias fs-minix fsgate_blocked_minix"));

        /* Load refuses it, with the error a client can act on; LOAD_NOW too, writing nothing. */
        ASSERT_ERR_E(fsg_load(ctx, "minix", &load, &e), &e, FSG_ERR_HARD_DENIED);
        ASSERT(strstr(e.message, "/etc/modprobe.d/60-blacklist_fs-minix.conf") && strstr(e.message, "/bin/false"));
        free(load);

        /* A plain deny keeps the hard deny (a soft profile, a button, Ansible's "denied"). */
        ASSERT(fsg_plan(ctx, FSG_OP_DENY, "minix", 0, &plan, &e) == 0 && plan.write == FSG_WRITE_NOTHING);
        ASSERT_OK_E(change(FSG_OP_DENY, "minix", 0, &e), &e);
        ASSERT(get(&s, "minix")->hard && get(&s, "minix")->denied);
        /* Only SOFT weakens it, and it needs what allowing needs: explicit loads work again. */
        ASSERT_OK_E(fsg_plan(ctx, FSG_OP_DENY, "minix", FSG_FLAG_SOFT, &plan, &e), &e);
        ASSERT(plan.write == FSG_WRITE_DENY && plan.action == FSG_ACTION_ALLOW);
        ASSERT_ERR_E(fsg_plan(ctx, FSG_OP_DENY, "minix", FSG_FLAG_SOFT | FSG_FLAG_HARD, &plan, &e),
                     &e, FSG_ERR_INVALID_ARGS);
        ASSERT_OK_E(change(FSG_OP_DENY, "minix", FSG_FLAG_SOFT, &e), &e);
        ASSERT(!get(&s, "minix")->hard && get(&s, "minix")->denied);
        /* Reset of a hard deny to the vendor's soft one: a weakening too. */
        ASSERT_OK_E(change(FSG_OP_DENY, "minix", FSG_FLAG_HARD, &e), &e);
        ASSERT(fsg_plan(ctx, FSG_OP_RESET, "minix", 0, &plan, &e) == 0 && plan.action == FSG_ACTION_ALLOW);
        ASSERT_OK_E(change(FSG_OP_DENY, "minix", FSG_FLAG_SOFT, &e), &e);
        ASSERT_OK_E(change(FSG_OP_DENY, "minix", FSG_FLAG_HARD, &e), &e);
        ASSERT_OK_E(change(FSG_OP_ALLOW, "minix", 0, &e), &e);
        x = get(&s, "minix");
        ASSERT(!x->denied && !x->hard);
        ASSERT(mentions(x, "/etc/modprobe.d/60-blacklist_fs-minix.conf", "(mask: empty or a link to /dev/null)"));
        ASSERT_OK_E(change(FSG_OP_RESET, "minix", 0, &e), &e);

        /* HARD belongs to Deny only. */
        ASSERT_ERR_E(change(FSG_OP_ALLOW, "minix", FSG_FLAG_HARD, &e), &e, FSG_ERR_INVALID_ARGS);
        ASSERT_ERR_E(change(FSG_OP_RESET, "minix", FSG_FLAG_HARD, &e), &e, FSG_ERR_INVALID_ARGS);
        fsg_state_unref(s);
}

TEST(foreign_hard_deny_decides) {
        FsgState *s = NULL;
        FsgError e = {};
        const FsgEntry *x;
        FsgPlan p;

        /* The regression: a vendor blacklist plus an admin's install line. status and Allow
         * must name the same file: the admin's. */
        write_file(root, "usr/lib/modprobe.d/60-blacklist_fs-hfs.conf", "blacklist hfs\n");
        write_file(root, "etc/modprobe.d/hardening.conf", "install hfs /bin/false\n");
        x = get(&s, "hfs");
        ASSERT(x->denied && x->hard && !x->blocks_reported);
        ASSERT_STREQ(x->deciding_file, "/etc/modprobe.d/hardening.conf");
        ASSERT(x->origin == FSG_ORIGIN_ADMIN);
        ASSERT(mentions(x, "/usr/lib/modprobe.d/60-blacklist_fs-hfs.conf", "blacklist hfs"));
        ASSERT_ERR_E(fsg_plan(ctx, FSG_OP_ALLOW, "hfs", 0, &p, &e), &e, FSG_ERR_FOREIGN_CONFIG);
        ASSERT(strstr(e.message, "/etc/modprobe.d/hardening.conf"));
        /* Already hard: a hard deny has nothing to add. */
        ASSERT(fsg_plan(ctx, FSG_OP_DENY, "hfs", FSG_FLAG_HARD, &p, &e) == 0 && p.write == FSG_WRITE_NOTHING);

        /* A CIS role's /bin/true, Kicksecure's script: hard. openSUSE's unblacklist: not. */
        write_file(root, "etc/modprobe.d/hardening.conf", "install hfs /bin/true\n");
        ASSERT(get(&s, "hfs")->hard);
        write_file(root, "etc/modprobe.d/hardening.conf", "install hfs /usr/bin/disabled-filesys-by-security-misc\n");
        ASSERT(get(&s, "hfs")->hard);
        write_file(root, "etc/modprobe.d/hardening.conf",
                   "install hfs /usr/lib/module-init-tools/unblacklist hfs; /sbin/modprobe --ignore-install hfs\n");
        x = get(&s, "hfs");
        ASSERT(!x->hard && x->explicit_load);
        ASSERT_STREQ(x->deciding_file, "/usr/lib/modprobe.d/60-blacklist_fs-hfs.conf");

        /* A module with soft dependencies: kmod 30 ignores its install command. */
        write_file(root, "etc/modprobe.d/hardening.conf", "install hfs /bin/false\nsoftdep hfs pre: nls_utf8\n");
        x = get(&s, "hfs");
        ASSERT(!x->hard);
        ASSERT_STREQ(x->install_command, "");
        /* ... so a hard deny of it is refused, not written and reported done; --soft cannot
         * weaken someone else's hard deny either. */
        ASSERT(x->install_ignored);
        ASSERT_ERR_E(fsg_plan(ctx, FSG_OP_DENY, "hfs", FSG_FLAG_HARD | FSG_FLAG_FORCE, &p, &e),
                     &e, FSG_ERR_HARD_DENY_IGNORED);
        ASSERT(strstr(e.message, "soft dependencies"));
        write_file(root, "etc/modprobe.d/hardening.conf", "install hfs /bin/false\n");
        ASSERT_ERR_E(fsg_plan(ctx, FSG_OP_DENY, "hfs", FSG_FLAG_SOFT, &p, &e), &e, FSG_ERR_FOREIGN_CONFIG);
        ASSERT(strstr(e.message, "/etc/modprobe.d/hardening.conf"));

        {
                char *p1, *p2;
                ASSERT(asprintf(&p1, "%s/etc/modprobe.d/hardening.conf", root) > 0);
                ASSERT(asprintf(&p2, "%s/usr/lib/modprobe.d/60-blacklist_fs-hfs.conf", root) > 0);
                ASSERT(unlink(p1) == 0 && unlink(p2) == 0);
                free(p1);
                free(p2);
        }
        fsg_state_unref(s);
}


static void remove_file(const char *rel) {
        char *p;
        ASSERT(asprintf(&p, "%s/%s", root, rel) > 0);
        ASSERT(unlink(p) == 0);
        free(p);
}

/* The load refused with HardDenied naming dep and file (and nothing else happens: the
 * refusal comes before any insert, so this runs on the host). */
static void assert_load_refused(const char *name, const char *dep, const char *file) {
        FsgError e = {};
        FsgPlan p;

        ASSERT_ERR_E(fsg_load(ctx, name, NULL, &e), &e, FSG_ERR_HARD_DENIED);
        ASSERT(strstr(e.message, dep) && strstr(e.message, file));
        e = (FsgError) {};
        ASSERT_ERR_E(fsg_plan(ctx, FSG_OP_ALLOW, name, FSG_FLAG_LOAD_NOW, &p, &e), &e, FSG_ERR_HARD_DENIED);
        ASSERT(strstr(e.message, dep) && strstr(e.message, file));
}

static void assert_blocked_by(FsgState **s, const char *name, const char *dep, const char *file) {
        const FsgEntry *x = get(s, name);
        const FsgHardDep *d = fsg_entry_load_blocker(x);
        FsgError e = {};

        ASSERT(d);
        ASSERT_STREQ(d->module, dep);
        ASSERT_STREQ(d->install_file, file);
        ASSERT(!x->hard && x->explicit_load && !fsg_entry_explicit_load(x));
        ASSERT_ERR_E(fsg_load_refused(x, &e), &e, FSG_ERR_HARD_DENIED);
        assert_load_refused(name, dep, file);
}

/* Not refused, judged without loading anything: the check Load makes first, and Allow with
 * LOAD_NOW's plan (which writes nothing for an allowed module). */
static void assert_not_blocked(FsgState **s, const char *name) {
        const FsgEntry *x = get(s, name);
        FsgError e = {};
        FsgPlan p;

        ASSERT(!fsg_entry_load_blocker(x) && fsg_entry_explicit_load(x));
        ASSERT_OK_E(fsg_load_refused(x, &e), &e);
        ASSERT(fsg_plan(ctx, FSG_OP_ALLOW, name, FSG_FLAG_LOAD_NOW, &p, &e) == 0 && p.write == FSG_WRITE_NOTHING);
}

TEST(hard_deny_of_a_dependency) {
        static const char fuse_file[] = "/etc/modprobe.d/60-blacklist_fs-fuse.conf";
        FsgState *s = NULL;
        FsgError e = {};
        FsgPlan p;

        /* The attack: root's "modprobe virtiofs" is refused (kmod loads fuse by name and runs
         * its install command), Load must not insert fuse.ko past the hard deny either. */
        assert_not_blocked(&s, "virtiofs");
        ASSERT_OK_E(change(FSG_OP_DENY, "fuse", FSG_FLAG_HARD, &e), &e);
        assert_blocked_by(&s, "virtiofs", "fuse", fuse_file);
        /* By type too, and fuse itself as before. */
        assert_load_refused("virtiofs", "fuse", fuse_file);
        ASSERT_ERR_E(fsg_load(ctx, "fuseblk", NULL, &e), &e, FSG_ERR_HARD_DENIED);

        /* Allow with LOAD_NOW of a denied virtiofs: the allow would stand, the load could not
         * follow: refused before anything is written (the plan says what Allow writes). */
        ASSERT_OK_E(change(FSG_OP_DENY, "virtiofs", 0, &e), &e);
        ASSERT_ERR_E(fsg_plan(ctx, FSG_OP_ALLOW, "virtiofs", FSG_FLAG_LOAD_NOW, &p, &e), &e, FSG_ERR_HARD_DENIED);
        ASSERT(strstr(e.message, "fuse"));
        ASSERT(fsg_plan(ctx, FSG_OP_ALLOW, "virtiofs", 0, &p, &e) == 0 && p.write == FSG_WRITE_MASK);
        ASSERT_OK_E(change(FSG_OP_RESET, "virtiofs", 0, &e), &e);

        /* fuse loaded already: kmod leaves it alone, nothing past its deny is inserted. Half
         * loaded or half unloaded, kmod would insert it again: still refused. */
        write_file(root, "proc/modules", "fuse 188416 3 - Live 0x0\n");
        assert_not_blocked(&s, "virtiofs");
        write_file(root, "proc/modules", "fuse 188416 0 - Unloading 0x0\n");
        assert_blocked_by(&s, "virtiofs", "fuse", fuse_file);
        write_file(root, "proc/modules", "");

        /* A soft deny of fuse (SOFT: a plain deny keeps the hard one) stops its autoload only:
         * the load goes on. */
        ASSERT_OK_E(change(FSG_OP_DENY, "fuse", FSG_FLAG_SOFT, &e), &e);
        assert_not_blocked(&s, "virtiofs");
        ASSERT_OK_E(change(FSG_OP_RESET, "fuse", 0, &e), &e);

        /* The Debian 6.1 tree's other chains: configfs under gfs2, ocfs2 and ocfs2_dlmfs (two
         * levels down for ocfs2_dlmfs: through ocfs2_nodemanager), sunrpc (no filesystem: a
         * CIS-style line of the admin's) under nfs and nfsd. */
        ASSERT_OK_E(change(FSG_OP_DENY, "configfs", FSG_FLAG_HARD, &e), &e);
        assert_blocked_by(&s, "gfs2", "configfs", "/etc/modprobe.d/60-blacklist_fs-configfs.conf");
        assert_blocked_by(&s, "ocfs2", "configfs", "/etc/modprobe.d/60-blacklist_fs-configfs.conf");
        assert_blocked_by(&s, "ocfs2_dlmfs", "configfs", "/etc/modprobe.d/60-blacklist_fs-configfs.conf");
        ASSERT_OK_E(change(FSG_OP_RESET, "configfs", 0, &e), &e);
        assert_not_blocked(&s, "gfs2");
        write_file(root, "etc/modprobe.d/cis.conf", "install sunrpc /bin/true\n");
        assert_blocked_by(&s, "nfs", "sunrpc", "/etc/modprobe.d/cis.conf");
        assert_blocked_by(&s, "nfsd", "sunrpc", "/etc/modprobe.d/cis.conf");

        /* The install command kmod ignores (the dependency has soft dependencies of its own) or
         * one that loads the module after all: no hard deny, nothing refused. */
        write_file(root, "etc/modprobe.d/cis.conf", "install sunrpc /bin/true\nsoftdep sunrpc pre: nls_utf8\n");
        assert_not_blocked(&s, "nfsd");
        write_file(root, "etc/modprobe.d/cis.conf", "install sunrpc /sbin/modprobe --ignore-install sunrpc\n");
        assert_not_blocked(&s, "nfsd");

        /* Soft dependencies as kmod walks them: jbd2 (ocfs2's dependency) has "pre:
         * crypto-crc32c", which names crc32c_generic; the named module's own soft dependencies
         * are not inserted by a load that ignores its install command (nfsd's md5). */
        write_file(root, "etc/modprobe.d/cis.conf", "install crc32c_generic /bin/false\n");
        assert_blocked_by(&s, "ocfs2", "crc32c_generic", "/etc/modprobe.d/cis.conf");
        write_file(root, "etc/modprobe.d/cis.conf", "install md5 /bin/false\n");
        assert_not_blocked(&s, "nfsd");
        /* A soft dependency added by the configuration, and its own dependencies. */
        write_file(root, "etc/modprobe.d/cis.conf",
                   "softdep sunrpc post: nfsv4\ninstall dns_resolver /bin/false\n");
        assert_blocked_by(&s, "nfsd", "dns_resolver", "/etc/modprobe.d/cis.conf");
        remove_file("etc/modprobe.d/cis.conf");
        assert_not_blocked(&s, "nfsd");
        fsg_state_unref(s);
}

/* ext4 has "softdep ext4 pre: crc32c" in Debian's modules.softdep: an install line for it
 * does nothing (seen in the VM: ../shared/facts/kmod.md). */
TEST(softdep_module_of_the_tree) {
        FsgState *s = NULL;
        FsgError e = {};
        FsgPlan p;

        ASSERT(get(&s, "ext4")->install_ignored);
        ASSERT(!get(&s, "minix")->install_ignored);
        /* / elsewhere: on ext4, nothing may deny it (test-store). */
        write_file(root, "proc/mounts", "/dev/vda / xfs rw 0 0\n");
        ASSERT_ERR_E(fsg_plan(ctx, FSG_OP_DENY, "ext4", FSG_FLAG_HARD | FSG_FLAG_FORCE, &p, &e),
                     &e, FSG_ERR_HARD_DENY_IGNORED);
        /* A soft deny can. */
        ASSERT(fsg_plan(ctx, FSG_OP_DENY, "ext4", FSG_FLAG_FORCE, &p, &e) == 0 && p.write == FSG_WRITE_DENY);
        write_file(root, "proc/mounts", "/dev/vda / ext4 rw,relatime 0 0\n");
        fsg_state_unref(s);
}

TEST_SETUP(open_kernel_root) {
        kernel_root_open(&root, &ctx);
}

TEST_TEARDOWN(close_kernel_root) {
        kernel_root_close(root, ctx);
}
