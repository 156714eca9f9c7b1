#!/usr/bin/env bash
# Starts a throw-away PostgreSQL cluster for the tests and prints its URL on stdout.
#
#   export CI_MEDIC_TEST_DATABASE_URL="$(bash .ci/postgres-setup.sh)"
#
# Idempotent: a cluster already answering on the port is reused, and the Debian package is
# installed only when its binaries are missing. Nothing here is for production: the cluster
# trusts every local connection, lives in a temporary directory and has fsync off.
#
#   1. Debian's `postgresql` package (initdb, pg_ctl, postgres) when /usr/lib/postgresql/*/bin
#      has no pg_ctl.
#   2. initdb as the `postgres` user (PostgreSQL refuses to run as root) into
#      $CI_MEDIC_PGDATA (default /tmp/ci-medic-pg/data), trust authentication.
#   3. pg_ctl start on 127.0.0.1:$CI_MEDIC_PGPORT (default 54329), log in /tmp/ci-medic-pg/log.
#   4. the database `ci_medic_test`; each test creates databases of its own beside it, so the
#      role is a superuser (CREATEDB is what it needs).
#
# The URL is also written to /tmp/ci-medic-pg/url for a developer's shell.
set -euo pipefail

log() { printf '[postgres-setup] %s\n' "$*" >&2; }

ROOT=${CI_MEDIC_PG_ROOT:-/tmp/ci-medic-pg}
PGDATA=${CI_MEDIC_PGDATA:-$ROOT/data}
PORT=${CI_MEDIC_PGPORT:-54329}
DB=ci_medic_test
URL="postgres://postgres@127.0.0.1:$PORT/$DB"

pg_bin() {
    local d
    for d in /usr/lib/postgresql/*/bin; do
        [ -x "$d/pg_ctl" ] && { echo "$d"; return 0; }
    done
    return 1
}

if ! BIN=$(pg_bin); then
    log "installing Debian's postgresql"
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install -y --no-install-recommends postgresql >/tmp/postgres-setup-apt.log 2>&1; then
        apt-get update -qq >/dev/null 2>&1 || true
        apt-get install -y --no-install-recommends postgresql >/tmp/postgres-setup-apt.log 2>&1 \
            || { cat /tmp/postgres-setup-apt.log >&2; exit 1; }
    fi
    BIN=$(pg_bin)
fi

# The package's own cluster (if the package started one) is left alone: ours is separate.
as_postgres() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

mkdir -p "$ROOT"
[ "$(id -u)" = 0 ] && chown postgres "$ROOT"

if "$BIN/pg_isready" -q -h 127.0.0.1 -p "$PORT"; then
    log "reusing the cluster on port $PORT"
else
    if [ ! -f "$PGDATA/PG_VERSION" ]; then
        log "initdb into $PGDATA"
        as_postgres "$BIN/initdb" -D "$PGDATA" -U postgres --auth=trust --no-sync -E UTF8 \
            >"$ROOT/initdb.log" 2>&1 || { cat "$ROOT/initdb.log" >&2; exit 1; }
    fi
    log "starting on 127.0.0.1:$PORT"
    # fsync off: a test cluster has nothing to keep across a machine crash. max_connections:
    # every test database has its own pool, and the replica tests run three servers.
    as_postgres "$BIN/pg_ctl" -D "$PGDATA" -l "$ROOT/log" -w -t 60 start \
        -o "-h 127.0.0.1 -p $PORT -k $ROOT -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" \
        >&2
fi

if ! as_postgres "$BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -tAc \
    "SELECT 1 FROM pg_database WHERE datname = '$DB'" | grep -q 1; then
    as_postgres "$BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -qc "CREATE DATABASE $DB" >&2
fi

echo "$URL" >"$ROOT/url"
echo "$URL"
