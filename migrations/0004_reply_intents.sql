-- ci-medic on PostgreSQL, version 4: the command comments ci-medic asked GitHub to reply to.
-- A reply is recorded here before it is posted, so a job retried on any replica after a lost
-- answer looks for the reply it may already have posted instead of posting it twice.
-- Never edited once released: later changes are new files.

CREATE TABLE reply_intents (
    repo       TEXT NOT NULL,
    comment_id BIGINT NOT NULL,
    at         TIMESTAMPTZ NOT NULL DEFAULT now(),  -- when it was first asked for
    PRIMARY KEY (repo, comment_id)
);
