#!/usr/bin/env python3
"""GPU acceptance for the hardware model and the bandwidth test.

Writes to OUTDIR (argument, default $OUT):
  device.json     the live device report (cuda.bindings attributes + NVML), with theoretical
                  memory (BPG 8.2.1) and PCIe bandwidth
  bandwidth.json  the full bandwidth shmoo (1 KiB .. 1 GiB): pageable/pinned H2D and D2H,
                  D2D by cuMemcpyDtoDAsync and by the NVRTC copy kernel, every sample kept
Both carry the device name, driver, CUDA version, date and the command. A summary table is
printed last. Never changes clocks or power limits. Takes well under 2 minutes on an H100.

Run from the repository root:  PYTHONPATH=src python benchmarks/measure/device_gpu.py "$OUT"
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import sys
import time


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", nargs="?", default=os.environ.get("OUT"),
                        help="output folder (default: $OUT)")
    parser.add_argument("--device", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args(argv)
    if not args.outdir:
        parser.error("give an output folder or set $OUT")
    os.makedirs(args.outdir, exist_ok=True)

    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    from cudalens.cli.bandwidth import result_renderable
    from cudalens.cli.device import report_renderable
    from cudalens.errors import CudalensError
    from cudalens.hardware.live import query_device
    from cudalens.measure import bandwidth as bw

    console = Console(width=160)
    meta = {
        "command": " ".join([sys.executable, *sys.argv]),
        "date_utc": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "host": platform.node(),
        "python": platform.python_version(),
    }
    t0 = time.perf_counter()
    try:
        report = query_device(args.device)
        meta.update(device=report.name, cc=report.cc,
                    driver=report.value("driver_version"),
                    cuda_driver_api=report.cuda_driver_version)
        with open(os.path.join(args.outdir, "device.json"), "w") as fh:
            json.dump({"meta": meta, "report": report.to_dict()}, fh, indent=2)
        console.print(report_renderable(report))

        with Progress(TextColumn("{task.description}"), BarColumn(),
                      TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(),
                      console=Console(stderr=True), transient=True) as progress:
            task = progress.add_task("bandwidth", total=None)
            result = bw.run_bandwidth(
                args.device, bw.default_sizes(), bw.TEST_KEYS, repeats=args.repeats,
                report=report,
                progress=lambda d, t, label: progress.update(task, completed=d, total=t,
                                                             description=label))
    except CudalensError as exc:
        print(f"device_gpu: error: {exc}", file=sys.stderr)
        return 2
    meta["wall_s"] = round(time.perf_counter() - t0, 1)
    with open(os.path.join(args.outdir, "bandwidth.json"), "w") as fh:
        json.dump({"meta": meta, "result": result.to_dict()}, fh, indent=2)
    console.print(result_renderable(result))

    summary = Table(title=f"device_gpu summary: {report.name} (CC {report.cc}), "
                          f"driver {meta['driver']}, CUDA {report.cuda_driver_version}")
    summary.add_column("quantity")
    summary.add_column("value", justify="right")
    mb = report.memory_bandwidth
    summary.add_row("theoretical DRAM (BPG 8.2.1)", f"{mb.gb_per_s:,.1f} GB/s" if mb else "null")
    link = report.pcie_max or report.pcie_current
    summary.add_row(f"theoretical {result.pcie_link or 'PCIe'}",
                    f"{link.gb_per_s:,.2f} GB/s per direction" if link else "null")
    for t in bw.TESTS:
        best = result.best(t.key)
        if best is not None:
            pct = (f" ({best.percent_of_reference:.1f} % of theoretical)"
                   if best.percent_of_reference is not None else "")
            summary.add_row(f"best {t.key} ({bw.size_text(best.nbytes)})",
                            f"{best.gb_per_s:,.2f} GB/s{pct}")
    summary.add_row("copy kernel output verified", str((result.kernel or {}).get("verified")))
    summary.add_row("wall time", f"{meta['wall_s']} s")
    summary.add_row("files", f"{args.outdir}/device.json, {args.outdir}/bandwidth.json")
    console.print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
