import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from cudalens.cli import main
from cudalens.errors import InputError
from cudalens.measure import history

from ._factory import fake_result


def test_save_list_load_roundtrip(tmp_path):
    db = str(tmp_path / "h.db")
    r = fake_result(100e-6, throttled=3, kernel="copy")
    rid = history.save(r, db)
    rid2 = history.save(fake_result(50e-6, kernel="scale"), db)
    assert rid2 > rid
    rows = history.list_runs(db)
    assert [x.id for x in rows] == [rid2, rid]
    assert [x.kernel for x in history.list_runs(db, kernel="copy")] == ["copy"]
    back = history.load_run(rid, db)
    assert back.kept_seconds == r.kept_seconds and back.throttled_count == 3
    assert back.summary == r.summary
    samples = history.load_samples(rid, db)
    assert len(samples) == len(r.samples) and sum(t for _, t in samples) == 3
    assert history.integrity_check(db) == "ok"
    with sqlite3.connect(db) as c:
        assert c.execute("PRAGMA user_version").fetchone()[0] == history.SCHEMA_VERSION
        assert c.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_unknown_run_and_foreign_file(tmp_path):
    db = str(tmp_path / "h.db")
    with pytest.raises(InputError, match="no history database"):  # a read never creates the file
        history.load_run(7, db)
    assert not os.path.exists(db)
    history.connect(db).close()
    with pytest.raises(InputError, match="no run with id 7"):
        history.load_run(7, db)
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(InputError, match="not a usable"):
        history.list_runs(str(junk))


_WRITER = textwrap.dedent("""
    import sys, time
    from cudalens.measure import history
    sys.path.insert(0, {tests!r})
    from measure._factory import fake_result
    conn = history.connect({db!r})
    conn.execute("BEGIN IMMEDIATE")
    history.insert_run(conn, fake_result(1e-3, n=2000, kernel="half-written"))
    print("ready", flush=True)
    time.sleep(60)
""")


def test_writer_killed_mid_transaction_leaves_db_intact(tmp_path):
    db = str(tmp_path / "h.db")
    earlier = [history.save(fake_result(1e-4 * (i + 1), seed=i, kernel=f"k{i}"), db) for i in range(3)]
    tests_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    proc = subprocess.Popen([sys.executable, "-c", _WRITER.format(tests=tests_dir, db=db)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert history.integrity_check(db) == "ok"
    rows = history.list_runs(db)
    assert sorted(r.id for r in rows) == earlier  # the half-written run is absent
    for rid in earlier:
        assert len(history.load_run(rid, db).samples) == 50
    # and the database still takes new runs
    assert history.save(fake_result(2e-4), db) > max(earlier)


def test_cli_history_and_compare(tmp_path, capsys):
    db = str(tmp_path / "h.db")
    a = history.save(fake_result(100e-6, seed=1, kernel="copy"), db)
    b = history.save(fake_result(110e-6, seed=2, kernel="copy"), db)
    c = history.save(fake_result(100e-6, seed=3, kernel="copy"), db)
    assert main(["history", "--db", db, "--format", "json"]) == 0
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert [r["id"] for r in runs] == [c, b, a]
    assert main(["history", "--db", db, "--kernel", "nothing"]) == 0
    capsys.readouterr()

    assert main(["compare", str(a), str(b), "--db", db, "--fail-if-slower", "5%"]) == 1
    out = capsys.readouterr().out
    assert "SLOWER" in out and "FAIL" in out
    assert main(["compare", str(a), str(b), "--db", db, "--fail-if-slower", "20%"]) == 0
    capsys.readouterr()
    assert main(["compare", str(b), str(a), "--db", db, "--fail-if-slower", "5%", "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["verdict"] == "FASTER" and d["ratio"] == pytest.approx(100 / 110, rel=0.01)
    assert main(["compare", str(a), str(c), "--db", db, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "SAME"


def test_cli_compare_errors_are_one_line(tmp_path, capsys):
    db = str(tmp_path / "h.db")
    a = history.save(fake_result(1e-4), db)
    assert main(["compare", str(a), "99", "--db", db]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no run with id 99" in err[0]
    assert main(["compare", str(a), str(a), "--db", db, "--fail-if-slower", "lots"]) == 2
    assert "--fail-if-slower" in capsys.readouterr().err
