#!/bin/sh
# Before removal (not before an upgrade: dpkg passes "upgrade", rpm 1):
# stop and disable the gateway. /var/lib/tollgate (the database) stays.
set -e
case "$1" in
  remove|purge|0)
    if [ -d /run/systemd/system ]; then
      systemctl disable --now tollgate.service >/dev/null 2>&1 || true
    fi
    ;;
esac
