"""Run history in SQLite: every benchmark run, with all of its samples, survives the process.

Default location ``~/.cudalens/history.db`` (``--db`` changes it). Layout (schema version 1, kept in
``PRAGMA user_version``)::

    runs(id, created_utc, kernel, mode, device, cc, driver, cuda_version, sm_clock_mhz,
         mem_clock_mhz, code_hash, config_json, stats_json, median_s, ci_low_s, ci_high_s,
         n_samples, n_throttled, result_json)
    samples(run_id, idx, seconds, batch, sm_clock_mhz, throttled)

Writes: the database runs in WAL journal mode and each run (its row and all its samples) is written
in one transaction, so a writer killed at any point leaves either the whole run or none of it, and
never a damaged file. Reads never block on a writer.
"""

from __future__ import annotations

import json
import os
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Iterator

from cudalens.errors import InputError
from cudalens.measure.result import BenchResult

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created_utc TEXT NOT NULL,
    kernel TEXT NOT NULL,
    mode TEXT NOT NULL,
    device TEXT NOT NULL,
    cc TEXT,
    driver TEXT,
    cuda_version TEXT,
    sm_clock_mhz REAL,
    mem_clock_mhz REAL,
    code_hash TEXT,
    config_json TEXT NOT NULL,
    stats_json TEXT NOT NULL,
    median_s REAL NOT NULL,
    ci_low_s REAL NOT NULL,
    ci_high_s REAL NOT NULL,
    n_samples INTEGER NOT NULL,
    n_throttled INTEGER NOT NULL,
    result_json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS samples (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    seconds REAL NOT NULL,
    batch INTEGER NOT NULL,
    sm_clock_mhz REAL,
    throttled INTEGER NOT NULL,
    PRIMARY KEY (run_id, idx)
);
CREATE INDEX IF NOT EXISTS runs_kernel ON runs(kernel);
"""


def default_db_path() -> str:
    return os.path.join(os.path.expanduser("~"), ".cudalens", "history.db")


@dataclass(frozen=True)
class RunRow:
    """One stored run as listed by ``cudalens history``. Times in seconds."""

    id: int
    created_utc: str
    kernel: str
    mode: str
    device: str
    median_s: float
    ci_low_s: float
    ci_high_s: float
    n_samples: int
    n_throttled: int
    code_hash: str

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


#: SQLite's application id of a cudalens history database ("CDLN"): a file without it is not ours
APPLICATION_ID = 0x43444C4E


def _ours(conn: sqlite3.Connection, path: str) -> None:
    """InputError unless the open database is one cudalens created: its application id, or (made
    before the id existed) exactly our tables, which then get the id."""
    app = conn.execute("PRAGMA application_id").fetchone()[0]
    if app == APPLICATION_ID:
        return
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if app == 0 and tables == {"runs", "samples"} and conn.execute("PRAGMA user_version").fetchone()[0] >= 1:
        conn.execute(f"PRAGMA application_id={APPLICATION_ID}")  # an older cudalens history
        return
    raise InputError(f"{path}: a database cudalens did not create; refused (cudalens writes only its own "
                     "history; name another file with --db)")


def connect(path: str | None = None, *, create: bool = True) -> sqlite3.Connection:
    """Open (and create or migrate) the history database; InputError when it is not one of ours.

    ``create=False`` (every read): a database that does not exist is an InputError, and neither
    the file nor its folder is created.
    """
    path = path or default_db_path()
    if not create:
        if not os.path.isfile(path):
            raise InputError(f"{path}: no history database there (nothing has been stored yet)")
    else:
        folder = os.path.dirname(os.path.abspath(path))
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as exc:
            raise InputError(f"{folder}: cannot create the history folder ({exc.strerror})") from None
    existed = os.path.exists(path)
    if existed:
        if not os.path.isfile(path):
            raise InputError(f"{path}: not a regular file; refused as a history database")
        if os.path.getsize(path) == 0:
            raise InputError(f"{path}: an empty file, not a cudalens history database; refused (remove it or "
                             "name another file)")
    try:
        conn = sqlite3.connect(path, timeout=10.0, isolation_level=None)  # explicit transactions only
    except sqlite3.Error as exc:
        raise InputError(f"{path}: cannot open the history database ({exc})") from None
    try:
        if existed:
            _ours(conn, path)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA foreign_keys=ON")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise InputError(f"{path}: history schema version {version} is newer than this cudalens ({SCHEMA_VERSION})")
        if version < SCHEMA_VERSION:
            conn.execute("BEGIN IMMEDIATE")
            for stmt in _SCHEMA.strip().split(";"):
                if stmt.strip():
                    conn.execute(stmt)
            conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
            conn.execute("COMMIT")
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise InputError(f"{path}: not a usable cudalens history database ({exc})") from None
    except BaseException:
        conn.close()
        raise
    return conn


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _row_values(result: BenchResult) -> tuple[Any, ...]:
    clocks = [s.sm_clock_mhz for s in result.samples if s.sm_clock_mhz is not None]
    sm = sorted(clocks)[len(clocks) // 2] if clocks else None
    s = result.summary
    return (_now(), result.kernel, result.mode, result.device.name, result.device.cc,
            result.device.driver_version, result.device.cuda_version, sm, result.device.mem_clock_mhz,
            result.code_hash, json.dumps(result.config), json.dumps(s.to_dict()), s.median, s.ci_low,
            s.ci_high, len(result.samples), result.throttled_count, json.dumps(result.to_dict()))


_INSERT_RUN = """INSERT INTO runs (created_utc, kernel, mode, device, cc, driver, cuda_version, sm_clock_mhz,
    mem_clock_mhz, code_hash, config_json, stats_json, median_s, ci_low_s, ci_high_s, n_samples,
    n_throttled, result_json) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"""


def insert_run(conn: sqlite3.Connection, result: BenchResult) -> int:
    """Insert one run and its samples (the caller owns the transaction). Returns the run id."""
    cur = conn.execute(_INSERT_RUN, _row_values(result))
    run_id = int(cur.lastrowid)
    conn.executemany(
        "INSERT INTO samples (run_id, idx, seconds, batch, sm_clock_mhz, throttled) VALUES (?,?,?,?,?,?)",
        [(run_id, i, s.seconds, s.batch, s.sm_clock_mhz, int(s.throttled)) for i, s in enumerate(result.samples)],
    )
    return run_id


def save(result: BenchResult, path: str | None = None) -> int:
    """Store ``result`` in one transaction; returns its run id."""
    with closing(connect(path)) as conn:
        conn.execute("BEGIN IMMEDIATE")
        try:
            run_id = insert_run(conn, result)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return run_id


def _rows(conn: sqlite3.Connection, sql: str, params: tuple[Any, ...]) -> Iterator[RunRow]:
    for r in conn.execute(sql, params):
        yield RunRow(*r)


_LIST = ("SELECT id, created_utc, kernel, mode, device, median_s, ci_low_s, ci_high_s, n_samples, n_throttled, "
         "COALESCE(code_hash, '') FROM runs")


def list_runs(path: str | None = None, *, kernel: str | None = None, limit: int | None = None) -> list[RunRow]:
    """Stored runs, newest first; ``kernel`` filters by exact kernel name."""
    sql, params = _LIST, ()
    if kernel:
        sql += " WHERE kernel = ?"
        params = (kernel,)
    sql += " ORDER BY id DESC"
    if limit is not None and int(limit) < 1:
        raise InputError(f"limit {limit}: must be at least 1")
    if limit:
        sql += f" LIMIT {int(limit)}"
    if path is None and not os.path.isfile(default_db_path()):
        return []  # nothing stored yet under the default path: an empty history, nothing created
    with closing(connect(path, create=False)) as conn:
        return list(_rows(conn, sql, params))


def load_run(run_id: int, path: str | None = None) -> BenchResult:
    """The full stored result of run ``run_id``; InputError when there is no such run."""
    with closing(connect(path, create=False)) as conn:
        row = conn.execute("SELECT result_json FROM runs WHERE id = ?", (int(run_id),)).fetchone()
    if row is None:
        raise InputError(f"no run with id {run_id} in {path or default_db_path()}")
    return BenchResult.from_dict(json.loads(row[0]))


def load_samples(run_id: int, path: str | None = None) -> list[tuple[float, bool]]:
    """(seconds, throttled) of every sample of run ``run_id``, in order."""
    with closing(connect(path, create=False)) as conn:
        return [(float(s), bool(t)) for s, t in conn.execute(
            "SELECT seconds, throttled FROM samples WHERE run_id = ? ORDER BY idx", (int(run_id),))]


def integrity_check(path: str | None = None) -> str:
    """SQLite's own verdict on the file: 'ok' when it is intact."""
    with closing(connect(path, create=False)) as conn:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])
