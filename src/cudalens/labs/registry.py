"""All labs in one place, and the glue that runs one and writes its JSON and PNG."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from cudalens.errors import InputError
from cudalens.labs import exec_labs, host_labs, instr_labs, memory_labs
from cudalens.labs.core import Lab, LabResult
from cudalens.labs.runner import device_dict


def all_labs() -> tuple[Lab, ...]:
    labs = memory_labs.LABS + exec_labs.LABS + instr_labs.LABS + host_labs.LABS
    return tuple(sorted(labs, key=lambda lab: lab.number))


def get_lab(name: str) -> Lab:
    for lab in all_labs():
        if name in (lab.name, str(lab.number)):
            return lab
    raise InputError(f"no lab named {name!r}; `cudalens lab list` shows them")


def run_lab(lab: Lab, runner: Any, quick: bool = False) -> LabResult:
    """Measure, judge and predict one lab. A failure becomes a result with status "error"."""
    device = device_dict(runner.info)
    if runner.info.cc_tuple < lab.min_cc:
        return LabResult(lab.name, "skipped", device=device,
                         message=f"needs compute capability >= {lab.min_cc[0]}.{lab.min_cc[1]}")
    t0 = time.perf_counter()
    try:
        measured = lab.measure(runner, quick)
        verdict = lab.verdict(measured.rows, measured.params)
        predictions = lab.predict(measured.rows, measured.params) if lab.predict else ()
    except Exception as exc:  # noqa: BLE001 - one lab's failure must not stop the others
        return LabResult(lab.name, "error", device=device, message=f"{type(exc).__name__}: {exc}",
                         seconds=time.perf_counter() - t0)
    finally:
        try:
            runner.release()
        except Exception:  # noqa: BLE001
            pass
    return LabResult(lab.name, "ok", measured.rows, dict(measured.params), verdict, predictions,
                     measured.notes, device=device, seconds=time.perf_counter() - t0)


def write_result(lab: Lab, result: LabResult, out_dir: str | Path, plot: bool = True) -> list[Path]:
    """Write <out>/<name>.json (and <name>.png when the lab has rows). Returns the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"{lab.name}.json"]
    paths[0].write_text(json.dumps(result.to_dict(lab), indent=2) + "\n", encoding="utf-8")
    if plot and result.rows and lab.plot is not None:
        from cudalens.labs.plot import plot_result
        png = out / f"{lab.name}.png"
        plot_result(lab, result, png)
        paths.append(png)
    return paths
