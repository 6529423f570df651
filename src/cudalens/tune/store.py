"""Tuning sessions in the history database: what was pruned, measured, failed - resumable.

Two tables beside the history's ``runs`` and ``samples`` (created on first use; the history's schema
version is unchanged, its tables untouched)::

    tune_sessions(id, key UNIQUE, created_utc, spec_json)
    tune_results(session_id, config_key, status, reason, run_id -> runs.id, median_s, ci_low_s,
                 ci_high_s, predicted_cost, worker, created_utc, PRIMARY KEY(session_id, config_key))

``status``: ``pruned`` (reason), ``measured`` (run_id: the full BenchResult with every sample is a
history run), ``wrong`` (measured, but its output differs from the reference; run_id too),
``failed`` (the launch or measurement failed; reason).

A session's key is a hash of everything that decides its results (source text, kernel, space,
restrictions, launch, arguments, compute capability, flags, strategy and its seed, timing policy,
device), so running the same command again resumes it. Each result is written in one transaction
together with its history run, and a configuration that already has a row is never written again:
a killed run loses at most the measurement in flight, and none is stored twice.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from cudalens.measure import history
from cudalens.measure.result import BenchResult

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tune_sessions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL UNIQUE,
    created_utc TEXT NOT NULL,
    spec_json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS tune_results (
    session_id INTEGER NOT NULL REFERENCES tune_sessions(id),
    config_key TEXT NOT NULL,
    status TEXT NOT NULL,
    reason TEXT,
    run_id INTEGER REFERENCES runs(id),
    median_s REAL,
    ci_low_s REAL,
    ci_high_s REAL,
    predicted_cost REAL,
    worker TEXT,
    seq INTEGER NOT NULL,
    created_utc TEXT NOT NULL,
    PRIMARY KEY (session_id, config_key)
);
"""


@dataclass(frozen=True)
class ResultRow:
    config_key: str
    status: str
    reason: str | None
    run_id: int | None
    median_s: float | None
    ci_low_s: float | None
    ci_high_s: float | None
    predicted_cost: float | None
    worker: str | None
    seq: int


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def session_key(spec: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:32]


def connect(path: str | None) -> sqlite3.Connection:
    conn = history.connect(path)
    conn.execute("BEGIN IMMEDIATE")
    try:
        for stmt in _SCHEMA.strip().split(";"):
            if stmt.strip():
                conn.execute(stmt)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        conn.close()
        raise
    return conn


def open_session(path: str | None, spec: dict[str, Any]) -> tuple[int, bool]:
    """(session id, resumed?) for ``spec``: the stored session with the same key, or a new one."""
    key = session_key(spec)
    with closing(connect(path)) as conn:
        row = conn.execute("SELECT id FROM tune_sessions WHERE key = ?", (key,)).fetchone()
        if row:
            return int(row[0]), True
        conn.execute("BEGIN IMMEDIATE")
        try:
            row = conn.execute("SELECT id FROM tune_sessions WHERE key = ?", (key,)).fetchone()
            if row is None:
                cur = conn.execute("INSERT INTO tune_sessions (key, created_utc, spec_json) VALUES (?,?,?)",
                                   (key, _now(), json.dumps(spec, sort_keys=True)))
                sid, resumed = int(cur.lastrowid), False
            else:
                sid, resumed = int(row[0]), True
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return sid, resumed


def results(path: str | None, session_id: int) -> dict[str, ResultRow]:
    """Every stored result of the session, by config key (in the order they were stored)."""
    with closing(connect(path)) as conn:
        rows = conn.execute(
            "SELECT config_key, status, reason, run_id, median_s, ci_low_s, ci_high_s, predicted_cost, worker, seq "
            "FROM tune_results WHERE session_id = ? ORDER BY seq", (session_id,)).fetchall()
    return {r[0]: ResultRow(*r) for r in rows}


def _insert(conn: sqlite3.Connection, session_id: int, key: str, status: str, reason: str | None,
            run_id: int | None, result: BenchResult | None, predicted: float | None, worker: str | None) -> None:
    seq = conn.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM tune_results WHERE session_id = ?",
                       (session_id,)).fetchone()[0]
    s = result.summary if result is not None else None
    conn.execute(
        "INSERT INTO tune_results (session_id, config_key, status, reason, run_id, median_s, ci_low_s, ci_high_s, "
        "predicted_cost, worker, seq, created_utc) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
        (session_id, key, status, reason, run_id, s.median if s else None, s.ci_low if s else None,
         s.ci_high if s else None, predicted, worker, seq, _now()))


def record(path: str | None, session_id: int, key: str, status: str, *, reason: str | None = None,
           result: BenchResult | None = None, predicted: float | None = None, worker: str | None = None) -> bool:
    """Store one configuration's outcome (and its history run) in one transaction. Returns False,
    writing nothing, when the configuration already has a result in this session."""
    with closing(connect(path)) as conn:
        conn.execute("BEGIN IMMEDIATE")
        try:
            if conn.execute("SELECT 1 FROM tune_results WHERE session_id = ? AND config_key = ?",
                            (session_id, key)).fetchone():
                conn.execute("ROLLBACK")
                return False
            run_id = history.insert_run(conn, result) if result is not None else None
            _insert(conn, session_id, key, status, reason, run_id, result, predicted, worker)
            conn.execute("COMMIT")
            return True
        except BaseException:
            conn.execute("ROLLBACK")
            raise


def record_many_pruned(path: str | None, session_id: int, items: list[tuple[str, str]]) -> int:
    """Store pruning decisions (key, reason) not stored yet, in one transaction; returns how many."""
    n = 0
    with closing(connect(path)) as conn:
        conn.execute("BEGIN IMMEDIATE")
        try:
            have = {r[0] for r in conn.execute("SELECT config_key FROM tune_results WHERE session_id = ?", (session_id,))}
            for key, reason in items:
                if key not in have:
                    _insert(conn, session_id, key, "pruned", reason, None, None, None, None)
                    n += 1
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return n


def kept_samples(path: str | None, run_ids: list[int]) -> dict[int, list[float]]:
    """Seconds of the kept (not throttled) samples of each run."""
    out: dict[int, list[float]] = {}
    with closing(connect(path)) as conn:
        for rid in run_ids:
            out[rid] = [float(s) for (s,) in conn.execute(
                "SELECT seconds FROM samples WHERE run_id = ? AND throttled = 0 ORDER BY idx", (rid,))]
    return out


def sessions(path: str | None) -> Iterator[tuple[int, str, dict[str, Any]]]:
    with closing(connect(path)) as conn:
        for sid, created, spec in conn.execute("SELECT id, created_utc, spec_json FROM tune_sessions ORDER BY id"):
            yield int(sid), created, json.loads(spec)
