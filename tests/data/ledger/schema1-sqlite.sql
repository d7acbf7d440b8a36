-- the logbook's tables as gpuvet's release before the module ledger wrote them (issue 44's migration test)
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, kind TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('running', 'complete', 'aborted')),
    verdict TEXT, started_utc TEXT NOT NULL, ended_utc TEXT, host TEXT NOT NULL, pid INTEGER NOT NULL,
    pid_started REAL NOT NULL, simulated INTEGER NOT NULL, node TEXT, envelope TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS checks (
    run_id TEXT NOT NULL REFERENCES runs(run_id), seq INTEGER NOT NULL, layer TEXT NOT NULL, name TEXT NOT NULL,
    verdict TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (run_id, seq)
);
CREATE TABLE IF NOT EXISTS events (
    run_id TEXT NOT NULL REFERENCES runs(run_id), time_utc TEXT NOT NULL, kind TEXT NOT NULL, message TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_started ON runs(started_utc);
CREATE TABLE IF NOT EXISTS modules (
    mkey INTEGER PRIMARY KEY, uuid TEXT UNIQUE NOT NULL, module TEXT NOT NULL, bus_id TEXT, model TEXT,
    first_seen_utc TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS samples (
    run_key INTEGER NOT NULL, mkey INTEGER NOT NULL, t REAL NOT NULL,
    temp REAL, power REAL, sm REAL, mem REAL, util REAL, throttle INTEGER,
    PRIMARY KEY (run_key, mkey, t)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS samples_1m (
    run_key INTEGER NOT NULL, mkey INTEGER NOT NULL, minute INTEGER NOT NULL, n INTEGER NOT NULL,
    temp_mean REAL, temp_max REAL, power_mean REAL, power_max REAL,
    sm_min REAL, sm_max REAL, mem_min REAL, mem_max REAL, util_mean REAL, throttle INTEGER,
    PRIMARY KEY (run_key, mkey, minute)
) WITHOUT ROWID;
-- what that release's open added in place to every SQLite logbook
ALTER TABLE events ADD COLUMN module TEXT;
ALTER TABLE events ADD COLUMN uuid TEXT;
ALTER TABLE events ADD COLUMN sim_time REAL;
ALTER TABLE events ADD COLUMN severity TEXT;
ALTER TABLE events ADD COLUMN data TEXT;
CREATE INDEX IF NOT EXISTS events_run ON events(run_id);
