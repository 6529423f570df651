"""Where `check`'s cold CPU time goes beside the compiler (issue #29), per unit of a check_speed set, in CPU
seconds (user + system of the processes each step starts; steadier than wall time on a shared machine):

- ``nvcc``: plain ``nvcc -arch=sm_XX -cubin -lineinfo`` (check_speed.py's nvcc column);
- ``nvcc_check``: the compile ``check`` runs, the command line of cudalens.compiled.compile.nvcc_command
  (``-Xptxas -v``, the dependency list written by the device preprocessor, ``--keep``: resources,
  dependency list and PTX from the same run);
- ``nvcc_check_md`` (with ``--before``): that compile with nvcc's own ``-MD -MF`` instead, as ``check`` ran it
  before (a second, host-side preprocessing pass);
- ``nvcc_keep``, ``nvcc_ptxas_v`` (with ``--variants``): plain nvcc with ``--keep`` alone and with ``-Xptxas -v``
  alone (what each costs on its own);
- ``nvdisasm``: ``nvdisasm -gi -c`` of the cubin (SASS with line info); ``nvdisasm_ndf``: with ``-ndf``,
  sass.sass_command, as ``check`` runs it; ``nvdisasm_start``: ``nvdisasm -c -ndf`` of a one-instruction
  cubin, nvdisasm's fixed cost per call; and ``cuobjdump --dump-resource-usage``;
- ``toolchain``: nvcc_check + nvdisasm_ndf + cuobjdump, every tool ``check`` starts for the unit.

    python benchmarks/check/check_cpu_parts.py --set llmc [--limit K] [--include DIR] [--before] [--variants] [-o OUT.json]

Compare with check_speed.py's ``cpu_seconds`` of ``check -j 1`` cold on the same units: the rest is Python
(front end, source model, lane machine, rules, serialization, interpreter starts).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import check_speed as cs  # noqa: E402


def _cpu(cmd: list[str], cwd: str | None = None) -> tuple[float, int]:
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, capture_output=True, cwd=cwd, check=False)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime, proc.returncode


def _tool(name: str) -> str:
    from cudalens.compiled.toolchain import discover

    return discover().get(name).path


def parts(files: list[Path], includes: list[str], cc: str, before: bool = False, variants: bool = False) -> dict:
    from cudalens.compiled.compile import build_flags, nvcc_command
    from cudalens.compiled.sass import sass_command

    arch = "sm_" + cc.replace(".", "")
    nvcc, nvdisasm, cuobjdump = _tool("nvcc"), _tool("nvdisasm"), _tool("cuobjdump")
    inc = [f"-I{os.path.abspath(i)}" for i in includes]
    rows = []
    with tempfile.TemporaryDirectory(prefix="cpu-parts-") as tmp:  # nvdisasm's start: a one-instruction kernel
        tiny = os.path.join(tmp, "tiny.cu")
        Path(tiny).write_text("__global__ void k(float *a) { a[threadIdx.x] = 1.0f; }\n")
        subprocess.run([nvcc, f"-arch={arch}", "-cubin", "-o", os.path.join(tmp, "tiny.cubin"), tiny], check=True,
                       capture_output=True)
        start = _cpu([nvdisasm, "-c", "-ndf", os.path.join(tmp, "tiny.cubin")])[0]
    for f in files:
        with tempfile.TemporaryDirectory(prefix="cpu-parts-") as tmp:
            cubin = os.path.join(tmp, "out.cubin")
            plain, rc = _cpu([nvcc, f"-arch={arch}", "-cubin", "-lineinfo", *inc, "-o", cubin, str(f.resolve())],
                             cwd=str(f.parent))
            keep = os.path.join(tmp, "keep")
            os.mkdir(keep)
            full, rc2 = _cpu(nvcc_command(nvcc, build_flags(cc, None, inc), f.resolve(), cubin, keep), cwd=tmp)
            row = {"unit": f.name, "nvcc": round(plain, 3), "nvcc_check": round(full, 3), "compiled": rc == 0 and rc2 == 0}
            if variants:
                plain_cmd = [nvcc, f"-arch={arch}", "-cubin", "-lineinfo", *inc, "-o", cubin, str(f.resolve())]
                row["nvcc_keep"] = round(_cpu([*plain_cmd, "--keep", "--keep-dir", keep], cwd=tmp)[0], 3)
                row["nvcc_ptxas_v"] = round(_cpu([*plain_cmd, "-Xptxas", "-v"], cwd=tmp)[0], 3)
            if before:
                shutil.rmtree(keep)
                os.mkdir(keep)
                row["nvcc_check_md"] = round(_cpu([nvcc, *build_flags(cc, None, inc), "-MD", "-MF", os.path.join(tmp, "d.d"),
                                                   "--keep", "--keep-dir", keep, str(f.resolve()), "-o", cubin],
                                                  cwd=tmp)[0], 3)
            if rc2 == 0:
                row["nvdisasm"] = round(_cpu([nvdisasm, "-gi", "-c", cubin])[0], 3)
                row["nvdisasm_ndf"] = round(_cpu(sass_command(nvdisasm, cubin, cc))[0], 3)
                row["cuobjdump"] = round(_cpu([cuobjdump, "--dump-resource-usage", cubin])[0], 3)
                row["toolchain"] = round(row["nvcc_check"] + row["nvdisasm_ndf"] + row["cuobjdump"], 3)
            shutil.rmtree(keep, ignore_errors=True)
        rows.append(row)
    keys = ("nvcc", "nvcc_check", "nvcc_check_md", "nvcc_keep", "nvcc_ptxas_v", "nvdisasm", "nvdisasm_ndf", "cuobjdump", "toolchain")
    total = {k: round(sum(r.get(k, 0.0) for r in rows), 2) for k in keys if any(k in r for r in rows)}
    ok = [r for r in rows if "toolchain" in r]
    ratios = {f"{k}_over_nvcc": round(sum(r[k] for r in ok) / sum(r["nvcc"] for r in ok), 3)
              for k in ("nvcc_check", "nvcc_check_md", "nvcc_keep", "nvcc_ptxas_v", "toolchain") if ok and all(k in r for r in ok)}
    return {"units": len(rows), "nvdisasm_start": round(start, 3), "cpu_seconds_total": total,
            "ratios_compiled_units": ratios, "per_unit": rows}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cs.one_set_arguments(ap)
    ap.add_argument("--before", action="store_true", help="also time the compile with nvcc's -MD (check before #29)")
    ap.add_argument("--variants", action="store_true", help="also time plain nvcc with --keep alone and -Xptxas -v alone")
    ap.add_argument("-o", "--output", type=Path, default=None)
    args = ap.parse_args()
    files = cs.units(args.sources, args.name, args.limit)
    includes = [str(args.sources / args.name / i) for i in cs.SETS[args.name]["include"]] + args.include  # type: ignore[attr-defined]
    t0 = time.perf_counter()
    out = {"command": " ".join(["python", "benchmarks/check/check_cpu_parts.py", *sys.argv[1:]]), "set": args.name,
           "load_average_before": [round(x, 2) for x in os.getloadavg()], **parts(files, includes, args.cc, args.before, args.variants)}
    out["wall_seconds"] = round(time.perf_counter() - t0, 1)
    out["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    return cs.write_result(out, args.output, indent=1)


if __name__ == "__main__":
    sys.exit(main())
