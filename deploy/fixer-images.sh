#!/usr/bin/env bash
# Builds the fixer images the fix agent's tool tier runs (black, isort, ruff, gofmt, rustfmt,
# clang-format, prettier, eslint, and clippy from this host's own Rust toolchain) on the
# Docker engine ci-medic uses, with no registry: the
# same recipe CI uses, `.ci/fixer-images.sh`, run from a checkout of ci-medic on a Debian 12
# host with apt sources, pip and npm reachable (the images themselves never reach a network).
#
#   deploy/fixer-images.sh                          # all five images
#   CI_MEDIC_FIXER_IMAGES="python go" deploy/fixer-images.sh
#
# Re-running is cheap: an image whose recipe hash (the script and the Debian package versions)
# is unchanged is kept. Each image's `ci-medic.tools` label lists the versions it runs; the fix
# reason names the one used. A project's exact pin of a PyPI or npm tool the image lacks is
# installed by ci-medic itself (pip or npm in the image, with a network, the host's CA bundle
# copied in here) into a cached `…:pin-TOOL-VERSION` image; at most 8 are kept.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v docker >/dev/null 2>&1 || { echo "docker CLI missing" >&2; exit 1; }
exec bash .ci/fixer-images.sh
