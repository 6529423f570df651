"""Bad input to every command: a wrong type, an out-of-range value, a missing or unwritable path.

Each row runs one command with exactly one bad option (everything else valid) and expects what
every user error gets: one line of output, exit code 2, and no Python exception name.
``{cu}`` is a valid kernel file, ``{csv}`` a file that exists, ``{dir}`` a writable directory,
``{missing}`` a path under a directory that does not exist, ``{ro}`` a path nobody can write (its
parent is a regular file: root included).
"""

from __future__ import annotations

import os
import re

import pytest

from cudalens.cli import main

PY_EXC = re.compile(r"\b\w+(Error|Exception)\b|Traceback|\bErrno\b")

A = ["analyze", "--no-compile", "{cu}"]
CHECK = ["check", "--no-compile", "{cu}"]
B = ["bench", "{cu}", "--kernel", "k", "--grid", "1", "--block", "32", "--no-save"]
OCC = ["occupancy", "--cc", "9.0", "--threads", "256", "--registers", "32"]
OFF = ["offload", "--ops", "1e9", "--elements", "1e6"]

TABLE = [
    # analyze
    ("analyze: missing file", ["analyze", "--no-compile", "{missing}"]),
    ("analyze: a directory", ["analyze", "--no-compile", "{dir}"]),
    ("analyze: not CUDA", ["analyze", "--no-compile", "{csv}"]),
    ("analyze --block wrong type", [*A, "--block", "abc"]),
    ("analyze --block zero", [*A, "--block", "0"]),
    ("analyze --block too many threads", [*A, "--block", "4096"]),
    ("analyze --block four dims", [*A, "--block", "1,2,3,4"]),
    ("analyze --define without =", [*A, "-D", "N"]),
    ("analyze --cc wrong", [*A, "--cc", "abc"]),
    ("analyze --cc unknown", [*A, "--cc", "99.0"]),
    ("analyze --fail-on wrong", [*A, "--fail-on", "bogus"]),
    ("analyze --min-impact wrong type", [*A, "--min-impact", "abc"]),
    ("analyze --format wrong", [*A, "--format", "bogus"]),
    ("analyze --output missing dir", [*A, "--format", "json", "-o", "{missing}"]),
    ("analyze --output read-only", [*A, "--format", "json", "-o", "{ro}"]),
    ("analyze --baseline missing", [*A, "--baseline", "{missing}"]),
    ("analyze --write-baseline missing dir", [*A, "--write-baseline", "{missing}"]),
    ("analyze --counters missing", [*A, "--counters", "{missing}"]),
    ("analyze --compile-commands missing", [*A, "--compile-commands", "{missing}"]),
    ("analyze --run without kernel", [*A, "--run", "--grid 1"]),
    ("analyze --run bad grid", [*A, "--run", "k --grid abc --block 32"]),
    # check
    ("check: missing path", ["check", "--no-compile", "{missing}"]),
    ("check --jobs zero", [*CHECK, "--jobs", "0"]),
    ("check --jobs wrong type", [*CHECK, "--jobs", "abc"]),
    ("check --output missing dir", [*CHECK, "-o", "{missing}"]),
    ("check --output read-only", [*CHECK, "-o", "{ro}"]),
    ("check --min-impact wrong type", [*CHECK, "--min-impact", "x"]),
    ("check --cc unknown", [*CHECK, "--cc", "1.0"]),
    ("check --baseline missing", [*CHECK, "--baseline", "{missing}"]),
    # bench (no GPU needed: the options are checked first, or the missing GPU is a clean error)
    ("bench: missing source", ["bench", "{missing}", "--kernel", "k", "--grid", "1", "--block", "32"]),
    ("bench --grid wrong type", ["bench", "{cu}", "--kernel", "k", "--grid", "abc", "--block", "32"]),
    ("bench --block wrong type", ["bench", "{cu}", "--kernel", "k", "--grid", "1", "--block", "abc"]),
    ("bench --block zero", ["bench", "{cu}", "--kernel", "k", "--grid", "1", "--block", "0"]),
    ("bench --arg wrong", [*B, "--arg", "bogus"]),
    ("bench --shared-mem negative", [*B, "--shared-mem", "-1"]),
    ("bench --shared-mem wrong type", [*B, "--shared-mem", "abc"]),
    ("bench --noise wrong", [*B, "--noise", "abc"]),
    ("bench --min-samples negative", [*B, "--min-samples", "-1"]),
    ("bench --timeout negative", [*B, "--timeout", "-1"]),
    ("bench --timeout wrong type", [*B, "--timeout", "abc"]),
    ("bench --device negative", [*B, "--device", "-1"]),
    ("bench --batch zero", [*B, "--batch", "0"]),
    ("bench --timer wrong", [*B, "--timer", "bogus"]),
    # history / compare
    ("history --db missing", ["history", "--db", "{missing}"]),
    ("history --limit negative", ["history", "--limit", "-1"]),
    ("history --limit wrong type", ["history", "--limit", "abc"]),
    ("compare: unknown runs", ["compare", "1", "2", "--db", "{missing}"]),
    ("compare --fail-if-slower wrong", ["compare", "{csv}", "{csv}", "--fail-if-slower", "abc"]),
    # occupancy
    ("occupancy --threads wrong type", ["occupancy", "--cc", "9.0", "--threads", "abc", "--registers", "32"]),
    ("occupancy --threads zero", ["occupancy", "--cc", "9.0", "--threads", "0", "--registers", "32"]),
    ("occupancy --threads too many", ["occupancy", "--cc", "9.0", "--threads", "5000", "--registers", "32"]),
    ("occupancy --registers too many", ["occupancy", "--cc", "9.0", "--threads", "256", "--registers", "1000"]),
    ("occupancy --shared-mem huge", [*OCC, "--shared-mem", "1000000000"]),
    ("occupancy --shared-mem negative", [*OCC, "--shared-mem", "-1"]),
    ("occupancy --static-shared-mem wrong", [*OCC, "--static-shared-mem", "abc"]),
    ("occupancy --carveout out of range", [*OCC, "--carveout", "200"]),
    ("occupancy --barriers negative", [*OCC, "--barriers", "-1"]),
    ("occupancy --sms zero", [*OCC, "--sms", "0"]),
    ("occupancy --cc unknown", ["occupancy", "--cc", "1.0", "--threads", "256", "--registers", "32"]),
    ("occupancy --plot missing dir", [*OCC, "--plot", "{missing}.png"]),
    # device
    ("device --cc unknown", ["device", "--cc", "1.0"]),
    ("device --sms zero", ["device", "--cc", "9.0", "--sms", "0"]),
    ("device --clock-mhz negative", ["device", "--cc", "9.0", "--clock-mhz", "-5"]),
    ("device --device wrong type", ["device", "--device", "abc"]),
    # offload / speedup
    ("offload --ops wrong", ["offload", "--ops", "abc", "--elements", "1e6"]),
    ("offload --elements negative", ["offload", "--ops", "1e9", "--elements", "-1"]),
    ("offload --pcie-gen out of range", [*OFF, "--pcie-gen", "99"]),
    ("offload --pcie-lanes wrong type", [*OFF, "--pcie-lanes", "abc"]),
    ("offload --n-max zero", [*OFF, "--n-max", "0"]),
    ("offload --plot missing dir", [*OFF, "--plot", "{missing}.png"]),
    ("speedup --parallel-fraction above one", ["speedup", "--parallel-fraction", "2"]),
    ("speedup --parallel-fraction wrong type", ["speedup", "--parallel-fraction", "abc"]),
    ("speedup -n zero", ["speedup", "--parallel-fraction", "0.9", "-n", "0"]),
    # assess / profile / lab / rules / doctor / bandwidth
    ("assess --pstats missing", ["assess", "--pstats", "{missing}", "--", "true"]),
    ("assess --top negative", ["assess", "--top", "-1", "--", "true"]),
    ("assess --timeout wrong type", ["assess", "--timeout", "abc", "--", "true"]),
    ("profile --duration negative", ["profile", "--duration", "-1", "--", "true"]),
    ("profile --trace missing", ["profile", "--trace", "{missing}"]),
    ("profile --source missing", ["profile", "--source", "{missing}", "--", "true"]),
    ("lab run unknown", ["lab", "run", "no-such-lab"]),
    ("lab run --output read-only", ["lab", "run", "coalescing", "--output", "{ro}"]),
    ("rules unknown id", ["rules", "ZZ99"]),
    ("doctor --toolchain wrong", ["doctor", "--toolchain", "bogus"]),
    ("bandwidth --repeats zero", ["bandwidth", "--repeats", "0"]),
    ("bandwidth --sizes wrong", ["bandwidth", "--sizes", "abc"]),
    ("bandwidth --device wrong type", ["bandwidth", "--device", "abc"]),
]


@pytest.fixture
def paths(tmp_path):
    cu = tmp_path / "k.cu"
    cu.write_text('extern "C" __global__ void k(float *a) { a[threadIdx.x] = 1.0f; }\n')
    csv = tmp_path / "data.csv"
    csv.write_text("a,b\n1,2\n")
    return {"cu": str(cu), "csv": str(csv), "dir": str(tmp_path), "missing": str(tmp_path / "no" / "such" / "x"),
            "ro": str(csv / "out")}


@pytest.mark.parametrize("argv", [row[1] for row in TABLE], ids=[row[0] for row in TABLE])
def test_bad_input_is_one_line_exit_2(argv, paths, capsys):
    args = [a.format(**paths) for a in argv]
    rc = main(args)
    out = capsys.readouterr()
    text = (out.out + out.err).strip()
    assert rc == 2, f"exit {rc}: {text[-500:]}"
    assert len(text.splitlines()) == 1, text[-800:]
    assert not PY_EXC.search(text), text
    assert not os.path.exists(os.path.dirname(paths["missing"])), "a directory was created for a bad path"


def test_non_utf8_source_is_read_as_bytes(tmp_path, capsys):
    """Latin-1 and stray bytes in comments are what nvcc accepts: analyzed, never a decoding error."""
    src = tmp_path / "latin.cu"
    src.write_bytes(b"// caf\xe9 \xff\xfe\n__global__ void k(float *a) { a[threadIdx.x] = 1.0f; } // \xe9\n")
    assert main(["analyze", "--no-compile", "--format", "json", str(src)]) == 0
    out = capsys.readouterr()
    assert '"name": "k"' in out.out and not PY_EXC.search(out.err)
    rc = main(["bench", str(src), "--kernel", "k", "--grid", "1", "--block", "32", "--no-save"])
    out = capsys.readouterr()
    if rc != 0:  # no GPU here: one clean line, never a decoding error
        assert rc == 2 and len(out.err.strip().splitlines()) == 1 and not PY_EXC.search(out.err), out.err
