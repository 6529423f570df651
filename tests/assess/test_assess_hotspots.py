"""Host hotspots (catalog A1): cProfile in a subprocess, saved pstats, gprof flat profiles."""

from __future__ import annotations

import cProfile
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cudalens.assess import hotspots as hs
from cudalens.assess.scaling import amdahl, amdahl_limit
from cudalens.cli import main
from cudalens.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
HOT = ROOT / "examples" / "assess" / "hot.py"
DATA = Path(__file__).parent / "data"


def test_assess_cli_ranks_the_known_hot_function_first(capsys):
    args = ["assess", "--top", "3", "--processors", "16", "--format", "json", "--",
            sys.executable, str(HOT), "10000", "10"]
    assert main(args) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["program"]["exit_code"] == 0
    assert "size 10000 elements" in data["program"]["stdout"]  # output captured, not printed
    first = data["hotspots"][0]
    assert first["function"] == "smooth" and first["file"].endswith("hot.py") and first["line"] > 0
    assert first["share"] == pytest.approx(first["self_s"] / data["total_self_s"])
    assert first["bound"]["amdahl_speedup_x"] == pytest.approx(amdahl(first["share"], 16))
    assert first["bound"]["amdahl_limit_x"] == pytest.approx(amdahl_limit(first["share"]))
    together = sum(h["share"] for h in data["hotspots"])
    assert data["top_together"]["parallel_fraction"] == pytest.approx(together)
    assert data["top_together"]["amdahl_speedup_x"] == pytest.approx(amdahl(together, 16))


@pytest.mark.skipif(shutil.which("python") is None, reason="no `python` on PATH")
def test_assess_cli_text_runs_as_a_real_subprocess():
    done = subprocess.run(
        [sys.executable, "-m", "cudalens", "assess", "--top", "2", "--", "python", str(HOT), "40000", "6"],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("│ 1 ")]
    assert rows and "smooth" in rows[0]


def test_crashing_program_reported_and_cudalens_survives(capsys):
    assert main(["assess", "--format", "json", "--", "python", str(DATA / "crash.py")]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["program"]["exit_code"] == 3
    assert "about to fail" in data["program"]["stderr"]
    assert any(h["function"] in ("busy", "<genexpr>") for h in data["hotspots"])


def test_crash_shown_in_text_mode(capsys):
    assert main(["assess", "--", str(DATA / "crash.py")]) == 0
    out = capsys.readouterr().out
    assert "EXITED WITH CODE 3" in out and "about to fail" in out


def test_saved_pstats_file_read(tmp_path, capsys):
    def hot(k):
        total = 0
        for i in range(k):
            total += i * i
        return total

    def cold():
        return 1

    prof = cProfile.Profile()
    prof.enable()
    hot(200_000)
    cold()
    prof.disable()
    out = tmp_path / "p.pstats"
    prof.dump_stats(out)
    profile = hs.from_pstats(out)
    assert abs(sum(h.share for h in profile.hotspots) - 1) < 1e-9
    assert [h.self_s for h in profile.hotspots] == sorted((h.self_s for h in profile.hotspots), reverse=True)
    assert profile.hotspots[0].function == "hot"
    assert main(["assess", "--pstats", str(out), "--top", "2"]) == 0
    assert "│ 1 │ hot " in capsys.readouterr().out


def test_gprof_fixture_parsed():
    profile = hs.read_gprof(DATA / "gprof_flat.txt")
    by_name = {h.function: h for h in profile.hotspots}
    assert list(by_name) == ["stencil_step(float*, float const*, int)", "clamp_index", "main", "run_all"]
    step = by_name["stencil_step(float*, float const*, int)"]
    assert step.calls == 200 and step.self_s == pytest.approx(0.50)
    assert step.cumulative_s == pytest.approx(200 * 3.00e-3)  # calls x total ms/call
    assert step.share == pytest.approx(0.50 / (0.50 + 0.20 + 0.10 + 0.0))
    assert by_name["main"].calls is None and by_name["main"].cumulative_s is None
    assert by_name["run_all"].cumulative_s == pytest.approx(0.8)  # "[3]" index removed
    assert profile.total_s == pytest.approx(0.80)


def test_gprof_without_samples_and_junk():
    text = (
        "Flat profile:\n\nEach sample counts as 0.01 seconds.\n no time accumulated\n\n"
        "  %   cumulative   self              self     total           \n"
        " time   seconds   seconds    calls  Ts/call  Ts/call  name    \n"
        "  0.00      0.00     0.00     1000     0.00     0.00  helper\n"
    )
    profile = hs.parse_gprof(text)
    assert profile.hotspots[0].function == "helper" and profile.hotspots[0].calls == 1000
    assert profile.hotspots[0].share == 0.0
    with pytest.raises(InputError, match="Flat profile"):
        hs.parse_gprof("Call graph\n\nnothing here\n")


@pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("gprof") is None, reason="needs gcc and gprof")
def test_real_gprof_output_parsed(tmp_path):
    src = tmp_path / "p.c"
    src.write_text(
        "double spin(long n){double s=0;for(long i=0;i<n;i++)s+=(i%7)*1e-9;return s;}\n"
        "int main(void){return spin(60000000L) < 0;}\n"
    )
    subprocess.run(["gcc", "-O0", "-pg", str(src), "-o", str(tmp_path / "p")], check=True, cwd=tmp_path)
    subprocess.run([str(tmp_path / "p")], check=True, cwd=tmp_path)
    text = subprocess.run(["gprof", "-b", "-p", str(tmp_path / "p"), str(tmp_path / "gmon.out")],
                          capture_output=True, text=True, check=True).stdout
    names = [h.function for h in hs.parse_gprof(text).hotspots]
    assert "spin" in names


def test_command_splitting():
    assert hs.split_command(["python3", "-u", "-X", "dev", "prog.py", "a"]) == (["python3", "-u", "-X", "dev"], "path", "prog.py", ["a"])
    assert hs.split_command(["python", "-m", "pkg.mod", "x"])[1:] == ("module", "pkg.mod", ["x"])
    assert hs.split_command(["prog.py"])[0] == [sys.executable]
    for bad in (["ls", "-l"], ["python", "-c", "print(1)"], [], ["python"]):
        with pytest.raises(InputError):
            hs.split_command(bad)


@pytest.mark.parametrize(
    "args",
    [
        ["assess"],
        ["assess", "--", "ls", "-l"],
        ["assess", "--", "python", "no_such_program.py"],
        ["assess", "--gprof", "no_such_file.txt"],
        ["assess", "--pstats", str(DATA / "gprof_flat.txt")],
        ["assess", "--gprof", str(DATA / "crash.py")],
        ["assess", "--top", "0", "--gprof", str(DATA / "gprof_flat.txt")],
    ],
)
def test_assess_user_errors_one_line_exit_2(args, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("cudalens: error")
