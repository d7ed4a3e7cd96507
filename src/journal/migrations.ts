/**
 * Schema migrations, applied in order inside one transaction each; `PRAGMA user_version` holds the number of
 * migrations applied. Never edit a released migration: append a new one.
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
  CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    order_id TEXT NOT NULL UNIQUE,
    flow TEXT NOT NULL,
    item INTEGER NOT NULL,
    price INTEGER NOT NULL CHECK (price >= 0),
    driver TEXT NOT NULL,
    payment_id TEXT,
    opened_at INTEGER NOT NULL,
    approved_amount INTEGER,
    vend_outcome TEXT,
    decision TEXT CHECK (decision IN ('capture', 'cancel')),
    decision_amount INTEGER,
    decision_reason TEXT,
    review INTEGER NOT NULL DEFAULT 0,
    result TEXT,
    reason TEXT,
    closed_at INTEGER
  ) STRICT;
  CREATE INDEX sessions_open ON sessions (closed_at) WHERE closed_at IS NULL OR result = 'unsettled';
  CREATE TABLE intents (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id),
    op TEXT NOT NULL CHECK (op IN ('start', 'capture', 'cancel', 'refund')),
    order_id TEXT NOT NULL,
    payment_id TEXT,
    amount INTEGER NOT NULL,
    idempotency_key TEXT NOT NULL UNIQUE,
    state TEXT NOT NULL CHECK (state IN ('pending', 'done', 'failed')),
    detail TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX intents_session ON intents (session_id);
  CREATE TABLE events (
    id INTEGER PRIMARY KEY,
    session_id TEXT,
    at INTEGER NOT NULL,
    type TEXT NOT NULL,
    data TEXT
  ) STRICT;
  CREATE INDEX events_session ON events (session_id);
  `,
  `
  CREATE TABLE vends (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id),
    item INTEGER NOT NULL,
    price INTEGER NOT NULL CHECK (price > 0),
    outcome TEXT CHECK (outcome IN ('success', 'failure', 'unknown', 'cancelled')),
    approved_at INTEGER NOT NULL,
    settled_at INTEGER
  ) STRICT;
  CREATE INDEX vends_session ON vends (session_id);
  `,
  `
  CREATE TRIGGER events_append_only BEFORE UPDATE ON events
  BEGIN
    SELECT RAISE(ABORT, 'the event log is append-only');
  END;
  CREATE INDEX sessions_closed ON sessions (closed_at) WHERE closed_at IS NOT NULL;
  CREATE INDEX events_at ON events (at);
  `,
  `
  CREATE TABLE console_attempts (
    id INTEGER PRIMARY KEY,
    at INTEGER NOT NULL,
    method TEXT NOT NULL CHECK (method IN ('pin', 'badge')),
    state TEXT NOT NULL CHECK (state IN ('pending', 'ok', 'failed'))
  ) STRICT;
  CREATE TABLE console_audit (
    id INTEGER PRIMARY KEY,
    at INTEGER NOT NULL,
    who TEXT NOT NULL,
    command TEXT NOT NULL,
    outcome TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL
  ) STRICT;
  CREATE TRIGGER console_audit_no_update BEFORE UPDATE ON console_audit
  BEGIN
    SELECT RAISE(ABORT, 'the console audit log is append-only');
  END;
  CREATE TRIGGER console_audit_no_delete BEFORE DELETE ON console_audit
  BEGIN
    SELECT RAISE(ABORT, 'the console audit log is append-only');
  END;
  `,
  `
  CREATE TABLE outbox (
    seq INTEGER PRIMARY KEY,
    at INTEGER NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('session', 'fault', 'service', 'version', 'dropped')),
    data TEXT NOT NULL,
    delivered INTEGER NOT NULL DEFAULT 0 CHECK (delivered IN (0, 1))
  ) STRICT;
  CREATE INDEX outbox_pending ON outbox (seq) WHERE delivered = 0;
  `,
  // Migration 6 (issue 18): plan vends, with the member's allowance counted per day and per month.
  `
  CREATE TABLE plan_sessions (
    session_id TEXT PRIMARY KEY REFERENCES sessions (id),
    member_id TEXT NOT NULL,
    plan_id TEXT NOT NULL,
    badge TEXT NOT NULL,
    day TEXT NOT NULL,
    month TEXT NOT NULL
  ) STRICT;
  CREATE TABLE plan_usage (
    member_id TEXT NOT NULL,
    period TEXT NOT NULL,
    items INTEGER NOT NULL CHECK (items >= 0),
    amount INTEGER NOT NULL CHECK (amount >= 0),
    PRIMARY KEY (member_id, period)
  ) STRICT;
  `,
  // Migration 7 (issue 30): the currency of a session's amounts, written when it opens. Rows from before it
  // are NULL until the daemon, which knows the unit's configured currency, fills them at open (sqliteSetup).
  `
  ALTER TABLE sessions ADD COLUMN currency TEXT CHECK (currency IS NULL OR length(currency) = 3);
  `,
  // The console audit log's head (issue 33): its row count and last hash in the meta table, written in the
  // audit row's own transaction, so rows deleted from the end of the log no longer go unseen. The head
  // may not be deleted nor go back (triggers, like the log's own).
  `
  INSERT INTO meta (key, value)
    SELECT 'audit_head', json_object('count', count(*), 'hash',
      coalesce((SELECT hash FROM console_audit ORDER BY id DESC LIMIT 1), '${"0".repeat(64)}'))
    FROM console_audit WHERE true
  ON CONFLICT (key) DO NOTHING;
  CREATE TRIGGER meta_audit_head_kept BEFORE DELETE ON meta WHEN old.key = 'audit_head'
  BEGIN
    SELECT RAISE(ABORT, 'the console audit head is kept');
  END;
  CREATE TRIGGER meta_audit_head_grows BEFORE UPDATE ON meta
    WHEN old.key = 'audit_head'
      AND json_extract(new.value, '$.count') <= json_extract(old.value, '$.count')
  BEGIN
    SELECT RAISE(ABORT, 'the console audit head only grows');
  END;
  `,
  // Issue 36 (DEX audits): each read of the machine's DEX port, raw file and parsed counters; the outbox
  // gains the kind 'dex'. SQLite cannot change a CHECK in place: the outbox is rebuilt with its rows, seq
  // numbers and delivered flags unchanged, and its index made again (both inside this one transaction).
  `
  CREATE TABLE dex_reads (
    id INTEGER PRIMARY KEY,
    read_id TEXT NOT NULL UNIQUE,
    at INTEGER NOT NULL,
    trigger TEXT NOT NULL CHECK (trigger IN ('schedule', 'console', 'push')),
    outcome TEXT NOT NULL CHECK (outcome IN ('ok', 'failed')),
    role TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    raw TEXT,
    counters TEXT,
    g85 TEXT,
    warnings INTEGER NOT NULL DEFAULT 0,
    error TEXT
  ) STRICT;
  CREATE INDEX dex_reads_at ON dex_reads (at);
  CREATE TABLE outbox_rebuilt (
    seq INTEGER PRIMARY KEY,
    at INTEGER NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('session', 'fault', 'service', 'version', 'dropped', 'dex')),
    data TEXT NOT NULL,
    delivered INTEGER NOT NULL DEFAULT 0 CHECK (delivered IN (0, 1))
  ) STRICT;
  INSERT INTO outbox_rebuilt (seq, at, kind, data, delivered) SELECT seq, at, kind, data, delivered FROM outbox;
  DROP TABLE outbox;
  ALTER TABLE outbox_rebuilt RENAME TO outbox;
  CREATE INDEX outbox_pending ON outbox (seq) WHERE delivered = 0;
  `,
];
