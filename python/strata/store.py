"""The results database: one SQLite file per campaign output folder (RESULTS.sqlite).

The schema is documented in docs/harness.md; SCHEMA below is its source. Only the runner writes
(from rank 0's JSON record: `strata run --json` is written by rank 0 alone); readers open the file
read-only. A run is stored in one transaction with its environment and metrics, so an interrupted
campaign never leaves half a run behind, and UNIQUE(campaign_id, configuration_id, repetition)
makes a duplicate impossible.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 3
# Versions this harness opens: read-only as they are, and migrated to SCHEMA_VERSION when opened for
# writing (version 2 kept each campaign-wide switch in its own column; see _migrate_2).
READABLE_VERSIONS = (2, 3)
# The campaign-wide switches of version 2, each an INTEGER column of campaigns, and their labels.
_V2_SWITCHES = {"fsync": ("fsync included", "fsync not included")}

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS campaigns (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    file        TEXT NOT NULL,      -- the campaign file's path when it was started
    toml        TEXT NOT NULL,      -- its full text
    plan_hash   TEXT NOT NULL,      -- identifies the expanded, shuffled run list
    seed        INTEGER NOT NULL,   -- the shuffle seed
    baseline    TEXT NOT NULL,      -- variant label the ratios are computed against
    launcher    TEXT NOT NULL,      -- local or slurm
    strata      TEXT NOT NULL,      -- path of the strata binary
    total_runs  INTEGER NOT NULL,
    repetitions INTEGER NOT NULL,   -- launches per configuration
    repetitions_per_launch INTEGER NOT NULL,
    wait_s      REAL NOT NULL,
    operations  TEXT NOT NULL,      -- JSON array: write, read
    verify      INTEGER NOT NULL,   -- 1: every run compared every element on read-back
    switches    TEXT NOT NULL,      -- JSON object: campaign-wide switch (a strata run flag) -> {"on", "label"}
    created     TEXT NOT NULL       -- ISO 8601, UTC
);
CREATE TABLE IF NOT EXISTS configurations (
    id            INTEGER PRIMARY KEY,
    campaign_id   INTEGER NOT NULL REFERENCES campaigns(id),
    key           TEXT NOT NULL,    -- hash of everything below
    cell          TEXT NOT NULL,    -- kernel, parameters and ranks: what variants are compared on
    label         TEXT NOT NULL,    -- the variant's label
    kernel        TEXT NOT NULL,
    backend       TEXT NOT NULL,
    ranks         INTEGER NOT NULL,
    params        TEXT NOT NULL,    -- JSON object, option -> value as given to strata run
    hints         TEXT NOT NULL,    -- JSON object, hints requested
    mca           TEXT NOT NULL,    -- JSON object, Open MPI MCA parameters
    args          TEXT NOT NULL,    -- JSON array, extra strata run options
    env           TEXT NOT NULL,    -- JSON object, extra environment variables
    launcher_args TEXT NOT NULL,    -- JSON array, extra mpirun/srun options
    UNIQUE (campaign_id, key)
);
CREATE TABLE IF NOT EXISTS sessions (
    id           INTEGER PRIMARY KEY,
    campaign_id  INTEGER NOT NULL REFERENCES campaigns(id),
    started      TEXT NOT NULL,
    ended        TEXT,
    runs_done    INTEGER NOT NULL DEFAULT 0,   -- runs stored by this session (ok or failed)
    runs_failed  INTEGER NOT NULL DEFAULT 0,
    interrupted  INTEGER NOT NULL DEFAULT 0,
    host         TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    id               INTEGER PRIMARY KEY,
    campaign_id      INTEGER NOT NULL REFERENCES campaigns(id),
    configuration_id INTEGER NOT NULL REFERENCES configurations(id),
    session_id       INTEGER REFERENCES sessions(id),
    repetition       INTEGER NOT NULL,   -- which launch of the configuration, from 0
    order_index      INTEGER NOT NULL,   -- place in the shuffled order, from 1
    status           TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
    exit_code        INTEGER NOT NULL,   -- strata's: 0 ok, 1 I/O, 2 bad input, 3 verification; 124 timeout
    message          TEXT,               -- for a failure: the `strata: error:` line or the last stderr line
    stderr_tail      TEXT,               -- the last lines of stderr
    command          TEXT NOT NULL,      -- the launch command, shell-quoted
    run_dir          TEXT NOT NULL,      -- folder with stdout.txt, stderr.txt, record.json
    started          TEXT NOT NULL,
    wall_s           REAL NOT NULL,      -- launch to exit, including mpirun's start-up
    verified         INTEGER,            -- 1 when every element of every repetition matched
    record           TEXT,               -- the full JSON record
    UNIQUE (campaign_id, configuration_id, repetition)
);
CREATE TABLE IF NOT EXISTS environment (
    run_id          INTEGER PRIMARY KEY REFERENCES runs(id),
    host            TEXT,
    nodes           INTEGER,
    mpi_library     TEXT,
    mpi_version     TEXT,
    mpi_full        TEXT,
    io_component    TEXT,       -- ompio or romio
    fs_type         TEXT,
    fs_block_size   INTEGER,
    hints           TEXT,       -- JSON object: hints in effect as reported by the MPI library
    git_rev         TEXT,       -- Strata's git revision
    strata_version  TEXT,
    timestamp       TEXT
);
CREATE TABLE IF NOT EXISTS metrics (
    run_id           INTEGER NOT NULL REFERENCES runs(id),
    repetition       INTEGER NOT NULL,   -- strata's in-launch repetition, from 0
    phase            TEXT NOT NULL CHECK (phase IN ('write', 'read')),
    bytes            INTEGER NOT NULL,
    time_s           REAL NOT NULL,      -- open + transfer + close, max over ranks
    bandwidth_mib_s  REAL NOT NULL,
    open_s           REAL,
    xfer_s           REAL,
    close_s          REAL,
    requests         INTEGER,
    PRIMARY KEY (run_id, repetition, phase)
);
CREATE TABLE IF NOT EXISTS rank_times (
    run_id      INTEGER NOT NULL REFERENCES runs(id),
    repetition  INTEGER NOT NULL,
    phase       TEXT NOT NULL,
    rank        INTEGER NOT NULL,
    time_s      REAL NOT NULL,
    PRIMARY KEY (run_id, repetition, phase, rank)
);
CREATE VIEW IF NOT EXISTS samples AS
    SELECT c.campaign_id, c.cell, c.label, c.kernel, c.backend, c.ranks, c.params, r.id AS run_id,
           r.repetition AS launch, m.repetition, m.phase, m.bytes, m.time_s, m.bandwidth_mib_s,
           m.open_s, m.xfer_s, m.close_s, m.requests
    FROM metrics m JOIN runs r ON r.id = m.run_id JOIN configurations c ON c.id = r.configuration_id
    WHERE r.status = 'ok';
"""


class SchemaError(RuntimeError):
    """A database this version of the harness cannot read."""


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass
class RunResult:
    """What one launch produced, ready to be stored."""

    status: str
    exit_code: int
    message: str | None
    stderr_tail: str | None
    command: str
    run_dir: str
    started: str
    wall_s: float
    record: dict[str, Any] | None


def campaign_switches(row: sqlite3.Row) -> dict[str, dict[str, Any]]:
    """A campaign row's campaign-wide switches: name -> {"on": bool, "label": str}, in the
    catalogue's order (a version-2 row's from its switch columns)."""
    if "switches" in row.keys():
        return dict(json.loads(row["switches"]))
    return {name: _v2_switch(name, row[name]) for name in _V2_SWITCHES}


def _v2_switch(name: str, value: int) -> dict[str, Any]:
    on = bool(value)
    return {"on": on, "label": _V2_SWITCHES[name][0 if on else 1]}


def _migrate_2(db: sqlite3.Connection) -> None:
    """Version 2 to 3, in one transaction: the switch columns of campaigns become its JSON column
    `switches`, the same text as a version-3 campaign would store."""
    db.execute("BEGIN")
    try:
        db.execute("ALTER TABLE campaigns ADD COLUMN switches TEXT NOT NULL DEFAULT '{}'")
        rows = db.execute(f"SELECT id, {', '.join(_V2_SWITCHES)} FROM campaigns").fetchall()
        for row in rows:
            switches = {name: _v2_switch(name, row[i + 1]) for i, name in enumerate(_V2_SWITCHES)}
            db.execute("UPDATE campaigns SET switches = ? WHERE id = ?", (json.dumps(switches), row[0]))
        for name in _V2_SWITCHES:
            db.execute(f"ALTER TABLE campaigns DROP COLUMN {name}")
        db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))
        db.commit()
    except BaseException:
        db.rollback()
        raise


def schema_version(path: Path) -> int | None:
    """The schema version of an existing database file; None when it has none or is not one."""
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            row = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        finally:
            con.close()
    except sqlite3.DatabaseError:
        return None
    return int(row[0]) if row else None


class Store:
    def __init__(self, path: Path | str, readonly: bool = False) -> None:
        self.path = Path(path)
        if readonly:
            if not self.path.exists():
                raise FileNotFoundError(f"{self.path}: no such results database")
            self.db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.path)
            self.db.executescript(SCHEMA)
            self.db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            self.db.commit()
            if schema_version(self.path) == 2:
                _migrate_2(self.db)
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA foreign_keys = ON")
        try:
            row = self.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        except sqlite3.DatabaseError as e:
            raise SchemaError(f"{self.path}: not a strata-bench results database ({e})") from e
        if row is None or int(row[0]) not in (READABLE_VERSIONS if readonly else (SCHEMA_VERSION,)):
            found = row[0] if row else "none"
            raise SchemaError(
                f"{self.path}: results schema version {found}, this strata-bench reads version "
                f"{' or '.join(map(str, READABLE_VERSIONS))}; run the campaign again into a new folder"
            )

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with self.db:
            yield self.db

    # -- campaigns ---------------------------------------------------------------------------------

    def campaign(self, name: str | None = None) -> sqlite3.Row | None:
        if name is None:
            return self.db.execute("SELECT * FROM campaigns ORDER BY id DESC LIMIT 1").fetchone()
        return self.db.execute("SELECT * FROM campaigns WHERE name = ?", (name,)).fetchone()

    def campaigns(self) -> list[sqlite3.Row]:
        return self.db.execute("SELECT * FROM campaigns ORDER BY id").fetchall()

    def delete_campaign(self, campaign_id: int) -> None:
        with self.transaction() as db:
            runs = "SELECT id FROM runs WHERE campaign_id = ?"
            for table in ("metrics", "rank_times", "environment"):
                db.execute(f"DELETE FROM {table} WHERE run_id IN ({runs})", (campaign_id,))
            for table in ("runs", "sessions", "configurations"):
                db.execute(f"DELETE FROM {table} WHERE campaign_id = ?", (campaign_id,))
            db.execute("DELETE FROM campaigns WHERE id = ?", (campaign_id,))

    def create_campaign(self, campaign: Any) -> int:
        """Stores a campaign (a strata.campaign.Campaign) and its configurations; returns its id."""
        with self.transaction() as db:
            cur = db.execute(
                "INSERT INTO campaigns (name, file, toml, plan_hash, seed, baseline, launcher, strata, total_runs,"
                " repetitions, repetitions_per_launch, wait_s, operations, verify, switches, created)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    campaign.name,
                    str(campaign.file),
                    campaign.text,
                    campaign.plan_hash,
                    campaign.seed,
                    campaign.baseline,
                    campaign.launcher.kind,
                    str(campaign.strata),
                    len(campaign.runs),
                    campaign.repetitions,
                    campaign.repetitions_per_launch,
                    campaign.wait_s,
                    json.dumps(list(campaign.operations)),
                    int(campaign.verify),
                    json.dumps({s.name: {"on": s.on, "label": s.label} for s in campaign.switches}),
                    now(),
                ),
            )
            cid = int(cur.lastrowid or 0)
            for c in campaign.configurations:
                d = c.as_dict()
                db.execute(
                    "INSERT INTO configurations (campaign_id, key, cell, label, kernel, backend, ranks, params, hints,"
                    " mca, args, env, launcher_args) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        cid,
                        c.key,
                        c.cell,
                        c.label,
                        c.kernel,
                        c.variant.backend,
                        c.ranks,
                        json.dumps(d["params"]),
                        json.dumps(d["hints"]),
                        json.dumps(d["mca"]),
                        json.dumps(d["args"]),
                        json.dumps(d["env"]),
                        json.dumps(d["launcher_args"]),
                    ),
                )
        return cid

    def configuration_ids(self, campaign_id: int) -> dict[str, int]:
        rows = self.db.execute("SELECT key, id FROM configurations WHERE campaign_id = ?", (campaign_id,))
        return {row["key"]: row["id"] for row in rows}

    def finished(self, campaign_id: int) -> set[tuple[str, int]]:
        """(configuration key, repetition) of every stored run, ok or failed."""
        rows = self.db.execute(
            "SELECT c.key, r.repetition FROM runs r JOIN configurations c ON c.id = r.configuration_id"
            " WHERE r.campaign_id = ?",
            (campaign_id,),
        )
        return {(row[0], row[1]) for row in rows}

    # -- sessions ----------------------------------------------------------------------------------

    def start_session(self, campaign_id: int, host: str) -> int:
        with self.transaction() as db:
            cur = db.execute(
                "INSERT INTO sessions (campaign_id, started, host) VALUES (?, ?, ?)", (campaign_id, now(), host)
            )
        return int(cur.lastrowid or 0)

    def end_session(self, session_id: int, interrupted: bool) -> None:
        with self.transaction() as db:
            db.execute(
                "UPDATE sessions SET ended = ?, interrupted = ? WHERE id = ?", (now(), int(interrupted), session_id)
            )

    # -- runs --------------------------------------------------------------------------------------

    def add_run(
        self,
        campaign_id: int,
        configuration_id: int,
        session_id: int | None,
        repetition: int,
        order_index: int,
        result: RunResult,
    ) -> int:
        rec = result.record or {}
        with self.transaction() as db:
            cur = db.execute(
                "INSERT INTO runs (campaign_id, configuration_id, session_id, repetition, order_index, status,"
                " exit_code, message, stderr_tail, command, run_dir, started, wall_s, verified, record)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    campaign_id,
                    configuration_id,
                    session_id,
                    repetition,
                    order_index,
                    result.status,
                    result.exit_code,
                    result.message,
                    result.stderr_tail,
                    result.command,
                    result.run_dir,
                    result.started,
                    result.wall_s,
                    int(bool(rec.get("verified"))) if rec else None,
                    json.dumps(rec) if rec else None,
                ),
            )
            run_id = int(cur.lastrowid or 0)
            if session_id is not None:
                db.execute(
                    "UPDATE sessions SET runs_done = runs_done + 1, runs_failed = runs_failed + ? WHERE id = ?",
                    (int(result.status != "ok"), session_id),
                )
            if rec:
                mpi = rec.get("mpi", {})
                db.execute(
                    "INSERT INTO environment (run_id, host, nodes, mpi_library, mpi_version, mpi_full, io_component,"
                    " fs_type, fs_block_size, hints, git_rev, strata_version, timestamp)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        run_id,
                        rec.get("host"),
                        rec.get("nodes"),
                        mpi.get("library"),
                        mpi.get("version"),
                        mpi.get("full"),
                        rec.get("io_component"),
                        rec.get("fs_type"),
                        rec.get("fs_block_size"),
                        json.dumps(rec.get("hints", {}), sort_keys=True),
                        rec.get("git_rev"),
                        rec.get("strata_version"),
                        rec.get("timestamp"),
                    ),
                )
                for i, rep in enumerate(rec.get("repetitions", [])):
                    for phase in ("write", "read"):
                        m = rep.get(phase)
                        if not m:
                            continue
                        db.execute(
                            "INSERT INTO metrics VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            (
                                run_id,
                                i,
                                phase,
                                m.get("bytes", 0),
                                m.get("time_s", 0.0),
                                m.get("bandwidth_mib_s", 0.0),
                                m.get("open_s"),
                                m.get("xfer_s"),
                                m.get("close_s"),
                                m.get("requests"),
                            ),
                        )
                        # Per-rank times, when the record carries them (`rank_time_s`: one per rank).
                        for rank, t in enumerate(m.get("rank_time_s", []) or []):
                            db.execute("INSERT INTO rank_times VALUES (?, ?, ?, ?, ?)", (run_id, i, phase, rank, t))
        return run_id

    def runs(self, campaign_id: int) -> list[sqlite3.Row]:
        return self.db.execute(
            "SELECT r.*, c.cell, c.label, c.kernel, c.backend, c.ranks, c.params, c.hints FROM runs r"
            " JOIN configurations c ON c.id = r.configuration_id WHERE r.campaign_id = ? ORDER BY r.order_index",
            (campaign_id,),
        ).fetchall()

    def samples(self, campaign_id: int) -> list[sqlite3.Row]:
        return self.db.execute(
            "SELECT * FROM samples WHERE campaign_id = ? ORDER BY cell, label, run_id, repetition", (campaign_id,)
        ).fetchall()

    def rank_times(self, campaign_id: int) -> list[sqlite3.Row]:
        return self.db.execute(
            "SELECT c.cell, c.label, t.* FROM rank_times t JOIN runs r ON r.id = t.run_id"
            " JOIN configurations c ON c.id = r.configuration_id WHERE r.campaign_id = ? AND r.status = 'ok'",
            (campaign_id,),
        ).fetchall()

    def environments(self, campaign_id: int) -> list[sqlite3.Row]:
        """Distinct environments the campaign ran in, with how many runs each."""
        return self.db.execute(
            "SELECT e.host, e.nodes, e.mpi_library, e.mpi_version, e.io_component, e.fs_type, e.fs_block_size,"
            " e.git_rev, e.strata_version, c.label, e.hints, COUNT(*) AS runs FROM environment e"
            " JOIN runs r ON r.id = e.run_id JOIN configurations c ON c.id = r.configuration_id"
            " WHERE r.campaign_id = ? GROUP BY e.host, e.nodes, e.mpi_library, e.mpi_version, e.io_component,"
            " e.fs_type, e.fs_block_size, e.git_rev, e.strata_version, c.label, e.hints"
            " ORDER BY c.label",
            (campaign_id,),
        ).fetchall()

    def sessions(self, campaign_id: int) -> list[sqlite3.Row]:
        return self.db.execute("SELECT * FROM sessions WHERE campaign_id = ? ORDER BY id", (campaign_id,)).fetchall()
