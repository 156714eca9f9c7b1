# syntax=docker/dockerfile:1
#
# ci-medic: multi-stage build. The builder compiles the release binary with BuildKit cache
# mounts (registry and target dir), the runtime image holds the binary, CA certificates and
# nothing else, and runs as an unprivileged user with DATA_DIR on a volume.
#
#   docker build -t ci-medic .
#   docker run -p 3000:3000 -v ci-medic-data:/data -e PUBLIC_URL=https://… ci-medic

FROM rust:1-slim-bookworm AS builder
WORKDIR /build
COPY . .
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/build/target \
    cargo build --release --locked --bin ci-medic \
    && install -m 0755 target/release/ci-medic /usr/local/bin/ci-medic

FROM debian:bookworm-slim AS runtime
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
COPY --from=builder /usr/local/bin/ci-medic /usr/local/bin/ci-medic

# OCI annotations; VERSION and REVISION come from the build (`--build-arg REVISION=$(git rev-parse HEAD)`).
ARG VERSION=0.1.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="ci-medic" \
      org.opencontainers.image.description="A GitHub App that turns failed CI checks into reviewed, minimal fixes" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.source="https://github.com/ci-medic/ci-medic" \
      org.opencontainers.image.base.name="docker.io/library/debian:bookworm-slim"

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
