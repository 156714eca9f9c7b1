# A stand-in for Docker Hub's `caddy:2`, which cannot be pulled where ci-medic is tested:
# Debian 12's own Caddy (2.6) on the Debian base `.ci/docker-setup.sh` makes with debootstrap,
# reading /etc/caddy/Caddyfile as the official image does. Used by tests/compose_stack.rs.
ARG BASE=ci-medic-base/debian:bookworm-slim
FROM ${BASE}
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends caddy \
    && rm -rf /var/lib/apt/lists/*
EXPOSE 8080
CMD ["caddy", "run", "--config", "/etc/caddy/Caddyfile", "--adapter", "caddyfile"]
