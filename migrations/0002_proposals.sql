-- ci-medic on PostgreSQL, version 2: the proposal registry (failed code_change records,
-- code_fix proposals with their transitions and push times) and the fix runs, so every
-- replica sees every proposal. Records are the same JSON the sled store keeps; the columns
-- beside them are what is looked up or must be unique.
-- Never edited once released: later changes are new files.

CREATE TABLE dds_failed (
    id         TEXT PRIMARY KEY,             -- DDS-YYYYMMDD-CODE-NNN
    project    TEXT,                         -- the failed check it records, once per check:
    check_name TEXT,                         -- NULL only for a record stored without one
    head_sha   TEXT,
    record     JSONB NOT NULL,               -- FailedDds
    UNIQUE (project, check_name, head_sha)
);

CREATE TABLE dds_fixes (
    id        TEXT PRIMARY KEY,              -- DDS-FIX-YYYYMMDD-NNN
    source_id TEXT NOT NULL UNIQUE,          -- rule 10: one code_fix per source, ever
    record    JSONB NOT NULL                 -- StoredProposal, its status and history
);

CREATE TABLE fix_runs (
    repo       TEXT NOT NULL,
    pr_number  BIGINT NOT NULL,
    check_name TEXT NOT NULL,
    version    BIGINT NOT NULL,              -- compare-and-swap: a write names the one it read
    active     BOOLEAN NOT NULL,             -- approved, pushed or awaiting a re-run
    rerun_sha  TEXT,                         -- the commit whose re-run it awaits
    record     JSONB NOT NULL,               -- FixRun
    PRIMARY KEY (repo, pr_number, check_name)
);
CREATE INDEX fix_runs_active ON fix_runs (repo, pr_number, check_name) WHERE active;
CREATE INDEX fix_runs_rerun ON fix_runs (repo, rerun_sha, check_name) WHERE rerun_sha IS NOT NULL;

-- Every fix commit ci-medic pushed, to the run that pushed it (the CI monitor's verdicts).
CREATE TABLE fix_runs_by_pushed_commit (
    repo       TEXT NOT NULL,
    sha        TEXT NOT NULL,
    pr_number  BIGINT NOT NULL,
    check_name TEXT NOT NULL,
    PRIMARY KEY (repo, sha)
);
