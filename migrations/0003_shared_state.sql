-- ci-medic on PostgreSQL, version 3: the rest of the state every replica must see alike —
-- triage history and automatic re-run counters, installations, the App's credentials (sealed
-- with the operator's CREDENTIALS_KEY; never in clear), and the redelivery pass's mark.
-- Never edited once released: later changes are new files.

CREATE TABLE triage_outcomes (
    id                BIGSERIAL PRIMARY KEY,  -- history order; pruning drops the lowest
    repo              TEXT NOT NULL,
    check_name        TEXT NOT NULL,
    test              TEXT NOT NULL,
    head_sha          TEXT NOT NULL,
    on_default_branch BOOLEAN NOT NULL,
    passed            BOOLEAN NOT NULL
);
-- A failure counts once per commit and check (a redelivery is not a second failure); a pass
-- once per commit, on the default branch or not. Replicas racing on one event insert one row.
CREATE UNIQUE INDEX triage_failures_once
    ON triage_outcomes (repo, head_sha, check_name, test) WHERE NOT passed;
CREATE UNIQUE INDEX triage_passes_once
    ON triage_outcomes (repo, test, head_sha, on_default_branch) WHERE passed;
CREATE INDEX triage_outcomes_by_test ON triage_outcomes (repo, test, id);
CREATE INDEX triage_outcomes_by_check ON triage_outcomes (repo, check_name, id) WHERE NOT passed;

CREATE TABLE triage_reruns (
    repo       TEXT NOT NULL,
    head_sha   TEXT NOT NULL,
    check_name TEXT NOT NULL,
    count      INTEGER NOT NULL CHECK (count >= 0),  -- automatic re-runs taken
    at         TIMESTAMPTZ NOT NULL,                 -- last written; pruning drops the oldest
    PRIMARY KEY (repo, head_sha, check_name)
);
CREATE INDEX triage_reruns_at ON triage_reruns (at);

CREATE TABLE installations (
    id           BIGINT PRIMARY KEY,
    account      TEXT,
    repositories TEXT[] NOT NULL,          -- owner/name, sorted
    updated_at   TIMESTAMPTZ NOT NULL
);

-- One row: the App. The three secrets are XChaCha20-Poly1305 sealed values
-- ("cmk1" ‖ key id ‖ nonce ‖ ciphertext), each bound to its column's name.
CREATE TABLE app_credentials (
    singleton       BOOLEAN PRIMARY KEY DEFAULT true CHECK (singleton),
    app_id          BIGINT NOT NULL,
    slug            TEXT NOT NULL,
    html_url        TEXT NOT NULL,
    client_id       TEXT,
    private_key_pem BYTEA NOT NULL,
    webhook_secret  BYTEA NOT NULL,
    client_secret   BYTEA,
    key_id          TEXT NOT NULL,           -- which CREDENTIALS_KEY sealed them (a hash)
    updated_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE shared_marks (
    name TEXT PRIMARY KEY,                   -- 'redelivery_last_pass'
    at   TIMESTAMPTZ NOT NULL
);
