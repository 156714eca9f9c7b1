#!/usr/bin/env python3
"""Checks that `rust-version` in Cargo.toml is true of the dependency graph: no locked
dependency declares a newer minimum Rust than ci-medic says it needs.

Only Debian's one toolchain can be installed here, so the code itself cannot be built with
the declared version; clippy's `incompatible_msrv` lint (on in `.ci/run`) covers standard
library APIs newer than it, and this script covers the dependencies."""
import json
import subprocess
import sys

meta = json.loads(
    subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--locked"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
)
def version(v):
    parts = [int(x) for x in v.split(".")]
    return tuple(parts + [0] * (3 - len(parts)))


ours = {p["id"]: p for p in meta["packages"] if p["source"] is None}
declared = {version(p["rust_version"]) for p in ours.values()}
if len(declared) != 1:
    sys.exit(f"workspace crates declare different rust-versions: {sorted(declared)}")
(msrv,) = declared
in_graph = {n["id"] for n in meta["resolve"]["nodes"]}
too_new = sorted(
    (p["rust_version"], p["name"], p["version"])
    for p in meta["packages"]
    if p["id"] in in_graph
    and p.get("rust_version")
    and version(p["rust_version"]) > msrv
)
if too_new:
    for rv, name, version in too_new:
        print(f"{name} {version} needs Rust {rv}", file=sys.stderr)
    sys.exit(f"rust-version {'.'.join(map(str, msrv))} is not true: raise it or pin those crates")
print(f"rust-version {'.'.join(map(str, msrv))}: no dependency needs a newer Rust")
