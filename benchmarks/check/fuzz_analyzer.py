"""Fuzz the analyzer: mutated CUDA sources must never crash it, hang it or blow its memory.

Corpus: our own kernels (examples/, tests/analyze/corpus, src/cudalens/labs/kernels) plus every
directory given on the command line (e.g. a checkout of NVIDIA/cuda-samples). Each input is one
corpus file with one to three mutations (seeded: input i of a run is reproducible from --seed):
lines deleted, duplicated or swapped, truncation, tokens inserted, deep nesting (parentheses,
blocks, ifs, binary chains, ternaries, subscripts, calls, self-referencing assignments), huge
literals, huge launch dimensions, bad bytes, macro fan-out (a chain of macros each using the next
two or three times) and juxtaposed names in parentheses (``(p q) = 0``, the parse-error recovery
that once looped). ``--check-every N`` also runs `cudalens check` end to end (a subprocess, compiled
or not) on every Nth input beside a good file and a hostile neighbour: special files, deep
JSON/TOML, odd encodings, flags naming a program (benchmarks/check/_fuzz_check.py).

Each input is analysed in process, without compiling (``cudalens.pipeline.analyze_file`` with
``compile=False``, then the JSON and terminal reports), in a worker process that the harness
kills and restarts when one input runs past ``--timeout``. Outcomes:

- ``ok``: analysed; ``rejected``: a clean :class:`cudalens.errors.InputError` (e.g. "not a CUDA
  C++ source file") whose message names no Python exception;
- ``crash``: any other exception; ``hang``: more than ``--timeout`` seconds of the worker's CPU
  time (the wall clock of a shared machine runs slower; 10x the timeout of wall time also counts);
  ``memory``: the worker's peak RSS
  went over ``--memory-mb``; ``leak``: analysed, but a note or problem shown to the user names a
  Python exception (``RecursionError``, ``TypeError`` ...).

Every ``--cli-every``-th input also goes through the CLI in a subprocess
(``python -m cudalens analyze --no-compile --format json``): exit 0, or 2 with one line on stderr
and no traceback.

Each distinct failure (kind plus the innermost cudalens frame) keeps its first input, reduced by
line-wise delta debugging, in the JSON summary (``--out``), with the command that produced it.

Example (the committed summary)::

    python3 benchmarks/check/fuzz_analyzer.py /work/ext/cuda-samples -n 10000 --seed 1 \\
        --out benchmarks/results/cpu/fuzz.json
"""

from __future__ import annotations

import argparse
import base64
import faulthandler
import json
import multiprocessing as mp
import os
import platform
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
OWN_CORPUS = ("examples", "tests/analyze/corpus", "src/cudalens/labs/kernels")
SUFFIXES = (".cu", ".cuh")
#: Python exception names that must never reach a user-facing line
PY_EXC = re.compile(r"\b(RecursionError|TypeError|ValueError|KeyError|IndexError|AttributeError|OverflowError|"
                    r"ZeroDivisionError|UnicodeDecodeError|UnicodeEncodeError|MemoryError|AssertionError|"
                    r"NameError|StopIteration|RuntimeError|NotImplementedError|Traceback)\b")


# ---------------------------------------------------------------------------------------- corpus


def corpus_files(extra_dirs: list[str], max_bytes: int) -> list[Path]:
    dirs = [ROOT / d for d in OWN_CORPUS] + [Path(d) for d in extra_dirs]
    out: list[Path] = []
    for d in dirs:
        if not d.is_dir():
            raise SystemExit(f"fuzz_analyzer: {d}: not a directory")
        out.extend(p for p in sorted(d.rglob("*")) if p.suffix in SUFFIXES and p.is_file()
                   and p.stat().st_size <= max_bytes)
    return out


# ---------------------------------------------------------------------------------------- mutations

TOKENS = [b"(", b")", b"{", b"}", b"[", b"]", b";", b",", b"<<<", b">>>", b"<<", b">>", b"?", b":", b"#", b"#if",
          b"#endif", b"#define X", b"__global__", b"__device__", b"__shared__", b"template<", b"return",
          b"if (", b"else", b"for (;;)", b"while (1)", b"do", b"threadIdx.x", b"blockIdx.x", b"blockDim.x",
          b"*", b"&", b"->", b".", b"/", b"%", b"~", b"!", b"-", b"++", b"'", b'"', b"\\", b"/*", b"*/", b"//",
          b"0", b"-1", b"1e999", b"0x", b"sizeof", b"dim3", b"extern \"C\"", b"namespace", b"struct", b"auto",
          b"int", b"float", b"double", b"unsigned", b"long long", b"const", b"static", b"asm(\"\")"]
HUGE_LITERALS = [b"2147483648", b"4294967296", b"9223372036854775807", b"18446744073709551616",
                 b"340282366920938463463374607431768211457", b"0xffffffffffffffffffffffffffffffff",
                 b"1" * 400, b"1e308", b"1e400", b"1.7976931348623157e308f", b"-9223372036854775808",
                 b"(1 << 63)", b"(1 << 4000)", b"(1u << 100)", b"(-1 >> 1)", b"(1 << -1)", b"(1.5 << 2)",
                 b"(1e400 * 0)", b"(1.0 / 0.0)", b"(0.0 / 0.0)", b"(1 / 0)", b"(7 % 0)", b"(2.5 % 1)",
                 b"(~1.5)", b"(1e300 * 1e300)", b"0b1111111111111111111111111111111111111111111111111111111111111111111",
                 b"(-2147483647 - 1) / -1", b"999999999999999999999999999999999999999ull"]
HUGE_DIMS = [b"dim3(4096, 4096, 1)", b"dim3(65535, 65535, 65535)", b"4294967295", b"(1 << 30)",
             b"dim3(2147483647, 65535, 65535)", b"1e30", b"-1", b"0", b"dim3(0, 0, 0)", b"dim3(1024, 1024, 64)",
             b"18446744073709551615ull", b"dim3(-5, 3, 2)"]
BAD_BYTES = [b"\xff", b"\xfe\xff", b"\x80\x81", b"\xc3\x28", b"\xe2\x82", b"\xed\xa0\x80", b"\x00", b"\x1b[31m",
             b"\r", b"\r\n", b"\x0c", b"\xef\xbb\xbf", b"\xa0", b"\xf4\x90\x80\x80", b"\\\n", b"\t\x0b"]


def _nest(rng: random.Random) -> bytes:
    n = rng.choice([64, 300, 1000, 3000, 10000])
    kind = rng.choice(["paren", "block", "if", "chain", "ternary", "subscript", "call", "selfassign", "unary",
                       "shift", "for", "dag"])
    if kind == "paren":
        return b"int nz = " + b"(" * n + b"threadIdx.x" + b")" * n + b";\n"
    if kind == "block":
        return b"{" * n + b"int q = 1;" + b"}" * n + b"\n"
    if kind == "if":
        return b"if (threadIdx.x) {" * n + b"x = 1;" + b"}" * n + b"\n"
    if kind == "chain":
        return b"int nc = threadIdx.x" + b" + threadIdx.x" * n + b";\n"
    if kind == "ternary":
        return b"int nt = " + b"threadIdx.x ? 1 : " * n + b"0;\n"
    if kind == "subscript":
        return b"a[" * n + b"threadIdx.x" + b"]" * n + b" = 1;\n"
    if kind == "call":
        return b"int nf = " + b"min(1, " * n + b"threadIdx.x" + b")" * n + b";\n"
    if kind == "selfassign":
        return b"int ns = threadIdx.x;\n" + b"ns = ns * 3 + 1;\n" * n
    if kind == "unary":
        return b"int nu = " + b"-~!" * n + b"threadIdx.x;\n"
    if kind == "shift":
        return b"int nh = 1" + b" << 1" * n + b";\n"
    if kind == "for":
        return b"for (int i = 0; i < 2; ++i) " * min(n, 3000) + b"x[i] = i;\n"
    # dag: each line doubles the expression's tree size (shared sub-expressions)
    return b"int nd = threadIdx.x;\n" + b"nd = nd + nd;\n" * min(n, 400) + b"buf[nd] = 1;\n"


def macro_fan_out(rng: random.Random) -> bytes:
    """``#define M0 (M1 + M1)`` ... ``#define Mn 1`` and a use of M0 in an index (was exponential)."""
    n, fan = rng.choice([8, 20, 31, 40]), rng.choice([2, 2, 3])
    tag = rng.randrange(1 << 30)
    lines = [b"#define F%d_%d (" % (tag, k) + b" + ".join([b"F%d_%d" % (tag, k + 1)] * fan) + b")" for k in range(n)]
    lines.append(b"#define F%d_%d threadIdx.x" % (tag, n))
    lines.append(b"__global__ void fm%d(float *a) { a[F%d_0] = 1.0f; a[threadIdx.x + F%d_0 %% 7] = 2.0f; }"
                 % (tag, tag, tag))
    return b"\n".join(lines)


def mutate(data: bytes, rng: random.Random) -> tuple[bytes, list[str]]:
    lines = data.split(b"\n")
    applied = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        kind = rng.choice(["delete", "duplicate", "swap", "truncate", "token", "nest", "literal", "dims",
                           "bytes", "nest", "literal", "dims", "macro", "juxtapose"])
        applied.append(kind)
        i = rng.randrange(len(lines)) if lines else 0
        if kind == "delete" and lines:
            del lines[i:i + rng.choice([1, 1, 2, 5])]
        elif kind == "duplicate" and lines:
            lines[i:i] = lines[i:i + rng.choice([1, 3])] * rng.choice([1, 2, 50])
        elif kind == "swap" and len(lines) > 1:
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == "truncate":
            blob = b"\n".join(lines)
            lines = blob[: rng.randrange(len(blob) + 1)].split(b"\n")
        elif kind == "token" and lines:
            line = lines[i]
            k = rng.randrange(len(line) + 1)
            lines[i] = line[:k] + b" " + rng.choice(TOKENS) + b" " + line[k:]
        elif kind == "nest" and lines:
            lines[i:i] = _nest(rng).split(b"\n")
        elif kind == "literal":
            nums = [(li, m) for li, line in enumerate(lines) for m in re.finditer(rb"\b\d+\b", line)]
            lit = rng.choice(HUGE_LITERALS)
            if nums:
                li, m = rng.choice(nums)
                lines[li] = lines[li][: m.start()] + lit + lines[li][m.end():]
            elif lines:
                lines[i] = b"int nl = " + lit + b";\n" + lines[i]
        elif kind == "dims":
            sites = [(li, m) for li, line in enumerate(lines) for m in re.finditer(rb"<<<([^,>]*),([^,>]*)", line)]
            a, b = rng.choice(HUGE_DIMS), rng.choice(HUGE_DIMS)
            if sites:
                li, m = rng.choice(sites)
                lines[li] = lines[li][: m.start()] + b"<<<" + a + b", " + b + lines[li][m.end():]
            defs = [li for li, line in enumerate(lines) if line.lstrip().startswith(b"#define")]
            if defs and rng.random() < 0.5:
                li = rng.choice(defs)
                parts = lines[li].split()
                if len(parts) >= 3:
                    lines[li] = b" ".join(parts[:2] + [rng.choice(HUGE_DIMS)])
            if not sites and lines:
                lines[i:i] = [b"dim3 fb(" + rng.choice([b"4096, 4096, 1", b"65535, 65535, 64"]) + b");",
                              b"void fz() { k<<<fb, fb>>>(0); }"]
        elif kind == "macro" and lines:  # a chain of macros, each using the next two or three times
            lines[i:i] = macro_fan_out(rng).split(b"\n")
        elif kind == "juxtapose" and lines:  # two names side by side in parentheses: (p q)
            names = [(li, m) for li, line in enumerate(lines) for m in re.finditer(rb"\b[A-Za-z_]\w*\b", line)]
            if names and rng.random() < 0.7:
                li, m = rng.choice(names)
                lines[li] = lines[li][: m.start()] + b"(" + m.group() + b" q)" + lines[li][m.end():]
            else:
                lines[i:i] = [b"int fj() { float *p; (p q) = 0; ((p) q) = 2; cudaMemcpy((p q), 0, 4, "
                              b"cudaMemcpyHostToDevice); return 0; }"]
        elif kind == "bytes" and lines:
            line = lines[i]
            k = rng.randrange(len(line) + 1)
            lines[i] = line[:k] + rng.choice(BAD_BYTES) + line[k:]
    return b"\n".join(lines), applied


# ---------------------------------------------------------------------------------------- the worker


def analyse_bytes(data: bytes, tmpdir: str, render: bool = True) -> dict[str, Any]:
    """What ``cudalens analyze --no-compile`` does with one file, in process (the JSON report, and
    the terminal report when ``render``)."""
    from cudalens.errors import InputError
    from cudalens.pipeline import Analysis, analyze_file
    from cudalens.pipeline.report import Report, with_sources
    from cudalens.report.emit import emit

    path = os.path.join(tmpdir, "input.cu")
    with open(path, "wb") as fh:
        fh.write(data)
    try:
        result = Analysis((analyze_file(path, compile=False),))
    except InputError as exc:
        return {"outcome": "rejected", "message": str(exc)}
    report = with_sources(Report("analyze", result))
    doc = report.guided_document()  # the JSON analyze prints, with the guided analysis's keys
    json.dumps(doc)
    if render:  # the terminal report, as analyze prints it (its findings ranked by the guided analysis)
        emit(report, "text")
    lines = [*doc["evidence_notes"]]
    for f in doc["files"]:
        lines += f["problems"] + f["notes"]
    return {"outcome": "ok", "lines": lines}


def _innermost(tb: Any) -> str:
    where = "?"
    while tb is not None:
        fn = tb.tb_frame.f_code.co_filename
        if "cudalens" in fn:
            where = f"{fn.split('cudalens')[-1].lstrip('/')}:{tb.tb_frame.f_code.co_name}"
        tb = tb.tb_next
    return where


def worker_main(conn: Any, stack_path: str, mem_limit_mb: int) -> None:
    limit = mem_limit_mb * 4 * 1024 * 1024  # a hard stop well above the reported threshold
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    with open(stack_path, "w") as stack, tempfile.TemporaryDirectory(prefix="cudalens_fuzz_") as tmpdir:
        while True:
            msg = conn.recv()
            if msg is None:
                return
            data, timeout, render = msg
            stack.seek(0)
            stack.truncate()
            faulthandler.dump_traceback_later(timeout * 0.9, repeat=True, file=stack)  # latest stack wins
            t0, c0 = time.perf_counter(), time.process_time()
            try:
                res = analyse_bytes(data, tmpdir, render)
            except BaseException as exc:  # noqa: BLE001 - every failure is data here
                res = {"outcome": "crash", "error": f"{type(exc).__name__}: {str(exc)[:200]}",
                       "where": _innermost(exc.__traceback__), "exc": type(exc).__name__}
            faulthandler.cancel_dump_traceback_later()
            res["wall_s"] = time.perf_counter() - t0
            res["cpu_s"] = time.process_time() - c0
            res["maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            conn.send(res)


class Runner:
    """One worker process; restarted after a hang or a memory overrun (peak RSS is per process)."""

    def __init__(self, timeout: float, memory_mb: int) -> None:
        self.timeout, self.memory_mb = timeout, memory_mb
        self.ctx = mp.get_context("spawn")
        self.proc: Any = None
        self.stack_path = tempfile.mktemp(prefix="cudalens_fuzz_stack_")
        self.peak_rss_mb = 0.0

    def _start(self) -> None:
        self.conn, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=worker_main, args=(child, self.stack_path, self.memory_mb), daemon=True)
        self.proc.start()

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.join()
            self.proc = None

    def run(self, data: bytes, timeout: float | None = None, render: bool = True) -> dict[str, Any]:
        timeout = timeout or self.timeout
        if self.proc is None or not self.proc.is_alive():
            self._start()
        self.conn.send((data, timeout, render))
        t0, cpu0 = time.monotonic(), _cpu_seconds(self.proc.pid)
        while not self.conn.poll(max(timeout - (_cpu_seconds(self.proc.pid) - cpu0), 1.0)):
            # a hang is ``timeout`` seconds of the worker's CPU time (on a shared machine the wall
            # clock runs several times slower), with a hard stop at 10x the timeout of wall time
            if _cpu_seconds(self.proc.pid) - cpu0 >= timeout or time.monotonic() - t0 >= 10 * timeout:
                where, cpu = _stack_where(self.stack_path), _cpu_seconds(self.proc.pid) - cpu0
                self.stop()
                return {"outcome": "hang", "where": where, "wall_s": time.monotonic() - t0, "cpu_s": cpu}
        try:
            res = self.conn.recv()
        except EOFError:
            self.stop()
            return {"outcome": "crash", "error": "worker died", "where": "?", "exc": "died"}
        self.peak_rss_mb = max(self.peak_rss_mb, res["maxrss_mb"])
        if res["maxrss_mb"] > self.memory_mb:
            self.stop()  # the next input starts from a fresh process
            return {**res, "outcome": "memory", "where": f"peak {res['maxrss_mb']:.0f} MB"}
        if res["outcome"] == "rejected" and PY_EXC.search(res["message"]):
            return {**res, "outcome": "leak", "where": PY_EXC.search(res["message"]).group(1)}
        if res["outcome"] == "ok":
            bad = [line for line in res.pop("lines") if PY_EXC.search(line)]
            if bad:
                return {**res, "outcome": "leak", "where": PY_EXC.search(bad[0]).group(1), "error": bad[0][:200]}
        return res


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (Linux /proc)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def _stack_where(path: str) -> str:
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return "?"
    last = re.split(r"(?m)^(?:Thread 0x|Current thread)", text)[-1]  # the latest dump
    for line in last.splitlines():  # most recent call first
        m = re.search(r'File "([^"]*cudalens[^"]*)", line \d+ in (\w+)', line)
        if m and "fuzz_analyzer" not in m.group(1):
            return f"{m.group(1).split('cudalens')[-1].lstrip('/')}:{m.group(2)}"
    return "?"


FAILURES = ("crash", "hang", "memory", "leak")


def signature(res: dict[str, Any]) -> str:
    return f"{res['outcome']}|{res.get('exc', '')}|{res.get('where', '?')}"


def minimize(runner: Runner, data: bytes, sig: str, budget: int, timeout: float) -> bytes:
    """Line-wise delta debugging: the smallest input found (within ``budget`` runs) failing the same way."""
    lines = data.split(b"\n")
    n = 2
    runs = 0
    while len(lines) >= 2 and runs < budget:
        chunk = max(len(lines) // n, 1)
        reduced = False
        for start in range(0, len(lines), chunk):
            cand = lines[:start] + lines[start + chunk:]
            runs += 1
            if signature(runner.run(b"\n".join(cand), timeout)) == sig:
                lines, n, reduced = cand, max(n - 1, 2), True
                break
            if runs >= budget:
                break
        if not reduced:
            if chunk == 1:
                break
            n = min(n * 2, len(lines))
    return b"\n".join(lines)


# ---------------------------------------------------------------------------------------- the CLI sample


def cli_check(data: bytes, timeout: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="cudalens_fuzz_cli_") as tmp:
        path = os.path.join(tmp, "input.cu")
        Path(path).write_bytes(data)
        env = {**os.environ, "HOME": tmp, "XDG_CACHE_HOME": os.path.join(tmp, "cache")}
        try:
            p = subprocess.run([sys.executable, "-m", "cudalens", "analyze", "--no-compile", "--format", "json", path],
                               capture_output=True, timeout=timeout, env=env, cwd=tmp, check=False)
        except subprocess.TimeoutExpired:
            return {"ok": False, "why": "timeout"}
    err = p.stderr.decode("utf-8", "replace").strip()
    ok = (p.returncode == 0 and "Traceback" not in err) or (
        p.returncode == 2 and len(err.splitlines()) == 1 and not PY_EXC.search(err))
    return {"ok": ok, "rc": p.returncode, "stderr": err[-300:]}


# ---------------------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", nargs="*", help="more directories of CUDA code to mutate (e.g. cuda-samples)")
    ap.add_argument("-n", "--inputs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds per input before it counts as a hang")
    ap.add_argument("--memory-mb", type=int, default=1024, help="peak RSS of the worker that counts as a failure")
    ap.add_argument("--max-bytes", type=int, default=200_000, help="corpus files larger than this are skipped")
    ap.add_argument("--cli-every", type=int, default=250, help="every Nth input also runs through the CLI")
    ap.add_argument("--minimize-budget", type=int, default=200)
    ap.add_argument("--render-every", type=int, default=1,
                    help="render the terminal report for every Nth input (the JSON report: every input)")
    ap.add_argument("--check-every", type=int, default=0,
                    help="every Nth input also runs `cudalens check` end to end beside a good file and a hostile "
                         "neighbour (benchmarks/check/_fuzz_check.py)")
    ap.add_argument("--check-compile-every", type=int, default=2,
                    help="of those check runs, every Nth compiles (the others --no-compile)")
    ap.add_argument("--check-deadline", type=float, default=60.0, help="--deadline of the check runs")
    ap.add_argument("--out", default=None, help="JSON summary (default: standard output)")
    ap.add_argument("--shard", default="0/1", metavar="K/N",
                    help="run only inputs i with i %% N == K (N runs in parallel, then --merge)")
    ap.add_argument("--merge", nargs="+", default=None, metavar="SUMMARY.json",
                    help="combine the summaries of the shards of one run into --out")
    args = ap.parse_args(argv)
    if args.merge:
        return merge(args.merge, args.out, " ".join(sys.argv[1:] if argv is None else argv))
    shard, shards = (int(x) for x in args.shard.split("/"))

    files = corpus_files(args.dirs, args.max_bytes)
    blobs = [p.read_bytes() for p in files]
    runner = Runner(args.timeout, args.memory_mb)
    counts: dict[str, int] = {}
    mutation_counts: dict[str, int] = {}
    rejected: dict[str, int] = {}
    failures: dict[str, dict[str, Any]] = {}
    walls: list[float] = []
    cpus: list[float] = []
    cli = {"runs": 0, "failed": 0, "examples": []}
    e2e: dict[str, Any] = {"runs": 0, "compiled": 0, "outcomes": {}, "by_neighbour": {}, "stopped_files": 0,
                           "peak_mb": 0.0, "max_wall_s": 0.0, "failures": []}
    started = time.time()
    try:
        for i in range(shard, args.inputs, shards):
            rng = random.Random(args.seed * 1_000_003 + i)
            k = rng.randrange(len(files))
            data, applied = mutate(blobs[k], rng)
            for m in applied:
                mutation_counts[m] = mutation_counts.get(m, 0) + 1
            res = runner.run(data, render=args.render_every > 0 and i % args.render_every == 0)
            counts[res["outcome"]] = counts.get(res["outcome"], 0) + 1
            if res["outcome"] == "rejected":
                why = re.sub(r"^.*?: ", "", res["message"], count=1)
                why = re.sub(r"\d+ ?%", "N %", why)
                rejected[why] = rejected.get(why, 0) + 1
            walls.append(res.get("wall_s", 0.0))
            cpus.append(res.get("cpu_s", res.get("wall_s", 0.0)))
            if res["outcome"] in FAILURES:
                sig = signature(res)
                f = failures.setdefault(sig, {"signature": sig, "count": 0, "first_input": i,
                                              "source": str(files[k]), "mutations": applied,
                                              "error": res.get("error"), "data": data})
                f["count"] += 1
            if args.cli_every and i % args.cli_every == 0:
                c = cli_check(data, max(60.0, args.timeout * 2))
                cli["runs"] += 1
                if not c["ok"]:
                    cli["failed"] += 1
                    if len(cli["examples"]) < 5:
                        cli["examples"].append({"input": i, **c})
            if args.check_every and i % args.check_every == 0:
                from _fuzz_check import NEIGHBOURS, check_e2e

                n = e2e["runs"]
                kind = NEIGHBOURS[(i // args.check_every) % len(NEIGHBOURS)]
                comp = args.check_compile_every > 0 and n % args.check_compile_every == 0
                c = check_e2e(data, kind, comp, args.check_deadline)
                e2e["runs"] += 1
                e2e["compiled"] += comp
                e2e["outcomes"][c["outcome"]] = e2e["outcomes"].get(c["outcome"], 0) + 1
                bk = e2e["by_neighbour"].setdefault(kind, {})
                bk[c["outcome"]] = bk.get(c["outcome"], 0) + 1
                e2e["stopped_files"] += c["stopped"]
                e2e["peak_mb"] = max(e2e["peak_mb"], c["peak_mb"])
                e2e["max_wall_s"] = max(e2e["max_wall_s"], c["wall_s"])
                if c["outcome"] in ("crash", "overrun", "ran", "nosarif") and len(e2e["failures"]) < 20:
                    e2e["failures"].append({"input": i, **c,
                                            "data_b64": base64.b64encode(data[:20000]).decode()})
            done_inputs = sum(counts.values())
            if done_inputs % 250 == 0 and args.out:
                Path(args.out + ".partial").write_text(json.dumps(
                    {"done": done_inputs, "outcomes": counts, "peak_rss_mb": runner.peak_rss_mb, "check_e2e": e2e,
                     "cli_sample": cli, "failures": [{k: v for k, v in f.items() if k != "data"}
                                                     for f in failures.values()],
                     "elapsed_s": round(time.time() - started)}, indent=1, default=str))
            if (i + 1) % 500 == 0:
                print(f"{i + 1}/{args.inputs} {counts} peak {runner.peak_rss_mb:.0f} MB "
                      f"{time.time() - started:.0f} s", file=sys.stderr, flush=True)
        for f in failures.values():
            small_timeout = min(args.timeout, 10.0) if f["signature"].startswith(("hang", "memory")) else args.timeout
            budget = args.minimize_budget if f["signature"].startswith(("crash", "leak")) else 20
            small = minimize(runner, f.pop("data"), f["signature"], budget, small_timeout)
            f["reproducer"] = small.decode("utf-8", "backslashreplace")
            f["reproducer_b64"] = base64.b64encode(small).decode()
    finally:
        runner.stop()
    summary = {
        "command": "python3 benchmarks/check/fuzz_analyzer.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
        "corpus": {"files": len(files), "dirs": list(OWN_CORPUS) + args.dirs},
        "inputs": args.inputs, "seed": args.seed, "timeout_s": args.timeout, "memory_threshold_mb": args.memory_mb,
        "outcomes": counts,
        "crashes": counts.get("crash", 0), "hangs": counts.get("hang", 0), "memory_overruns": counts.get("memory", 0),
        "leaks": counts.get("leak", 0),
        "mutations": mutation_counts,
        "rejections": dict(sorted(rejected.items(), key=lambda kv: -kv[1])),
        "shard": args.shard,
        "time_s": {"median_wall": statistics.median(walls) if walls else None, "max_wall": max(walls, default=None),
                   "max_cpu": max(cpus, default=None), "total": round(time.time() - started, 1),
                   "over_5s": sum(w > 5 for w in walls)},
        "peak_rss_mb": round(runner.peak_rss_mb, 1),
        "cli_sample": cli,
        "check_e2e": e2e,
        "failures": sorted(failures.values(), key=lambda f: -f["count"]),
    }
    text = json.dumps(summary, indent=2)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text + "\n")
    else:
        print(text)
    bad = (sum(summary[k] for k in ("crashes", "hangs", "memory_overruns", "leaks")) + cli["failed"]
           + sum(e2e["outcomes"].get(k, 0) for k in ("crash", "overrun", "ran", "nosarif")))
    return 1 if bad else 0


def merge(paths: list[str], out: str | None, command: str) -> int:
    """One summary from the shards' summaries (counts added, maxima taken, failures joined)."""
    parts = [json.loads(Path(p).read_text()) for p in paths]
    total = dict(parts[0])
    total["shards"] = [{"command": p["command"], "shard": p.get("shard"), "outcomes": p["outcomes"],
                        "time_s": p["time_s"]} for p in parts]
    total["command"] = "; ".join(p["command"] for p in parts) + "; python3 benchmarks/check/fuzz_analyzer.py " + command
    for key in ("outcomes", "mutations", "rejections"):
        acc: dict[str, int] = {}
        for p in parts:
            for k, v in p.get(key, {}).items():
                acc[k] = acc.get(k, 0) + v
        total[key] = dict(sorted(acc.items(), key=lambda kv: -kv[1]))
    for key in ("crashes", "hangs", "memory_overruns", "leaks"):
        total[key] = sum(p[key] for p in parts)
    total["inputs"] = sum(sum(p["outcomes"].values()) for p in parts)
    total["peak_rss_mb"] = max(p["peak_rss_mb"] for p in parts)
    total["time_s"] = {"max_wall": max(p["time_s"]["max_wall"] for p in parts),
                       "max_cpu": max(p["time_s"]["max_cpu"] for p in parts),
                       "median_wall_of_shards": [p["time_s"]["median_wall"] for p in parts],
                       "over_5s": sum(p["time_s"]["over_5s"] for p in parts),
                       "total_per_shard": [p["time_s"]["total"] for p in parts]}
    total["cli_sample"] = {"runs": sum(p["cli_sample"]["runs"] for p in parts),
                           "failed": sum(p["cli_sample"]["failed"] for p in parts),
                           "examples": [e for p in parts for e in p["cli_sample"]["examples"]]}
    total["failures"] = [f for p in parts for f in p["failures"]]
    total.pop("shard", None)
    text = json.dumps(total, indent=2)
    if out:
        Path(out).write_text(text + "\n")
    else:
        print(text)
    bad = sum(total[k] for k in ("crashes", "hangs", "memory_overruns", "leaks")) + total["cli_sample"]["failed"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
