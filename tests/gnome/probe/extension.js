// SPDX-License-Identifier: LGPL-2.1-or-later
// The notify-gnome suite's probe (tests/gnome/test-notify-gnome.py): GNOME Shell 43's
// banner as the shell holds it, read from its actors (messageTray.js NotificationBanner,
// messageList.js Message), on the session bus at /org/fsgate/Test/ShellProbe of the shell's
// own connection (org.gnome.Shell). It only reads: the clicks are the remote desktop's.
/* exported init */
const { Gio } = imports.gi;
const Main = imports.ui.main;

const IFACE = `<node>
  <interface name="org.fsgate.Test.ShellProbe">
    <method name="Banner"><arg type="s" direction="out" name="json"/></method>
  </interface>
</node>`;

function box(actor) {
    const [x, y] = actor.get_transformed_position();
    const [w, h] = actor.get_transformed_size();
    return [Math.round(x), Math.round(y), Math.round(w), Math.round(h)];
}

function labelFacts(label) {
    if (!label)
        return null;
    const layout = label.clutter_text.get_layout();
    const [, natural] = label.get_preferred_height(label.width);
    return {
        text: label.text,
        box: box(label),
        lines: layout.get_line_count(),
        ellipsized: layout.is_ellipsized(),
        naturalHeight: Math.round(natural),
        mapped: label.mapped,
    };
}

class Probe {
    Banner() {
        const tray = Main.messageTray;
        const b = tray._banner;
        if (!b || !b.notification) {
            // No banner: where the notifications are (for the suite's failure messages).
            return JSON.stringify({
                banner: null,
                trayState: tray._notificationState,
                busy: tray._busy,
                queue: tray._notificationQueue.map(n => n.title),
                notifications: tray.getSources().flatMap(s => s.notifications.map(n => ({
                    title: n.title, urgency: n.urgency, acknowledged: n.acknowledged,
                }))),
            });
        }
        const n = b.notification;
        const stack = b._bodyStack;
        return JSON.stringify({
            // What the shell was sent (every action but "default") ...
            title: n.title,
            body: n.bannerBodyText,
            actions: n.actions.map(a => a.label),
            // ... and what it draws.
            box: box(b),
            expanded: Boolean(b.expanded),
            trayState: tray._notificationState,
            titleShown: b.titleLabel.text,
            collapsedBody: labelFacts(b.bodyLabel),
            expandedBody: labelFacts(b._expandedLabel),
            bodyStack: stack ? box(stack) : null,
            expandLines: stack ? stack.layout_manager._expandLines : null,
            buttons: b._buttonBox ? b._buttonBox.get_children().map(c => ({
                label: c.label, box: box(c), mapped: c.mapped, reactive: c.reactive,
            })) : [],
            overview: Main.overview.visible,
        });
    }
}

class Extension {
    enable() {
        this._impl = Gio.DBusExportedObject.wrapJSObject(IFACE, new Probe());
        this._impl.export(Gio.DBus.session, '/org/fsgate/Test/ShellProbe');
    }

    disable() {
        this._impl.unexport();
        this._impl = null;
    }
}

function init() {
    return new Extension();
}
