"""Issue #25 items 3 and 4: outputs never clobber inputs; every parser total, one line each, exit 2;
no exception class names or private paths in messages; terminal escapes neutralised."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3

import pytest

from cudalens.cli import main

GOOD = "__global__ void g(float *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i * 2] = 1; }\n"
DEEP_JSON = "[" * 100_000 + "]" * 100_000
PY_NAMES = ("Error:", "Traceback", "RecursionError", "UnicodeDecodeError", "ValueError", "InputError",
            "CompileError", "MemoryError")


def _one_line(capsys, args, code=2):
    got = main(args)
    err = capsys.readouterr().err.strip()
    assert got == code, err
    assert len(err.splitlines()) == 1, err
    assert not any(n in err for n in PY_NAMES), err
    return err


@pytest.fixture
def src(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.cu").write_text(GOOD)
    return tmp_path


@pytest.mark.parametrize("args", [["analyze", "--no-compile", "k.cu", "-o", "k.cu"],
                                  ["analyze", "--no-compile", "k.cu", "--write-baseline", "k.cu"],
                                  ["check", "--no-compile", ".", "-o", "k.cu"],
                                  ["check", "--no-compile", ".", "-o", "out.cu"],
                                  ["check", "--no-compile", ".", "-o", "other.h"]])
def test_an_output_never_replaces_a_source(src, capsys, args):
    _one_line(capsys, args)
    assert (src / "k.cu").read_text() == GOOD and not (src / "out.cu").exists() and not (src / "other.h").exists()


def test_reports_are_written_whole(src, capsys):
    assert main(["check", "--no-compile", ".", "--format", "json", "-o", "r.json"]) == 0
    assert json.loads((src / "r.json").read_text())["files"]
    assert not [p for p in os.listdir(src) if p.endswith(".part")]


def test_a_define_that_continues_the_line_is_refused(src, capsys):
    _one_line(capsys, ["analyze", "k.cu", "-D", "X=1 \\"])


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_a_compile_of_none_of_the_kernels_is_a_compile_error(src, capsys):
    (src / "ifdef.cu").write_text("#ifdef NEVER\n" + GOOD + "#endif\n")
    main(["analyze", "ifdef.cu", "--format", "json", "-o", "r.json"])
    f = json.loads((src / "r.json").read_text())["files"][0]
    assert f["compiled"] is False and "none of the file's kernels" in f["compile_error"]


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_a_compile_error_keeps_nvccs_message_and_names_the_users_file(src, capsys):
    main(["analyze", "k.cu", "--format", "json", "-o", "r.json", "--nvcc-flag=-include", "--nvcc-flag=/nonexistent.h"])
    f = json.loads((src / "r.json").read_text())["files"][0]
    err = f["compile_error"]
    assert "nonexistent.h" in err and "k.cu" in err and "tu.cu" not in err and "cudalens-" not in err
    assert not any("CompileError" in n for n in f["notes"])


def test_history_refuses_a_foreign_or_empty_database(src, capsys):
    c = sqlite3.connect(src / "other.db")
    c.execute("create table t(x)")
    c.commit()
    c.close()
    (src / "empty.db").write_bytes(b"")
    _one_line(capsys, ["history", "--db", "other.db"])
    _one_line(capsys, ["history", "--db", "empty.db"])
    assert (src / "empty.db").stat().st_size == 0
    names = {r[0] for r in sqlite3.connect(src / "other.db").execute("select name from sqlite_master")}
    assert names == {"t"}


@pytest.mark.parametrize("where", ["compare", "baseline", "compile-commands", "pyproject"])
def test_deep_json_and_toml_are_one_line(src, capsys, where):
    (src / "deep.json").write_text(DEEP_JSON)
    if where == "compare":
        args = ["compare", "deep.json", "deep.json"]
    elif where == "baseline":
        args = ["check", "--no-compile", ".", "--baseline", "deep.json"]
    elif where == "compile-commands":
        args = ["analyze", "--no-compile", "k.cu", "--compile-commands", "deep.json"]
    else:
        (src / "pyproject.toml").write_text("[tool.cudalens]\nx = " + "[" * 100_000 + "]" * 100_000 + "\n")
        args = ["analyze", "--no-compile", "k.cu"]
    assert "deeply" in _one_line(capsys, args)


def test_pyproject_in_utf16_or_with_a_bom_is_read(src, capsys):
    for data in ('[tool.cudalens]\nselect = ["E6"]\n'.encode("utf-16"), b"\xef\xbb\xbf[tool.cudalens]\nselect = [\"E6\"]\n"):
        (src / "pyproject.toml").write_bytes(data)
        assert main(["analyze", "--no-compile", "k.cu", "--format", "json", "-o", "r.json"]) == 0
        rules = {f["rule"] for f in json.loads((src / "r.json").read_text())["findings"]}
        assert rules == {"E6"}, rules  # the configuration was read
    capsys.readouterr()
    (src / "pyproject.toml").write_bytes(b"\xff\xfe\x00")  # a BOM, then no valid UTF-16
    _one_line(capsys, ["analyze", "--no-compile", "k.cu"])


@pytest.mark.parametrize("args", [["occupancy", "--cc", "9.0", "--threads", "256", "--registers", "32",
                                   "--plot", "out.exe"],
                                  ["check", "--no-compile", ".", "--min-impact", "nan"],
                                  ["device", "--cc", "9.0", "--sms", "132", "--clock-mhz", "nan", "--format", "json"]])
def test_bad_values_are_one_line(src, capsys, args):
    _one_line(capsys, args)
    assert not (src / "out.exe").exists()


def test_notes_name_no_exception_class(src, capsys, monkeypatch):
    import cudalens.rules.registry as registry

    def boom(ctx):
        raise MemoryError

    import dataclasses

    registry.load_all()
    spec = registry.RULES["E6"]
    monkeypatch.setitem(registry.RULES, "E6", dataclasses.replace(spec, checks=(boom,)))
    main(["analyze", "--no-compile", "k.cu", "--format", "json", "-o", "r.json", "--select", spec.id])
    text = (src / "r.json").read_text()
    assert "out of memory" in text and "MemoryError" not in text


def test_terminal_escapes_in_names_are_neutralised(src, capsys):
    name = "k\x1b[31mred\u202e.cu"
    (src / name).write_text(GOOD)
    main(["analyze", "--no-compile", name])
    out = capsys.readouterr()
    assert "\x1b" not in out.out + out.err and "\u202e" not in out.out
    main(["analyze", "--no-compile", "nope\x1b[2J.cu"])
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\\x1b" in err
