"""Child-process entry of an isolated measurement: ``python -m cudalens.measure.worker REQUEST RESULT``.

REQUEST is a JSON file with the fields of :func:`cudalens.measure.harness.bench_kernel`::

    {"source": "<CUDA C++ text>", "origin": "file.cu", "kernel": "name",
     "grid": [g, 1, 1], "block": [b, 1, 1], "shared_mem": 0, "args": ["float32[1024]:rand", ...],
     "mode": "cold" | "hot", "batch": null, "defines": {}, "bytes_read": null, "bytes_written": null,
     "flops": 0, "policy": {SamplingPolicy fields}, "device": 0}

RESULT receives ``{"ok": true, "result": BenchResult dict}`` or ``{"ok": false, "error_type":
"CudaCallError", "message": "..."}``. The exit status is 0 on success and 3 on a reported error.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any


def run_request(req: dict[str, Any]) -> dict[str, Any]:
    """Run one bench request in this process and return the result dict."""
    from cudalens.measure.argspec import parse_args  # noqa: PLC0415
    from cudalens.measure.harness import bench_kernel  # noqa: PLC0415
    from cudalens.measure.sampling import SamplingPolicy  # noqa: PLC0415
    from cudalens.measure.throughput import Ceilings  # noqa: PLC0415

    ceilings = Ceilings(**req["ceilings"]) if req.get("ceilings") else None
    result = bench_kernel(
        req["source"], req["kernel"], tuple(req["grid"]), tuple(req["block"]), parse_args(req["args"]),
        int(req.get("shared_mem", 0)), defines=req.get("defines") or None, mode=req.get("mode", "cold"),
        batch=req.get("batch"), bytes_read=req.get("bytes_read"), bytes_written=req.get("bytes_written"),
        flops=float(req.get("flops") or 0.0), ceilings=ceilings,
        policy=SamplingPolicy(**req["policy"]) if req.get("policy") else None, device=int(req.get("device", 0)),
        timer=req.get("timer", "events"), options=tuple(req.get("options") or ()), roles=req.get("roles"),
        rotate=int(req.get("rotate", 1)), **dict(req.get("switches") or {}),
    )
    d = result.to_dict()
    d["config"]["source"] = req.get("origin", d["config"].get("source"))
    return d


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m cudalens.measure.worker REQUEST.json RESULT.json", file=sys.stderr)
        return 2
    req_path, res_path = argv
    with open(req_path, encoding="utf-8") as fh:
        req = json.load(fh)
    try:
        payload: dict[str, Any] = {"ok": True, "result": run_request(req)}
        code = 0
    except Exception as exc:  # noqa: BLE001 - everything is reported to the parent, which decides
        payload = {"ok": False, "error_type": type(exc).__name__, "message": str(exc) or type(exc).__name__}
        code = 3
    tmp = res_path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(payload, fh)
    os.replace(tmp, res_path)  # the parent never sees half a file
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
