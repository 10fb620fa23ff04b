/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "fsg-i18n.h"
#include "macro.h"
#include "name.h"
#include "on-demand.h"

/* Module names as Debian's 6.1 tree has them (modules.alias: fs-iso9660 is isofs, fs-nfs4 and
 * fs-nfs are nfs, fs-autofs is autofs4). The core translates nothing: the texts are only marked. */
const FsgOnDemand fsg_on_demand_table[] = {
        { "autofs4", "autofs",  N_("automount points (systemd's .automount units, autofs) would not mount") },
        { "cifs",    "cifs",    N_("Windows and Samba shares (SMB) would not mount") },
        { "exfat",   "exfat",   N_("SD cards and large USB sticks formatted exFAT would not mount") },
        { "fuse",    "fuse",    N_("FUSE mounts (sshfs, ntfs-3g, AppImages, the document portal) would fail") },
        { "isofs",   "iso9660", N_("CDs, DVDs and ISO images would not mount") },
        { "nfs",     "nfs",     N_("NFS shares would not mount") },
        { "overlay", "overlay", N_("containers (Docker, Podman) and live systems would not start") },
        { "udf",     "udf",     N_("DVDs and Blu-ray discs would not mount") },
        { "vfat",    "vfat",    N_("USB sticks and SD cards formatted FAT would not mount") },
};
const size_t fsg_on_demand_table_n = ELEMENTSOF(fsg_on_demand_table);

const FsgOnDemand *fsg_on_demand_find(const char *module) {
        char name[FSG_NAME_MAX + 1];

        if (!fsg_name_normalize_into(module, name))
                return NULL;
        for (size_t i = 0; i < fsg_on_demand_table_n; i++)
                if (strcmp(fsg_on_demand_table[i].module, name) == 0)
                        return &fsg_on_demand_table[i];
        return NULL;
}
