# A stand-in for Docker Hub's `postgres:17-bookworm`, which cannot be pulled where ci-medic is
# tested: Debian 12's own PostgreSQL (15) on the Debian base `.ci/docker-setup.sh` makes with
# debootstrap, with an entrypoint that honours what deploy/docker-compose.yml uses of the
# official image (POSTGRES_USER, POSTGRES_PASSWORD, POSTGRES_DB, the data directory
# /var/lib/postgresql/data, `pg_isready` for the health check). Used by tests/compose_stack.rs.
ARG BASE=ci-medic-base/debian:bookworm-slim
FROM ${BASE}
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends postgresql \
    && rm -rf /var/lib/apt/lists/* \
    && mkdir -p /var/lib/postgresql/data /var/run/postgresql \
    && chown -R postgres:postgres /var/lib/postgresql /var/run/postgresql \
    && chmod 700 /var/lib/postgresql/data
COPY postgres-entrypoint.sh /usr/local/bin/postgres-entrypoint.sh
ENV PATH=/usr/lib/postgresql/15/bin:$PATH PGDATA=/var/lib/postgresql/data
USER postgres
EXPOSE 5432
STOPSIGNAL SIGINT
ENTRYPOINT ["/usr/local/bin/postgres-entrypoint.sh"]
