# ci-medic: multi-stage build. The builder compiles the release binary with BuildKit cache
# mounts (registry and target dir), the runtime image holds the binary, CA certificates and
# nothing else, and runs as an unprivileged user with DATA_DIR on a volume.
#
#   DOCKER_BUILDKIT=1 docker build -t ci-medic .
#   docker run -p 3000:3000 -v ci-medic-data:/data -e PUBLIC_URL=https://… ci-medic
#
# The bases are build arguments so a registry mirror or a locally assembled Debian base can
# stand in for Docker Hub (`.ci/docker-setup.sh` builds one from Debian packages for CI):
#
#   --build-arg RUNTIME_IMAGE=… --build-arg BUILDER_IMAGE=…
#
# `--target prebuilt` packages a binary built elsewhere (placed at the context's root as
# `ci-medic`) in exactly the runtime image; `tests/docker_image.rs` builds it that way.
# No `# syntax=` line: the engine's built-in frontend reads this file, so nothing is pulled.

ARG BUILDER_IMAGE=rust:1-slim-bookworm
ARG RUNTIME_IMAGE=debian:bookworm-slim

FROM ${RUNTIME_IMAGE} AS runtime-base
# ca-certificates: TLS to GitHub, the LLM API and GitHub Enterprise Server.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 ci-medic \
    && useradd --system --uid 10001 --gid ci-medic --home-dir /data --shell /usr/sbin/nologin ci-medic \
    && mkdir -p /data \
    && chown ci-medic:ci-medic /data \
    && chmod 0700 /data
# OCI annotations; VERSION and REVISION come from the build (`--build-arg REVISION=$(git rev-parse HEAD)`).
ARG RUNTIME_IMAGE
ARG VERSION=0.1.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="ci-medic" \
      org.opencontainers.image.description="A GitHub App that turns failed CI checks into reviewed, minimal fixes" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.source="https://github.com/ci-medic/ci-medic" \
      org.opencontainers.image.base.name="${RUNTIME_IMAGE}"

ENV DATA_DIR=/data \
    HOST=0.0.0.0 \
    PORT=3000 \
    LOG_FORMAT=json
VOLUME ["/data"]
EXPOSE 3000
USER 10001:10001

# No curl in the image: bash (already in debian-slim) speaks just enough HTTP over /dev/tcp.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
    CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${PORT:-3000} && printf 'GET /healthz HTTP/1.0\\r\\nHost: localhost\\r\\n\\r\\n' >&3 && head -n1 <&3 | grep -q ' 200 '"]

STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/ci-medic"]
CMD ["serve"]

# A binary built elsewhere (CI, a release job): `--target prebuilt` with an executable
# `ci-medic` at the context's root. It comes before the builder so that the classic builder,
# which runs every stage up to the target, never needs the Rust image. The default target is
# the last stage.
FROM runtime-base AS prebuilt
COPY ci-medic /usr/local/bin/ci-medic


FROM ${BUILDER_IMAGE} AS builder
# The cargo profile to build with. `release` for images people run; CI builds this stage with
# `image-check` (Cargo.toml: release settings without optimisation), which compiles the same
# sources and features through the same steps in a fraction of the time.
ARG CARGO_PROFILE=release
WORKDIR /build
COPY . .
# The target cache mount outlives this build and is shared by every build on the engine, and
# cargo judges the workspace's own crates fresh by file times: sources copied with times older
# than the last build there (another checkout, another branch) would not be compiled, and the
# image would get that build's binary. Touching them makes cargo compile the workspace's crates
# every time this step runs; dependencies stay cached. (The step itself runs only when the
# copied sources changed: BuildKit reuses it otherwise.)
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/build/target \
    find . -path ./target -prune -o \( -name '*.rs' -o -name Cargo.toml \) -exec touch {} + \
    && cargo build --profile "${CARGO_PROFILE}" --locked --bin ci-medic \
    && install -m 0755 "target/${CARGO_PROFILE}/ci-medic" /usr/local/bin/ci-medic

FROM runtime-base AS runtime
COPY --from=builder /usr/local/bin/ci-medic /usr/local/bin/ci-medic
