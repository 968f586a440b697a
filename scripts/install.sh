#!/usr/bin/env bash
# Installs the built programs, the systemd units, the example settings and
# the docs. Called by `make install` (after `make all`) with PREFIX and
# DESTDIR; runs unprivileged into a DESTDIR staging tree (it creates no
# users and starts nothing).
#
#   PREFIX      /usr/local          programs in PREFIX/bin
#   DESTDIR     (empty)             staging root prepended to every path
#   SYSCONFDIR  /etc                settings in SYSCONFDIR/cod
#   UNITDIR     PREFIX/lib/systemd/system
#
# Units go under PREFIX so that /usr/local and /usr installs stay apart:
# systemd searches both /usr/local/lib/systemd/system and
# /usr/lib/systemd/system (= /lib/systemd/system on merged-/usr Debian 12).
# Settings go to /etc whatever the prefix, because the units name them.
set -euo pipefail
cd "$(dirname "$0")/.."

PREFIX=${PREFIX:-/usr/local}
DESTDIR=${DESTDIR:-}
SYSCONFDIR=${SYSCONFDIR:-/etc}
UNITDIR=${UNITDIR:-$PREFIX/lib/systemd/system}
BINDIR=$PREFIX/bin
DOCDIR=$PREFIX/share/doc/cod
SYSUSERSDIR=$PREFIX/lib/sysusers.d

die() { echo "install.sh: $*" >&2; exit 1; }
for d in PREFIX SYSCONFDIR UNITDIR; do
    # The paths are written into the units, where systemd wants them absolute.
    [[ ${!d} == /* ]] || die "$d must be an absolute path, got '${!d}'"
    # sed's replacement text below would misread these.
    [[ ${!d} != *[\|\&\\]* ]] || die "$d must not contain | & or \\, got '${!d}'"
done

programs=(cod-server cod-worker cod cod-train cod-prep cod-analyze)
# Every program or none: a cluster with a missing piece fails later, far
# from the cause.
missing=()
for p in "${programs[@]}"; do [ -x "bin/$p" ] || missing+=("bin/$p"); done
[ ${#missing[@]} -eq 0 ] || die "not built: ${missing[*]} (run make first)"

for p in "${programs[@]}"; do
    install -D -m 0755 "bin/$p" "$DESTDIR$BINDIR/$p"
done

# The units name the installed programs and settings, so they are made
# from templates for this prefix; written to a temporary file first so that
# a failed substitution never leaves a half-written unit behind.
subst() { # template, destination
    local tmp
    tmp=$(mktemp)
    sed -e "s|@BINDIR@|$BINDIR|g" -e "s|@SYSCONFDIR@|$SYSCONFDIR|g" -e "s|@DOCDIR@|$DOCDIR|g" "$1" >"$tmp"
    if grep -n '@[A-Z]*@' "$tmp" >&2; then rm -f "$tmp"; die "$1: unknown placeholder"; fi
    install -D -m 0644 "$tmp" "$2"
    rm -f "$tmp"
}
for t in deploy/*.service.in; do
    subst "$t" "$DESTDIR$UNITDIR/$(basename "$t" .in)"
done
install -D -m 0644 deploy/cod.sysusers "$DESTDIR$SYSUSERSDIR/cod.conf"

# Settings: the admin's copy is never overwritten (a reinstall or upgrade
# keeps tokens and addresses); the pristine examples always land in the
# docs, to diff against after an upgrade. 0600: both hold tokens.
settings() { # example, name under SYSCONFDIR/cod
    local dst=$DESTDIR$SYSCONFDIR/cod/$2
    install -D -m 0644 "$1" "$DESTDIR$DOCDIR/examples/$2"
    if [ -e "$dst" ]; then
        echo "install.sh: keeping $SYSCONFDIR/cod/$2 (example in $DOCDIR/examples/$2)"
    else
        install -D -m 0600 "$1" "$dst"
    fi
}
settings deploy/cod-server.example.conf server.conf
settings deploy/cod-worker.example.env worker.env

# The front page and the reference beside it, as in the tree, so that the
# README's links and the units' Documentation= (docs/cluster.md) resolve.
install -D -m 0644 README.md "$DESTDIR$DOCDIR/README.md"
for f in docs/*.md; do
    install -D -m 0644 "$f" "$DESTDIR$DOCDIR/$f"
done

case "$UNITDIR" in
    /usr/lib/systemd/system | /lib/systemd/system | /usr/local/lib/systemd/system | /etc/systemd/system) ;;
    *) echo "install.sh: note: systemd does not look in $UNITDIR; link the units with systemctl link, or set UNITDIR" ;;
esac
case "$PREFIX" in
    /usr | /usr/local) ;;
    *) echo "install.sh: note: systemd-sysusers does not look in $SYSUSERSDIR; copy cod.conf to /etc/sysusers.d" ;;
esac
if [ -z "$DESTDIR" ]; then
    cat <<EOF
install.sh: installed under $PREFIX. Next, as root:
  systemd-sysusers && systemctl daemon-reload
  cod-server: edit $SYSCONFDIR/cod/server.conf, systemctl enable --now cod-server
  workers:    edit $SYSCONFDIR/cod/worker.env, systemctl enable --now cod-worker@0 (one per GPU)
EOF
fi
