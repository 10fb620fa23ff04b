/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What fsgated's answers are made of: an error reply, an entry in its two forms (the
 * (sassssbbbb) of List and the extensible a{sv} of Describe, both walking entry-fields.h's
 * table), every entry at once, the FilesystemChanged signal. The methods are bus-object.c's. */
#include "bus-reply.h"
#include "confscan.h"
#include "entry-fields.h"
#include "fsgate-api.h"
#include "state-cache.h"
#include "utf8.h"

int manager_reply_error(sd_bus_message *call, const FsgError *e) {
        /* Messages quote paths and names, which need not be UTF-8; D-Bus strings must be. */
        _cleanup_free_ char *msg = fsg_utf8_escape(e->message);
        return sd_bus_reply_method_errorf(call, fsg_error_dbus_name(e->code), "%s", msg ?: "Out of memory");
}

/* The end of every method that builds its reply: sent if all went well, freed either way. */
int bus_send_reply(sd_bus_message *reply, int r) {
        if (r >= 0)
                r = sd_bus_send(NULL, reply, NULL);
        sd_bus_message_unref(reply);
        return r;
}

/* One value of an entry's field (entry-fields.h), of the D-Bus type its row names. */
static int append_field_value(sd_bus_message *reply, const FsgEntry *x, const FsgEntryField *f) {
        int r, b;

        switch (f->signature[0]) {
        case 's':
                return sd_bus_message_append_basic(reply, 's', fsg_entry_field_string(x, f));
        case 'b':
                b = fsg_entry_field_bool(x, f);
                return sd_bus_message_append_basic(reply, 'b', &b);
        }
        if (streq(f->signature, "as"))
                return sd_bus_message_append_strv(reply, fsg_entry_field_strv(x, f));
        /* a(ss): the list holds the pairs one after the other. */
        r = sd_bus_message_open_container(reply, 'a', "(ss)");
        for (char **p = fsg_entry_field_strv(x, f); r >= 0 && p && p[0] && p[1]; p += 2)
                r = sd_bus_message_append(reply, "(ss)", p[0], p[1]);
        return r < 0 ? r : sd_bus_message_close_container(reply);
}

/* Runs for every entry of every List: sd_bus_message_append_basic() directly, without the
 * format string that sd_bus_message_append() would parse again for each entry. */
int bus_append_entry(sd_bus_message *reply, const FsgEntry *x) {
        int r = sd_bus_message_open_container(reply, 'r', "sassssbbbb");

        for (size_t i = 0; r >= 0 && i < fsg_entry_fields_n; i++)
                if (fsg_entry_fields[i].flags & FSG_FIELD_ENTRY)
                        r = append_field_value(reply, x, &fsg_entry_fields[i]);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r;
}

/* a{sv}: every field of the entry under its name. A client must ignore keys it does not
 * know: new ones will come. */
int bus_append_description(sd_bus_message *reply, const FsgEntry *x) {
        int r = sd_bus_message_open_container(reply, 'a', "{sv}");

        for (size_t i = 0; r >= 0 && i < fsg_entry_fields_n; i++) {
                const FsgEntryField *f = &fsg_entry_fields[i];

                if ((f->flags & FSG_FIELD_OPTIONAL) && !fsg_entry_field_string(x, f))
                        continue;
                r = sd_bus_message_open_container(reply, 'e', "sv");
                if (r >= 0)
                        r = sd_bus_message_append_basic(reply, 's', f->key);
                if (r >= 0)
                        r = sd_bus_message_open_container(reply, 'v', f->signature);
                if (r >= 0)
                        r = append_field_value(reply, x, f);
                for (unsigned k = 0; r >= 0 && k < 2; k++)
                        r = sd_bus_message_close_container(reply);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r;
}

int bus_append_named_description(sd_bus_message *reply, const FsgEntry *x) {
        int r = sd_bus_message_open_container(reply, 'e', "sa{sv}");
        if (r >= 0)
                r = sd_bus_message_append_basic(reply, 's', x->module);
        if (r >= 0)
                r = bus_append_description(reply, x);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r;
}

/* Every entry of the state, each appended by append into an array of signature "a" type. */
int bus_reply_all_entries(sd_bus_message *call, void *userdata, const char *type,
                             int (*append)(sd_bus_message *reply, const FsgEntry *x)) {
        Manager *m = userdata;
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        sd_bus_message *reply = NULL;
        FsgError e = {};
        int r;

        if (manager_state(m, &s, &e) < 0)
                return manager_reply_error(call, &e);
        r = sd_bus_message_new_method_return(call, &reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', type);
        for (size_t i = 0; r >= 0 && i < s->n; i++)
                r = append(reply, &s->entries[i]);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return bus_send_reply(reply, r);
}

int manager_emit_changed(Manager *m, const char *module) {
        _cleanup_(fsg_state_unrefp) FsgState *s = NULL;
        const FsgEntry *x;

        if (manager_state(m, &s, NULL) < 0 || !(x = fsg_state_find(s, module)))
                return -EIO;
        return sd_bus_emit_signal(m->bus, FSGATE_BUS_PATH, FSGATE_BUS_IFACE, "FilesystemChanged", "sss",
                                  x->module, fsg_entry_state_string(x), fsg_origin_to_string(x->origin));
}
