#!/usr/bin/env bash
# Makes Debian's headless-capable Chromium available for the status page's browser test
# (tests/status_browser.rs). Idempotent: does nothing when `chromium` already runs.
#
# Never downloads a browser from anywhere but apt; the test finds it as `chromium` on PATH
# (or CI_MEDIC_CHROMIUM), and fails when it is missing while CI is set.
set -euo pipefail

log() { printf '[chromium-setup] %s\n' "$*" >&2; }

if command -v chromium >/dev/null 2>&1 && chromium --headless --version >/dev/null 2>&1; then
    log "$(chromium --version 2>/dev/null | head -n1) already installed"
    exit 0
fi

export DEBIAN_FRONTEND=noninteractive
# Another apt may hold the lock on a shared machine: wait for it rather than fail.
for _ in $(seq 1 60); do
    if apt-get install -y --no-install-recommends chromium fonts-dejavu-core \
        >/tmp/chromium-setup-apt.log 2>&1; then
        log "installed $(chromium --version 2>/dev/null | head -n1)"
        exit 0
    fi
    if grep -q 'Could not get lock' /tmp/chromium-setup-apt.log; then sleep 5; continue; fi
    if grep -qE 'Unable to locate|has no installation candidate|404' /tmp/chromium-setup-apt.log; then
        apt-get update -qq >/dev/null 2>&1 || true
        continue
    fi
    cat /tmp/chromium-setup-apt.log >&2
    exit 1
done
log "apt lock never released"
exit 1
