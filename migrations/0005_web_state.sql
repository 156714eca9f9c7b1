-- ci-medic on PostgreSQL, version 5: what the browser-facing flows keep between two requests,
-- so that the second may reach another replica — the one-time `state` tokens of the setup flow
-- and of the status page's GitHub sign-in, and the status page's sessions. Only the SHA-256 of
-- a token or session id is stored: what this table holds cannot be replayed.
-- Never edited once released: later changes are new files.

CREATE TABLE once_tokens (
    kind       TEXT NOT NULL,         -- 'setup' or 'sign_in'
    digest     BYTEA NOT NULL,        -- SHA-256 of the token
    created_at TIMESTAMPTZ NOT NULL,  -- beyond the bound, the oldest go first
    expires_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (kind, digest)
);
CREATE INDEX once_tokens_by_age ON once_tokens (kind, created_at);

CREATE TABLE status_sessions (
    digest     BYTEA PRIMARY KEY,     -- SHA-256 of the id the cookie holds
    role       TEXT NOT NULL,         -- JSON: operator, or a GitHub user and their repositories
    csrf       TEXT NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL   -- fixed at sign-in; beyond the bound, the soonest go first
);
CREATE INDEX status_sessions_by_expiry ON status_sessions (expires_at);
