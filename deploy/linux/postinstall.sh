#!/bin/sh
# After install or upgrade: systemd learns of the unit; an upgrade restarts
# a running gateway on the new binary. A new install does not start it:
#   systemctl enable --now tollgate
set -e
if [ -d /run/systemd/system ]; then
  systemctl daemon-reload >/dev/null 2>&1 || true
  systemctl try-restart tollgate.service >/dev/null 2>&1 || true
fi
