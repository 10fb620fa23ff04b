/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* core/profile.c over a scratch root holding the real Debian kernel module tree: reading
 * profile files, what "unused" keeps and why, plans (all or nothing), apply and audit. */
#include <sys/stat.h>

#include "on-demand.h"
#include "profile-apply.h"
#include "profile-write.h"
#include "profile-audit.h"
#include "risk.h"
#include "strv.h"
#include "test-util.h"

static char *root;
static char profiles[] = "/tmp/fsgate-test-profiles-XXXXXX";
static FsgContext *ctx;

/* DIR/NAME.profile holding content, of mode: a shipped profile (in profiles) or a site's. */
static void profile_file(const char *dir, const char *name, const char *content, mode_t mode) {
        char path[256];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s.profile", dir, name);
        f = fopen(path, "we");
        ASSERT(f);
        fputs(content, f);
        fclose(f);
        ASSERT(chmod(path, mode) == 0);
}

static FsgState *state(void) {
        FsgState *s = NULL;
        FsgError e = {};

        ASSERT_OK_E(fsg_state_build(ctx, NULL, &s, &e), &e);
        return s;
}

TEST(read) {
        _cleanup_strv_free_ char **names = NULL;
        FsgState *s = state();
        FsgProfile *p = NULL;
        FsgError e = {};

        ASSERT_OK_E(fsg_profile_list(&names, &e), &e);
        ASSERT(strv_length(names) == 4);
        ASSERT_STREQ(names[0], "bad");
        ASSERT_OK_E(fsg_profile_load(ctx, s, "two", false, &p, &e), &e);
        ASSERT(p->hard && !p->compute);
        ASSERT(strv_length(p->modules) == 2);
        ASSERT_STREQ(p->modules[0], "hfs");
        ASSERT_STREQ(p->modules[1], "minix");
        ASSERT_STREQ(p->description, "two of them");
        p = fsg_profile_free(p);

        ASSERT_ERR_E(fsg_profile_load(ctx, s, "nosuch", false, &p, &e), &e, FSG_ERR_NO_SUCH_PROFILE);
        ASSERT(strstr(e.message, "two"));
        ASSERT_ERR_E(fsg_profile_load(ctx, s, "../two", false, &p, &e), &e, FSG_ERR_NO_SUCH_PROFILE);
        ASSERT_ERR_E(fsg_profile_load(ctx, s, "bad", false, &p, &e), &e, FSG_ERR_FAILED);
        ASSERT(strstr(e.message, "unknown key Colour"));
        fsg_state_unref(s);
}

static bool has(char **l, const char *prefix) {
        for (; l && *l; l++)
                if (strncmp(*l, prefix, strlen(prefix)) == 0)
                        return true;
        return false;
}

TEST(unused) {
        _cleanup_strv_free_ char **unused = NULL, **used = NULL;
        FsgState *s;
        FsgError e = {};

        write_file(root, "proc/mounts", "/dev/vda / ext4 rw 0 0\nsrv:/x /net nfs4 rw 0 0\n");
        write_file(root, "proc/modules", "jfs 16384 0 - Live 0x0\n");
        write_file(root, "etc/fstab", "# /old minix\nLABEL=EFI /boot/efi vfat defaults 0 1\nx /y fuse.sshfs defaults 0 0\n");
        write_file(root, "run/systemd/generator/srv.mount", "[Unit]\nType=udf\n[Mount]\nType=xfs\n");
        write_file(root, "run/udev/data/b8:1", "E:ID_FS_TYPE=hfsplus\n");
        s = state();
        ASSERT_OK_E(fsg_profile_unused(ctx, s, true, &unused, &used, &e), &e);
        ASSERT(has(used, "ext4: mounted"));
        ASSERT(has(used, "nfs: mounted"));                     /* fs-nfs4 is nfs */
        ASSERT(has(used, "sunrpc: a dependency of nfs"));      /* rpc_pipefs */
        ASSERT(has(used, "jfs: loaded"));
        ASSERT(has(used, "vfat: named in /etc/fstab"));
        ASSERT(has(used, "fuse: named in /etc/fstab"));
        ASSERT(has(used, "xfs: the type of /run/systemd/generator/srv.mount"));
        ASSERT(has(used, "hfsplus: the type udev found"));
        ASSERT(!has(used, "udf"));      /* Type= outside [Mount] */
        ASSERT(!has(used, "minix"));    /* a comment */
        ASSERT(strv_contains(unused, "udf") && strv_contains(unused, "minix") && strv_contains(unused, "hfs"));
        ASSERT(!strv_contains(unused, "ext4") && !strv_contains(unused, "sunrpc") && !strv_contains(unused, "vfat"));
        for (char **m = unused; *m; m++) {
                const FsgEntry *x = fsg_state_find(s, *m);
                ASSERT(x && x->available && !x->builtin && !x->loaded && !x->mounted);
        }
        fsg_state_unref(s);
}

/* The unused profile's list puts what the kernel source worries about first; its set stays the
 * computation's. */
TEST(unused_profile_notable_first) {
        _cleanup_strv_free_ char **unused = NULL;
        FsgProfile *p = NULL;
        FsgState *s;
        FsgError e = {};
        size_t n, i = 0;

        write_file(root, "proc/mounts", "/dev/vda / ext4 rw 0 0\n");
        s = state();
        ASSERT_OK_E(fsg_profile_unused(ctx, s, true, &unused, NULL, &e), &e);
        ASSERT_OK_E(fsg_profile_load(ctx, s, "unused", true, &p, &e), &e);
        n = strv_length(unused);
        ASSERT(n > 2 && strv_length(p->modules) == n);
        for (char **m = unused; *m; m++)
                ASSERT(strv_contains(p->modules, *m));
        /* hfs (Orphan) and ext4's neighbours of no note must both be there to show an order. */
        ASSERT(fsg_risk_is_notable(fsg_risk_find("hfs")) && strv_contains(p->modules, "hfs"));
        ASSERT(!fsg_risk_is_notable(fsg_risk_find("udf")) && strv_contains(p->modules, "udf"));
        while (i < n && fsg_risk_is_notable(fsg_risk_find(p->modules[i])))
                i++;
        ASSERT(i > 0 && i < n);
        for (size_t j = i; j < n; j++)
                ASSERT(!fsg_risk_is_notable(fsg_risk_find(p->modules[j])));
        for (size_t j = 1; j < n; j++)
                if (j != i)
                        ASSERT(strcmp(p->modules[j - 1], p->modules[j]) < 0);
        fsg_profile_free(p);
        fsg_state_unref(s);
}

/* Issue 41: sticks, DVDs, containers, shares and automounts are kept unless asked, with what
 * they need (fat for vfat, sunrpc for nfs); asked, they are denied like the rest. */
TEST(unused_keeps_on_demand) {
        _cleanup_strv_free_ char **kept = NULL, **all = NULL, **used = NULL;
        FsgProfile *p = NULL;
        FsgState *s;
        FsgError e = {};
        size_t n = 0;

        write_file(root, "proc/mounts", "/dev/vda / ext4 rw 0 0\n");
        write_file(root, "proc/modules", "");
        write_file(root, "etc/fstab", "");      /* the vfat and fuse of an earlier test */
        s = state();
        ASSERT_OK_E(fsg_profile_unused(ctx, s, false, &kept, &used, &e), &e);
        ASSERT_OK_E(fsg_profile_unused(ctx, s, true, &all, NULL, &e), &e);
        for (size_t i = 0; i < fsg_on_demand_table_n; i++) {
                const char *m = fsg_on_demand_table[i].module;
                char why[64];

                /* Every row names a module of the real tree: a wrong name would keep nothing. */
                ASSERT(fsg_state_find_module(s, m) && fsg_state_find_module(s, m)->available);
                ASSERT(!strv_contains(kept, m) && strv_contains(all, m));
                snprintf(why, sizeof(why), "%s: needed on demand", m);
                ASSERT(strv_contains(used, why));
                ASSERT(fsg_on_demand_find(m) == &fsg_on_demand_table[i]);
                n++;
        }
        ASSERT(n == 9 && fsg_on_demand_find("iso9660") == NULL && fsg_on_demand_find("hfs") == NULL);
        ASSERT(streq(fsg_on_demand_find("isofs")->type, "iso9660"));
        ASSERT(strv_contains(used, "sunrpc: a dependency of nfs") && strv_contains(all, "sunrpc"));
        ASSERT(strv_contains(kept, "hfs") && strv_contains(kept, "minix"));
        ASSERT_OK_E(fsg_profile_load(ctx, s, "unused", false, &p, &e), &e);
        ASSERT(!strv_contains(p->modules, "udf") && strv_contains(p->modules, "hfs"));
        fsg_profile_free(p);
        ASSERT_OK_E(fsg_profile_load(ctx, s, "unused", true, &p, &e), &e);
        ASSERT(strv_contains(p->modules, "udf"));
        fsg_profile_free(p);
        fsg_state_unref(s);
}

TEST(plan_apply_audit) {
        FsgProfilePlan *pp = NULL;
        FsgAudit *a = NULL;
        FsgError e = {};

        write_file(root, "proc/mounts", "/dev/vda / ext4 rw 0 0\n");
        write_file(root, "proc/modules", "minix 16384 0 - Live 0x0\n");
        /* minix is loaded (InUse), hfs decided by a foreign file: both named, nothing planned */
        write_file(root, "etc/modprobe.d/60-blacklist_fs-hfs.conf", "# mine\nblacklist hfs\noptions hfs x=1\n");
        ASSERT_ERR_E(fsg_profile_plan(ctx, NULL, NULL, "two", 0, &pp, &e), &e, FSG_ERR_PROFILE_CONFLICT);
        ASSERT(strstr(e.message, "hfs (decided by a file fsgate did not write)") && strstr(e.message, "minix (in use)"));
        ASSERT_ERR_E(fsg_profile_plan(ctx, NULL, NULL, "two", FSG_FLAG_LOAD_NOW, &pp, &e), &e, FSG_ERR_INVALID_ARGS);
        {
                char p[512];
                snprintf(p, sizeof(p), "%s/etc/modprobe.d/60-blacklist_fs-hfs.conf", root);
                ASSERT(unlink(p) == 0);
        }
        /* What the next boot mounts: no --force lifts it, and nothing of the profile is planned. */
        write_file(root, "etc/fstab", "LABEL=root / minix defaults 0 1\n");
        ASSERT_ERR_E(fsg_profile_plan(ctx, NULL, NULL, "two", FSG_FLAG_FORCE | FSG_FLAG_DRY_RUN, &pp, &e), &e,
                     FSG_ERR_PROFILE_CONFLICT);
        ASSERT(strstr(e.message, "minix (needed to boot)") && !strstr(e.message, "hfs"));
        write_file(root, "etc/fstab", "");
        ASSERT_OK_E(fsg_profile_plan(ctx, NULL, NULL, "two", FSG_FLAG_FORCE | FSG_FLAG_DRY_RUN, &pp, &e), &e);
        ASSERT(pp->n == 2);
        ASSERT_STREQ(fsg_profile_change_string(&pp->plans[0]), "deny-hard");
        ASSERT(fsg_profile_apply(ctx, pp, &e) == 0);           /* a dry run: nothing */
        ASSERT_OK_E(fsg_profile_audit(ctx, NULL, "two", false, &a, &e), &e);
        ASSERT(a->n == 2 && a->n_compliant == 0 && a->hard_required);
        a = fsg_audit_free(a);
        pp->flags &= ~FSG_FLAG_DRY_RUN;
        ASSERT_OK_E(fsg_profile_apply(ctx, pp, &e), &e);
        pp = fsg_profile_plan_free(pp);
        ASSERT_OK_E(fsg_profile_audit(ctx, NULL, "two", false, &a, &e), &e);
        /* hfs: denied hard; minix: denied hard but loaded now */
        ASSERT(a->n == 2 && a->n_compliant == 1);
        ASSERT(a->items[0].compliant && a->items[0].hard && a->items[0].denied);
        ASSERT(!a->items[1].compliant && strstr(a->items[1].why, "loaded now"));
        a = fsg_audit_free(a);
        /* applied: nothing left to do */
        ASSERT(fsg_profile_plan(ctx, NULL, NULL, "two", FSG_FLAG_FORCE, &pp, &e) == 0 && pp->n == 0);
        pp = fsg_profile_plan_free(pp);
}

/* Site profiles: read before the shipped ones, Include= of a shipped one (its own name too),
 * circles refused, and a file others may write is not read: neither listed nor loaded. */
TEST(site) {
        char site[] = "/tmp/fsgate-test-site-XXXXXX";
        _cleanup_strv_free_ char **names = NULL;
        FsgState *s = state();
        FsgProfile *p = NULL;
        FsgError e = {};

        ASSERT(mkdtemp(site));
        ASSERT(chmod(site, 0755) == 0);
        ASSERT(setenv("FSGATE_SITE_PROFILE_DIR", site, 1) == 0);
        profile_file(site, "two", "Include=two\nModules=jfs\nHard=no\n", 0644);
        profile_file(site, "mine", "Description=ours\nInclude=two\nModules=btrfs\n", 0644);
        profile_file(site, "loop", "Include=loop2\n", 0644);
        profile_file(site, "loop2", "Include=loop\n", 0644);
        profile_file(site, "open", "Modules=hfs\n", 0666);
        profile_file(site, "calc", "Include=unused\n", 0644);

        ASSERT_OK_E(fsg_profile_list(&names, &e), &e);
        ASSERT(strv_contains(names, "mine") && strv_contains(names, "two") && !strv_contains(names, "open"));
        /* the site's two wins and adds jfs to the shipped two's hfs minix, hard as that one */
        ASSERT_OK_E(fsg_profile_load(ctx, s, "two", false, &p, &e), &e);
        ASSERT(p->hard && strv_length(p->modules) == 3 && strv_contains(p->modules, "jfs"));
        ASSERT(strncmp(p->path, site, strlen(site)) == 0);
        p = fsg_profile_free(p);
        /* mine includes the site's two (the name resolves as any other) */
        ASSERT_OK_E(fsg_profile_load(ctx, s, "mine", false, &p, &e), &e);
        ASSERT(strv_length(p->modules) == 4 && strv_contains(p->modules, "btrfs") && strv_contains(p->modules, "minix"));
        p = fsg_profile_free(p);
        ASSERT_ERR_E(fsg_profile_load(ctx, s, "loop", false, &p, &e), &e, FSG_ERR_FAILED);
        ASSERT(strstr(e.message, "circle"));
        ASSERT_ERR_E(fsg_profile_load(ctx, s, "calc", false, &p, &e), &e, FSG_ERR_FAILED);
        ASSERT(strstr(e.message, "computed"));
        ASSERT_ERR_E(fsg_profile_load(ctx, s, "open", false, &p, &e), &e, FSG_ERR_FAILED);
        ASSERT(strstr(e.message, "is ignored"));
        ASSERT_ERR_E(fsg_profile_load(ctx, s, "../site/two", false, &p, &e), &e, FSG_ERR_NO_SUCH_PROFILE);

        for (const char * const *n = (const char * const[]) { "two", "mine", "loop", "loop2", "open", "calc", NULL };
             *n; n++) {
                char path[256];
                snprintf(path, sizeof(path), "%s/%s.profile", site, *n);
                ASSERT(unlink(path) == 0);
        }
        ASSERT(rmdir(site) == 0);
        ASSERT(unsetenv("FSGATE_SITE_PROFILE_DIR") == 0);
        fsg_state_unref(s);
}

TEST_SETUP(write_profiles_and_open_kernel_root) {
        ASSERT(mkdtemp(profiles));
        ASSERT(setenv("FSGATE_PROFILE_DIR", profiles, 1) == 0);
        profile_file(profiles, "two", "# a comment\nDescription = two of them\nHard=yes\nModules=minix\nModules=hfs minix\n",
                     0644);
        profile_file(profiles, "bad", "Modules=hfs\nColour=blue\n", 0644);
        profile_file(profiles, "unused", "Compute=unused\n", 0644);
        profile_file(profiles, "empty", "\n", 0644);
        kernel_root_open(&root, &ctx);
}

TEST_TEARDOWN(remove_profiles_and_kernel_root) {
        kernel_root_close(root, ctx);
        for (const char * const *n = (const char * const[]) { "two", "bad", "unused", "empty", NULL }; *n; n++) {
                char path[256];
                snprintf(path, sizeof(path), "%s/%s.profile", profiles, *n);
                (void) unlink(path);
        }
        (void) rmdir(profiles);
}
