#!/usr/bin/env bash
# Builds the tool tier's fixer images locally, with no registry: each image is a root
# filesystem unpacked from Debian packages (plus PyPI/npm packages fetched here, at build time,
# never from the sandbox) and imported with `docker import`.
#
#   ci-medic-fixer/python  black 23.1 and isort 5.6 (Debian 12), ruff (PyPI wheel, static binary),
#                          pip (its PyPI wheel, at /opt/pip/pip.whl) for the pins' install step
#   ci-medic-fixer/go      gofmt (golang-1.19-go) and goimports (golang-golang-x-tools), Debian 12
#   ci-medic-fixer/rust    rustfmt 1.63 (Debian 12) on PATH; the machine's own Rust toolchain
#                          (rustup's: cargo, rustc, clippy) in /opt/rust, off PATH, for
#                          `cargo clippy --fix` (Debian 12's clippy 1.63 is too old for most
#                          crates); gcc and libc6-dev (Debian 12, `cc` the linker rustc calls)
#                          for build scripts and proc-macros; the host's CA bundle for the
#                          `cargo fetch` step
#   ci-medic-fixer/clang   clang-format 14 (Debian 12)
#   ci-medic-fixer/node    Node.js 18 (Debian 12), prettier and eslint (npm); `/node_modules`
#                          points at them, so a project's `eslint.config.js` finds `@eslint/js`
#                          and `globals` by Node's own lookup up the directory tree; npm itself
#                          (in /opt/fixers) for the pins' install step
#
# The Python, Node and Rust images carry this host's CA bundle (/etc/ssl/certs/ca-certificates.crt):
# the fix agent's install step for a pinned version (the only step with a network) reaches
# PyPI and npm with the CAs the host trusts, which may include a proxy's.
#
# Each image carries the label `ci-medic.tools` (`name=version,…`, the versions it really runs,
# read from the tools themselves) that the fix agent reads to know what it may promise, and
# `ci-medic.recipe`, a hash of that image's own recipe (its build function, the shared helpers
# and the Debian candidate versions of its packages): an image whose recipe hash matches is kept
# (idempotent), and editing one image's recipe rebuilds that image only.
#
# Called by .ci/run after .ci/docker-setup.sh (which starts the engine). Operators run the same
# script (see deploy/README-fixers.md). CI_MEDIC_FIXER_IMAGES limits it to some images
# (`python go`); default all.
set -euo pipefail

log() { printf '[fixer-images] %s\n' "$*" >&2; }
started=$(date +%s)

DOCKER=docker
[ -x /usr/bin/docker ] && DOCKER=/usr/bin/docker
"$DOCKER" info >/dev/null 2>&1 || { log "no Docker engine answers; run .ci/docker-setup.sh first"; exit 1; }

RUFF_VERSION=0.6.9
PRETTIER_VERSION=3.3.3
ESLINT_VERSION=9.13.0

command -v busybox >/dev/null 2>&1 || { log "busybox-static is missing; run .ci/docker-setup.sh first"; exit 1; }
BUSYBOX=$(command -v busybox)
if ! file -L "$BUSYBOX" 2>/dev/null | grep -q 'statically linked'; then BUSYBOX=/bin/busybox; fi

work=$(mktemp -d /tmp/ci-medic-fixers.XXXXXX)
trap 'rm -rf "$work"' EXIT

# Debian packages and their dependency closure (Depends and Pre-Depends only). Maintainer
# scripts never run: only the files matter, and perl (pulled in by mailcap) is left out.
closure() {
    apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
        --no-replaces --no-enhances "$@" | grep -v '^ ' | grep -v '<' \
        | grep -vE '^(perl|perl-base|perl-modules-5\.36|libperl5\.36|dpkg|install-info|debconf)$' | sort -u
}

# The newest version an apt source offers (never one only installed here from elsewhere, such as
# nodesource's nodejs): `apt-get download` can fetch only those.
debian_versions() {
    local p v
    for p in $(closure "$@"); do
        v=$(apt-cache madison "$p" | awk -F'|' '$3 ~ /Packages/ {gsub(/ /, "", $2); print $2; exit}')
        [ -n "$v" ] && echo "$p=$v"
    done
}

recipe_hash() { # image packages…: hash of the image's build function, the helpers it uses and
    # the candidate versions of the closure (`declare -f` prints a function's normalised text).
    local image=$1; shift
    { declare -f "build_$image" unpack_debs import_image closure debian_versions
      echo "$RUFF_VERSION $PRETTIER_VERSION $ESLINT_VERSION"
      debian_versions "$@"
      # The Rust image carries the machine's toolchain: a new one rebuilds it.
      if [ "$image" = rust ]; then rustc --version 2>/dev/null || echo no-rustc; fi; } | sha256sum | cut -c1-16
}

unpack_debs() { # root packages…
    local root=$1; shift
    local debs="$work/debs-$(basename "$root")"
    mkdir -p "$debs" "$root/bin" "$root/tmp" "$root/etc"
    chmod 777 "$debs"; chmod 1777 "$root/tmp"
    # shellcheck disable=SC2046
    (cd "$debs" && apt-get download $(debian_versions "$@") >"$work/download.log" 2>&1) || {
        apt-get update -qq >/dev/null 2>&1 || true
        # shellcheck disable=SC2046
        (cd "$debs" && apt-get download $(debian_versions "$@"))
    }
    for deb in "$debs"/*.deb; do dpkg-deb -x "$deb" "$root"; done
    cp "$BUSYBOX" "$root/bin/busybox"
    local a
    for a in $("$BUSYBOX" --list); do
        [ -e "$root/bin/$a" ] || [ -e "$root/usr/bin/$a" ] || ln -s busybox "$root/bin/$a"
    done
    # Scripts' `#!/usr/bin/env node` lines need env where coreutils would put it.
    mkdir -p "$root/usr/bin"
    [ -e "$root/usr/bin/env" ] || ln -s /bin/busybox "$root/usr/bin/env"
    printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n' >"$root/etc/passwd"
    printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
}

# The host's CA bundle, for the install step of a pinned version (pip's PIP_CERT, Node's
# NODE_EXTRA_CA_CERTS). Not part of the recipe hash: a changed bundle is picked up by a rebuild.
host_cas() { # root
    mkdir -p "$1/etc/ssl/certs"
    if [ -r /etc/ssl/certs/ca-certificates.crt ]; then
        install -m 0644 /etc/ssl/certs/ca-certificates.crt "$1/etc/ssl/certs/ca-certificates.crt"
    fi
}

# Reads each tool's own version inside the unpacked root (chroot-free: the image is run once).
import_image() { # name root recipe probe-script
    local name=$1 root=$2 recipe=$3 probe=$4
    local tmp="$name:building"
    tar -C "$root" -c . | "$DOCKER" import -c 'ENV PATH=/usr/local/bin:/usr/bin:/bin' \
        -c 'ENV PYTHONDONTWRITEBYTECODE=1' -c 'CMD ["/bin/sh"]' - "$tmp" >/dev/null
    local tools
    tools=$("$DOCKER" run --rm --network none "$tmp" sh -c "$probe")
    case "$tools" in
        '' | *= | *=,*)
            log "$name: a tool did not answer its version probe ($tools)"
            "$DOCKER" rmi "$tmp" >/dev/null 2>&1 || true
            exit 1 ;;
    esac
    # A label needs a Dockerfile step; FROM the imported image adds nothing but metadata.
    printf 'FROM %s\nLABEL ci-medic.tools="%s" ci-medic.recipe="%s"\n' "$tmp" "$tools" "$recipe" \
        | "$DOCKER" build -q -t "$name" - >/dev/null
    "$DOCKER" rmi "$tmp" >/dev/null 2>&1 || true
    log "$name: $tools"
}

current() { # name recipe: whether the image exists with this recipe
    [ "$("$DOCKER" image inspect -f '{{index .Config.Labels "ci-medic.recipe"}}' "$1" 2>/dev/null)" = "$2" ]
}

wanted() { [ -z "${CI_MEDIC_FIXER_IMAGES:-}" ] || [[ " $CI_MEDIC_FIXER_IMAGES " == *" $1 "* ]]; }

# One function per image: its text is part of the image's recipe hash, so editing one rebuilds
# that image only. Each is called with the root to fill and the recipe to label it with.
PYTHON_PKGS=(black isort python3.11-minimal)
build_python() {
    local root=$1 recipe=$2
    unpack_debs "$root" "${PYTHON_PKGS[@]}"
    # ruff's wheel holds one static binary; pip only downloads it here.
    python3 -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux_2_17_x86_64 \
        --python-version 3.11 -d "$work/wheels" "ruff==$RUFF_VERSION"
    python3 -m zipfile -e "$work"/wheels/ruff-*.whl "$work/ruff-wheel"
    mkdir -p "$root/usr/local/bin"
    install -m 0755 "$work"/ruff-wheel/ruff-*.data/scripts/ruff "$root/usr/local/bin/ruff"
    # pip runs from its own wheel, only in the install step of a pinned version (with network).
    local pip_version=24.3.1
    python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$work/pip" "pip==$pip_version"
    mkdir -p "$root/opt/pip"
    install -m 0644 "$work"/pip/pip-"$pip_version"-py3-none-any.whl "$root/opt/pip/pip.whl"
    host_cas "$root"
    import_image ci-medic-fixer/python "$root" "$recipe" \
        'printf "black=%s,isort=%s,ruff=%s" "$(black --version | head -n1 | cut -d" " -f2)" "$(python3 -c "import isort; print(isort.__version__)")" "$(ruff --version | cut -d" " -f2)"'
}

GO_PKGS=(golang-1.19-go golang-golang-x-tools)
build_go() {
    local root=$1 recipe=$2
    unpack_debs "$root" "${GO_PKGS[@]}"
    # golang-golang-x-tools ships some thirty programs (160 MB); the tier runs goimports only.
    local drop
    for drop in $(dpkg-deb -c "$work"/debs-go/golang-golang-x-tools_*.deb | awk '{print $6}' \
        | grep -E '^\./usr/bin/[^/]+$' | grep -v '/goimports$'); do
        rm -f "$root/${drop#./}"
    done
    rm -rf "$root/usr/share/doc" "$root/usr/share/gocode"
    mkdir -p "$root/usr/local/bin"
    ln -s /usr/lib/go-1.19/bin/gofmt "$root/usr/local/bin/gofmt"
    ln -s /usr/lib/go-1.19/bin/go "$root/usr/local/bin/go"
    # gofmt has no version flag: it is the Go toolchain's. goimports has none either: it is
    # golang.org/x/tools's, as Debian packages it.
    local xtools
    xtools=$(dpkg-deb -f "$work"/debs-go/golang-golang-x-tools_*.deb Version | sed -E 's/^[0-9]+://; s/[+~-].*//')
    import_image ci-medic-fixer/go "$root" "$recipe" \
        "printf 'gofmt=%s,goimports=$xtools' \"\$(GOCACHE=/tmp go version | cut -d' ' -f3 | sed s/^go//)\"; test -x /usr/bin/goimports"
}

# zlib1g: the toolchain's rustc links libz. gcc, libc6-dev: rustc links build scripts and
# proc-macros with `cc`, and crates' build scripts compile C (the `cc` crate).
RUST_PKGS=(rustfmt zlib1g gcc libc6-dev)
build_rust() {
    local root=$1 recipe=$2
    unpack_debs "$root" "${RUST_PKGS[@]}"
    # Debian makes `cc` and `gcc` by alternatives and maintainer scripts, which never run here.
    ln -sf gcc-12 "$root/usr/bin/gcc"
    ln -sf gcc-12 "$root/usr/bin/cc"
    host_cas "$root"
    # rustfmt's own version (1.5.1) is not the toolchain's a project pins (1.63.0): both.
    local rust
    rust=$(dpkg-deb -f "$work"/debs-rust/rustfmt_*.deb Version | sed -E 's/^[0-9]+://; s/[+~-].*//')
    # The machine's toolchain, as .ci/docker-setup.sh copies it into ci-medic-base/rust: bin
    # and lib (the compiler, cargo, clippy, the host's std); share/ is docs only. clippy's
    # version is the toolchain's, which is what a rust-toolchain file pins. A host without
    # rustc builds the image without clippy (its label then names none, and the tier says so).
    local probe="printf 'rustfmt=%s,rust=$rust' \"\$(rustfmt --version | cut -d' ' -f2 | cut -d- -f1)\""
    if command -v rustc >/dev/null 2>&1; then
        local sysroot
        sysroot=$(rustc --print sysroot)
        mkdir -p "$root/opt/rust"
        cp -a "$sysroot/bin" "$sysroot/lib" "$root/opt/rust/"
        probe="$probe; printf ',clippy=%s' \"\$(/opt/rust/bin/rustc --version | cut -d' ' -f2)\"; PATH=/opt/rust/bin:\$PATH cargo clippy --version >/dev/null; cc --version >/dev/null"
    else
        log "no rustc on this host: ci-medic-fixer/rust is built without clippy"
    fi
    import_image ci-medic-fixer/rust "$root" "$recipe" "$probe"
}

CLANG_PKGS=(clang-format-14)
build_clang() {
    local root=$1 recipe=$2
    unpack_debs "$root" "${CLANG_PKGS[@]}"
    mkdir -p "$root/usr/local/bin"
    ln -s /usr/bin/clang-format-14 "$root/usr/local/bin/clang-format"
    import_image ci-medic-fixer/clang "$root" "$recipe" \
        'printf "clang-format=%s" "$(clang-format --version | sed -E "s/.*version ([0-9.]+).*/\1/")"'
}

# The candidate nodejs may be one installed from elsewhere (nodesource), whose dependencies
# are not Debian's: Debian's nodejs 18 needs its libnode, named here.
NODE_PKGS=(nodejs libnode108)
build_node() {
    local root=$1 recipe=$2
    unpack_debs "$root" "${NODE_PKGS[@]}"
    # npm runs here, at build time; the sandbox never reaches a registry.
    mkdir -p "$root/opt/fixers"
    # npm (it bundles its own dependencies) runs only in the install step of a pinned version.
    local npm_version=10.9.2
    (cd "$root/opt/fixers" && npm install --silent --no-audit --no-fund --omit=dev \
        "prettier@$PRETTIER_VERSION" "eslint@$ESLINT_VERSION" "npm@$npm_version" >"$work/npm.log" 2>&1) \
        || { cat "$work/npm.log" >&2; exit 1; }
    host_cas "$root"
    mkdir -p "$root/usr/local/bin"
    ln -s /opt/fixers/node_modules/.bin/prettier "$root/usr/local/bin/prettier"
    ln -s /opt/fixers/node_modules/.bin/eslint "$root/usr/local/bin/eslint"
    # Node looks for a bare import (`@eslint/js`, `globals`, `eslint`) in each parent's
    # node_modules up to `/node_modules`: a project's `eslint.config.js` in the copied tree, and
    # the tier's own `node -e` script, find the image's packages there.
    ln -s /opt/fixers/node_modules "$root/node_modules"
    import_image ci-medic-fixer/node "$root" "$recipe" \
        'printf "prettier=%s,eslint=%s" "$(prettier --version)" "$(eslint --version | sed s/^v//)"'
}

for image in python go rust clang node; do
    wanted "$image" || continue
    pkgs_var="${image^^}_PKGS[@]"
    recipe=$(recipe_hash "$image" "${!pkgs_var}")
    if current "ci-medic-fixer/$image" "$recipe"; then
        log "ci-medic-fixer/$image current"
    else
        "build_$image" "$work/$image" "$recipe"
    fi
done

log "ready in $(( $(date +%s) - started )) s"
