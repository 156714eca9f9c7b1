-- ci-medic on PostgreSQL, version 1: deliveries (de-duplication and payloads), the job queue
-- with leases, the registry's per-day DDS counters, and named leases for singletons.
-- Applied by `ci-medic migrate` and at the start of `serve`; never edited once released
-- (sqlx refuses a migration whose checksum changed): later changes are new files.

CREATE TABLE deliveries (
    id          TEXT PRIMARY KEY,            -- X-GitHub-Delivery, or an internal job's id
    event       TEXT NOT NULL,
    action      TEXT,
    received_at TIMESTAMPTZ NOT NULL,
    queued      BOOLEAN NOT NULL,
    payload     BYTEA                        -- only when a job reads it
);
CREATE INDEX deliveries_received_at ON deliveries (received_at);

CREATE TABLE jobs (
    id          BIGSERIAL PRIMARY KEY,       -- order of acceptance, per key too
    delivery_id TEXT NOT NULL REFERENCES deliveries (id),
    event       TEXT NOT NULL,
    kind        TEXT NOT NULL,               -- JobKind as JSON
    action      TEXT,
    key         TEXT NOT NULL,               -- serialisation key: one pull request
    state       TEXT NOT NULL CHECK (state IN ('queued', 'running', 'parked')),
    attempts    INTEGER NOT NULL DEFAULT 0,
    enqueued_at TIMESTAMPTZ NOT NULL,
    not_before  TIMESTAMPTZ,
    last_error  TEXT,
    lease_owner TEXT,                        -- the replica's worker running it
    lease_until TIMESTAMPTZ                  -- past it, the job runs again elsewhere
);
CREATE INDEX jobs_key ON jobs (key, id) WHERE state <> 'parked';
CREATE INDEX jobs_live ON jobs (id) WHERE state <> 'parked';

CREATE TABLE dds_counters (
    kind TEXT NOT NULL,                      -- 'fix' or 'code'
    day  DATE NOT NULL,
    seq  INTEGER NOT NULL,                   -- the last number handed out
    PRIMARY KEY (kind, day)
);

CREATE TABLE leases (
    name  TEXT PRIMARY KEY,                  -- 'reconcile', 'prune', …
    owner TEXT NOT NULL,
    until TIMESTAMPTZ NOT NULL
);
