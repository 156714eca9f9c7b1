#!/usr/bin/env bash
# Makes a Docker engine available for the executor's tests and builds the local test images.
#
# Idempotent: each step is skipped when already done. Never pulls from a registry: the images
# are assembled from Debian packages already reachable through apt.
#
#   1. Docker engine: if `docker info` does not answer, install Debian's docker.io (+ containerd,
#      runc) when dockerd is missing, start `dockerd` in the background (log: /tmp/dockerd.log)
#      and wait until it answers (at most 60 s).
#   2. ci-medic-test/busybox: FROM scratch + Debian's static busybox, applets linked into /bin.
#   3. ci-medic-test/python: a root filesystem unpacked from Debian's python3.11 packages
#      (python3.11-minimal, libpython3.11-stdlib and their libraries) + static busybox for /bin/sh,
#      imported with `docker import`. Real CPython, so the failing-build test's log is a real
#      interpreter's output.
#   4. ci-medic-base/debian:bookworm-slim: a Debian 12 minbase root filesystem made by
#      debootstrap from deb.debian.org, trimmed as debian:bookworm-slim is (no docs, man pages
#      or apt lists). The Dockerfile's runtime stage builds on it in `tests/docker_image.rs`
#      (`--build-arg RUNTIME_IMAGE=…`), standing in for Docker Hub's image.
#   5. ci-medic-base/rust:bookworm: that base + Debian's gcc + the machine's own Rust toolchain,
#      standing in for rust:1-slim-bookworm as the Dockerfile's builder base.
#
# Environment: CI_MEDIC_DOCKERD_ARGS adds flags to dockerd (e.g. "--storage-driver=vfs
# --iptables=false" where overlayfs or iptables are unavailable).
set -euo pipefail

log() { printf '[docker-setup] %s\n' "$*" >&2; }
started=$(date +%s)

# Prefer the Debian client when present: it matches the Debian daemon's API.
DOCKER=docker
[ -x /usr/bin/docker ] && DOCKER=/usr/bin/docker

apt_install() {
    export DEBIAN_FRONTEND=noninteractive
    # Another apt may hold the lock on a shared machine: wait for it rather than fail.
    for _ in $(seq 1 60); do
        if apt-get install -y --no-install-recommends "$@" >/tmp/docker-setup-apt.log 2>&1; then
            return 0
        fi
        if grep -q 'Could not get lock' /tmp/docker-setup-apt.log; then sleep 5; continue; fi
        if grep -qE 'Unable to locate|has no installation candidate' /tmp/docker-setup-apt.log; then
            apt-get update -qq >/dev/null 2>&1 || true
            continue
        fi
        cat /tmp/docker-setup-apt.log >&2
        return 1
    done
    log "apt lock never released"; return 1
}

engine_up() { "$DOCKER" info >/dev/null 2>&1; }

if engine_up; then
    log "Docker engine already answering"
else
    if ! command -v dockerd >/dev/null 2>&1 || ! command -v busybox >/dev/null 2>&1; then
        log "installing docker.io and busybox-static from Debian"
        apt-get update -qq >/dev/null 2>&1 || true
        apt_install docker.io busybox-static
        [ -x /usr/bin/docker ] && DOCKER=/usr/bin/docker
    fi
    if ! pgrep -x dockerd >/dev/null 2>&1; then
        log "starting dockerd (log: /tmp/dockerd.log)"
        # shellcheck disable=SC2086
        nohup dockerd ${CI_MEDIC_DOCKERD_ARGS:-} >/tmp/dockerd.log 2>&1 &
    fi
    for _ in $(seq 1 60); do
        engine_up && break
        sleep 1
    done
    if ! engine_up; then
        log "dockerd did not answer within 60 s; last lines of /tmp/dockerd.log:"
        tail -n 30 /tmp/dockerd.log >&2 || true
        exit 1
    fi
fi
command -v busybox >/dev/null 2>&1 || apt_install busybox-static
BUSYBOX=$(command -v busybox)
if ! file -L "$BUSYBOX" 2>/dev/null | grep -q 'statically linked'; then
    # The images have no libc of their own for busybox: it must be the static build.
    apt_install busybox-static
    BUSYBOX=/bin/busybox
fi

work=$(mktemp -d /tmp/ci-medic-images.XXXXXX)
trap 'rm -rf "$work"' EXIT

link_applets() { # root dir: /bin/<applet> -> busybox, never over a real file
    local root=$1 a
    for a in $("$BUSYBOX" --list); do
        [ -e "$root/bin/$a" ] || [ -e "$root/usr/bin/$a" ] || ln -s busybox "$root/bin/$a"
    done
}

if "$DOCKER" image inspect ci-medic-test/busybox >/dev/null 2>&1; then
    log "ci-medic-test/busybox present"
else
    log "building ci-medic-test/busybox"
    mkdir -p "$work/busybox/bin" "$work/busybox/tmp" "$work/busybox/etc"
    chmod 1777 "$work/busybox/tmp"
    cp "$BUSYBOX" "$work/busybox/bin/busybox"
    link_applets "$work/busybox"
    printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n' >"$work/busybox/etc/passwd"
    printf 'root:x:0:\nnogroup:x:65534:\n' >"$work/busybox/etc/group"
    tar -C "$work/busybox" -c . | "$DOCKER" import \
        -c 'ENV PATH=/usr/local/bin:/usr/bin:/bin' -c 'CMD ["/bin/sh"]' \
        - ci-medic-test/busybox >/dev/null
fi

if "$DOCKER" image inspect ci-medic-test/python >/dev/null 2>&1; then
    log "ci-medic-test/python present"
else
    log "building ci-medic-test/python from Debian packages"
    mkdir -p "$work/debs" "$work/python/bin" "$work/python/tmp" "$work/python/etc"
    chmod 1777 "$work/python/tmp"
    # apt-get download writes as _apt when it can: give it a directory it may write.
    chmod 777 "$work/debs"
    (cd "$work/debs" && apt-get download \
        python3.11-minimal libpython3.11-minimal libpython3.11-stdlib \
        libc6 zlib1g libexpat1 libffi8 liblzma5 libbz2-1.0 libgcc-s1 \
        >/tmp/docker-setup-download.log 2>&1) || {
        apt-get update -qq >/dev/null 2>&1 || true
        (cd "$work/debs" && apt-get download \
            python3.11-minimal libpython3.11-minimal libpython3.11-stdlib \
            libc6 zlib1g libexpat1 libffi8 liblzma5 libbz2-1.0 libgcc-s1)
    }
    for deb in "$work"/debs/*.deb; do dpkg-deb -x "$deb" "$work/python"; done
    ln -sf python3.11 "$work/python/usr/bin/python3"
    cp "$BUSYBOX" "$work/python/bin/busybox"
    link_applets "$work/python"
    printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n' >"$work/python/etc/passwd"
    printf 'root:x:0:\nnogroup:x:65534:\n' >"$work/python/etc/group"
    tar -C "$work/python" -c . | "$DOCKER" import \
        -c 'ENV PATH=/usr/local/bin:/usr/bin:/bin' -c 'ENV PYTHONDONTWRITEBYTECODE=1' \
        -c 'CMD ["/bin/sh"]' - ci-medic-test/python >/dev/null
fi

if "$DOCKER" image inspect ci-medic-base/debian:bookworm-slim >/dev/null 2>&1; then
    log "ci-medic-base/debian:bookworm-slim present"
else
    log "building ci-medic-base/debian:bookworm-slim with debootstrap"
    command -v debootstrap >/dev/null 2>&1 || apt_install debootstrap
    root="$work/bookworm"
    debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian \
        >/tmp/docker-setup-debootstrap.log 2>&1 || {
        tail -n 30 /tmp/docker-setup-debootstrap.log >&2
        exit 1
    }
    rm -rf "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* \
        "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin
    tar -C "$root" -c . | "$DOCKER" import -c 'CMD ["bash"]' \
        - ci-medic-base/debian:bookworm-slim >/dev/null
fi

# ci-medic-base/rust:bookworm stands in for Docker Hub's rust:1-slim-bookworm as the Dockerfile's
# builder base (`--build-arg BUILDER_IMAGE=…` in `tests/docker_image.rs`). No Rust toolchain can
# be fetched here but the machine's own (installed by rustup), so its rustc, cargo and the host's
# standard library are copied in, laid out as the official image does (CARGO_HOME=/usr/local/cargo,
# toolchain on PATH); gcc and the C headers come from Debian for the crates that build C.
# Rebuilt when the machine's toolchain changes (the label records the rustc version).
if command -v rustc >/dev/null 2>&1; then
    rust_version=$(rustc --version)
    have=$("$DOCKER" image inspect -f '{{ index .Config.Labels "ci-medic.rustc" }}' \
        ci-medic-base/rust:bookworm 2>/dev/null || true)
    if [ "$have" = "$rust_version" ]; then
        log "ci-medic-base/rust:bookworm present ($rust_version)"
    else
        log "building ci-medic-base/rust:bookworm from the machine's toolchain ($rust_version)"
        sysroot=$(rustc --print sysroot)
        ctx="$work/rust"
        mkdir -p "$ctx/toolchain"
        # bin, lib and libexec are the compiler, cargo and the host's std; share/ is docs only.
        cp -a "$sysroot/bin" "$sysroot/lib" "$ctx/toolchain/"
        [ -d "$sysroot/libexec" ] && cp -a "$sysroot/libexec" "$ctx/toolchain/"
        # The machine's extra trust anchors (a TLS-inspecting egress proxy's CA, where there is
        # one) go in too, or cargo cannot reach crates.io from inside the build.
        mkdir -p "$ctx/local-ca"
        cp /usr/local/share/ca-certificates/*.crt "$ctx/local-ca/" 2>/dev/null || true
        cat >"$ctx/Dockerfile" <<'DOCKERFILE'
FROM ci-medic-base/debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc libc6-dev ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY local-ca/ /usr/local/share/ca-certificates/
RUN update-ca-certificates >/dev/null
COPY toolchain /usr/local/rust
ENV CARGO_HOME=/usr/local/cargo \
    PATH=/usr/local/cargo/bin:/usr/local/rust/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
RUN rustc --version && cargo --version
DOCKERFILE
        "$DOCKER" build -q --label "ci-medic.rustc=$rust_version" -t ci-medic-base/rust:bookworm \
            "$ctx" >/dev/null
    fi
else
    log "no rustc on this machine: ci-medic-base/rust:bookworm not built"
fi

# Smoke test: the sandbox settings the executor uses must work on this engine.
"$DOCKER" run --rm --network none --user 65534:65534 --cap-drop ALL \
    --security-opt no-new-privileges --pids-limit 64 --memory 256m \
    ci-medic-test/python sh -c 'python3 -c "print(\"python ok\")"' >/dev/null

log "ready in $(( $(date +%s) - started )) s"
