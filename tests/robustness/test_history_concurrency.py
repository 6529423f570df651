"""Four processes write to one history database at the same time: every run lands, none is torn,
ids are unique, and SQLite's integrity check passes. Reads never create a database."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from cudalens.errors import InputError
from cudalens.measure import history

_WRITER = textwrap.dedent("""
    import sys
    sys.path.insert(0, {tests!r})
    from cudalens.measure import history
    from measure._factory import fake_result
    for i in range({runs}):
        history.save(fake_result(1e-4 * (i + 1), n=40, seed=i, kernel="w{w}"), {db!r})
    print("done", flush=True)
""")

WRITERS, RUNS = 4, 15


def test_four_concurrent_writers(tmp_path):
    db = str(tmp_path / "h.db")
    history.connect(db).close()  # created once; the writers race on inserts, not on the schema
    tests_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER.format(tests=tests_dir, db=db, runs=RUNS, w=w)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for w in range(WRITERS)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0] * WRITERS, [o[1][-1000:] for o in outs]
    assert history.integrity_check(db) == "ok"
    rows = history.list_runs(db)
    assert len(rows) == WRITERS * RUNS and len({r.id for r in rows}) == WRITERS * RUNS
    for w in range(WRITERS):
        mine = history.list_runs(db, kernel=f"w{w}")
        assert len(mine) == RUNS
        assert all(len(history.load_samples(r.id, db)) == 40 for r in mine)


def test_reads_never_create_the_database(tmp_path):
    missing = tmp_path / "no" / "such" / "h.db"
    for read in (lambda: history.list_runs(str(missing)), lambda: history.load_run(1, str(missing)),
                 lambda: history.integrity_check(str(missing))):
        with pytest.raises(InputError, match="no history database"):
            read()
    assert not (tmp_path / "no").exists()
    with pytest.raises(InputError, match="at least 1"):
        history.list_runs(str(missing), limit=-1)
