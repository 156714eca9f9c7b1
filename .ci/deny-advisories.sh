#!/usr/bin/env bash
# `cargo deny check advisories` against the RustSec advisory database, offline.
#
# The database is a git repository on GitHub, which CI machines for this project cannot reach,
# so a snapshot is kept beside this script (.ci/advisory-db.tar.gz; its provenance and licence
# are in .ci/advisory-db.md). This script unpacks it as the git checkout cargo-deny expects,
# dated as the snapshot's commit (so cargo-deny's staleness is the snapshot's, not today's),
# and runs the check with `--offline` and the repository's deny.toml (its ignore list and
# reasons included). Where GitHub is reachable, run `cargo deny check advisories` instead: it
# fetches the current database.
#
# Idempotent: the checkout is reused while it holds the same snapshot.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
snapshot=bf5c0d245a92671908518d7e765914d437954ed6
snapshot_date=2026-08-21T08:28:40+02:00
target=${CARGO_TARGET_DIR:-$root/target}
cache="$target/advisory-dbs"
# cargo-deny (0.20, pinned in .ci/run) keeps the database of
# https://github.com/rustsec/advisory-db in this directory under its db-path.
db="$cache/advisory-db-3157b0e258782691"

if [ "$(git -C "$db" log -1 --format=%s 2>/dev/null || true)" != "rustsec/advisory-db@$snapshot" ]; then
    rm -rf "$db" "$cache/advisory-db"
    mkdir -p "$cache"
    tar -C "$cache" -xzf "$root/.ci/advisory-db.tar.gz"
    mv "$cache/advisory-db" "$db"
    git -C "$db" init -q
    git -C "$db" add -A
    GIT_AUTHOR_DATE=$snapshot_date GIT_COMMITTER_DATE=$snapshot_date \
        git -C "$db" -c user.name=ci-medic -c user.email=ci-medic@localhost \
        commit -q -m "rustsec/advisory-db@$snapshot"
fi

config=$(mktemp)
trap 'rm -f "$config"' EXIT
# deny.toml as it is, with the snapshot's location as the database path.
sed "/^\[advisories\]/a db-path = \"$cache\"" "$root/deny.toml" >"$config"
cd "$root"
out=$(cargo deny --offline --config "$config" check advisories 2>&1) || {
    printf '%s\n' "$out" >&2
    if grep -q 'cannot change to' <<<"$out"; then
        echo "cargo-deny looks for the database elsewhere than $db: update this script" >&2
    fi
    exit 1
}
printf '%s\n' "$out"
echo "advisories ok against rustsec/advisory-db@$snapshot ($snapshot_date)"
