#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# tester's session in the GNOME root (in-root.sh): the probe extension enabled, then GNOME
# Shell 43 headless on a virtual monitor, as ../shared/facts/desktops.md runs it.
set -eu
ext=$HOME/.local/share/gnome-shell/extensions/fsgate-probe@fsgate.test
mkdir -p "$ext"
cp /run/fsgate-test/probe/* "$ext/"
gsettings set org.gnome.shell enabled-extensions "['fsgate-probe@fsgate.test']"
# No welcome tour, no hot corner (the pointer never passes the top left corner, still), and
# no "Screen Lock disabled" note (there is no GDM here): the shell shows it once per user,
# and it would come before ours.
gsettings set org.gnome.shell welcome-dialog-last-shown-version '999'
gsettings set org.gnome.desktop.interface enable-hot-corners false
mkdir -p "$HOME/.local/share/gnome-shell"
touch "$HOME/.local/share/gnome-shell/lock-warning-shown"
exec gnome-shell --headless --wayland --no-x11 --virtual-monitor 1280x800 >/run/fsgate-test/shell.log 2>&1
