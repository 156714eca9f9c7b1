#!/usr/bin/env bash
# Makes Debian's `docker-compose` available so tests/deploy_files.rs can validate
# deploy/docker-compose.yml with `docker-compose config` (no daemon, no image pulled).
# Idempotent: does nothing when it already runs. Only from apt.
set -euo pipefail

log() { printf '[compose-setup] %s\n' "$*" >&2; }

if command -v docker-compose >/dev/null 2>&1 && docker-compose version >/dev/null 2>&1; then
    log "$(docker-compose version --short 2>/dev/null) already installed"
    exit 0
fi

export DEBIAN_FRONTEND=noninteractive
# Another apt may hold the lock on a shared machine: wait for it rather than fail.
for _ in $(seq 1 60); do
    if apt-get install -y --no-install-recommends docker-compose \
        >/tmp/compose-setup-apt.log 2>&1; then
        log "installed docker-compose $(docker-compose version --short 2>/dev/null)"
        exit 0
    fi
    if grep -q 'Could not get lock' /tmp/compose-setup-apt.log; then sleep 5; continue; fi
    if grep -qE 'Unable to locate|has no installation candidate|404' /tmp/compose-setup-apt.log; then
        apt-get update -qq >/dev/null 2>&1 || true
        continue
    fi
    cat /tmp/compose-setup-apt.log >&2
    exit 1
done
log "apt stayed locked"
exit 1
