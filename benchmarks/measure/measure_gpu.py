"""GPU acceptance of cudalens.measure (run on an H100 by the lead; < 5 min; never changes clocks).

Usage (from the repository root):  PYTHONPATH=src python benchmarks/measure/measure_gpu.py [OUTDIR]
OUTDIR defaults to $OUT. Writes measure_accuracy.json, measure_stability.json, measure_ceilings.json,
measure_peers.json, measure_isolation.json and measure_all.json (everything, with device, driver,
CUDA version, date and command), then prints a summary table.

(a) accuracy: harness median (cold: L2 flushed; timer "events": the event interval less the event
    floor) vs Nsight Compute gpu__time_duration median, clock control off (ncu leaves the clocks
    alone, as the harness does), for kernels from 5 us to 50 ms. Two ncu references:
      same  the launches the harness times: its own L2 flush kernel before every launch, ncu's
            cache control off (--cache-control none) - the target, |ratio - 1| <= 2 %;
      all   ncu's default --cache-control all (also invalidates instruction and constant caches),
            without the harness's flush - shown beside it.
    The raw event interval (timer "events-raw") is kept beside each median.
(b) stability: 5 harness runs of a ~100 us kernel; spread of the medians, target <= 1 %.
(c) ceilings: our 16-byte copy kernel vs cuMemcpyDtoDAsync vs torch.clone, same run; theoretical
    bandwidth stated; target: ours >= 95 % of the better of the other two.
(d) peers: the same launches timed by triton.testing.do_bench, cupyx.profiler.benchmark and
    cuda-bench (NVBench) when importable: medians, samples used, distance to ncu.
(e) isolation: a faulting and a hanging kernel through the isolated runner; both reported.
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
import subprocess
import sys
import time
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = os.path.join(HERE, "measure_kernels.cu")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "src"))

from cudalens.compiled.runtime_compile import compile_kernel  # noqa: E402
from cudalens.errors import InputError  # noqa: E402
from cudalens.hardware import cuda_driver as cu  # noqa: E402
from cudalens.measure.argspec import materialize, parse_args  # noqa: E402
from cudalens.measure.harness import _StreamRef, bench, bench_kernel, device_info  # noqa: E402
from cudalens.measure.isolate import run_isolated  # noqa: E402
from cudalens.profile.ncu import parse_csv  # noqa: E402

T0 = time.monotonic()
POLICY = dict(max_time_s=3.0, min_time_s=0.5)
NCU_LAUNCHES = 10


def _configs(sm_count: int) -> list[dict]:
    blocks = sm_count * 8
    cfg = []
    for label, n in (("scale 1M", 1 << 20), ("scale 2M", 1 << 21), ("scale 4M", 1 << 22), ("scale 16M", 1 << 24),
                     ("scale 64M", 1 << 26)):
        cfg.append({"label": label, "kernel": "scale", "grid": [(n + 255) // 256, 1, 1], "block": [256, 1, 1],
                    "args": [f"float32[{n}]:rand", f"float32[{n}]:zeros", "float32=2", f"int32={n}"]})
    for label, iters in (("compute ~0.6ms", 60_000), ("compute ~6ms", 600_000), ("compute ~45ms", 4_400_000)):
        cfg.append({"label": label, "kernel": "compute_loop", "grid": [blocks, 1, 1], "block": [256, 1, 1],
                    "args": [f"float32[{blocks * 256}]:zeros", f"int32={iters}"]})
    return cfg


class Prepared:
    """One kernel with device buffers, launchable on the legacy default stream (what peers time)."""

    def __init__(self, ctx, cfg, kernels):
        name = cfg["kernel"]
        if name not in kernels:
            kernels[name] = compile_kernel(open(KERNELS).read(), name, ctx.cc, options=())
        self.kernel, self.grid, self.block = kernels[name], tuple(cfg["grid"]), tuple(cfg["block"])
        self.bufs, self.packed = [], []
        rng = np.random.default_rng(0)
        for spec in parse_args(cfg["args"]):
            v = materialize(spec, rng)
            if spec.kind == "array":
                b = cu.DeviceBuffer(v.nbytes)
                cu.check(cu._driver().cuMemcpyHtoD(b.ptr, v.ctypes.data, v.nbytes), "cuMemcpyHtoD")
                self.bufs.append(b)
                self.packed.append((b.ptr, "u8"))
            else:
                self.packed.append((v, v.dtype.str))
        self.stream = _StreamRef(cu._driver().CUstream(0))

    def __call__(self):
        cu.launch(self.kernel, self.grid, self.block, self.packed, self.stream)

    def launch_on(self, stream_handle: int):
        """Launch on another stream (NVBench hands each launch its own stream)."""
        cu.launch(self.kernel, self.grid, self.block, self.packed, _StreamRef(cu._driver().CUstream(stream_handle)))

    def close(self):
        for b in self.bufs:
            b.close()


def run_ncu(configs, out_dir, state="same", launches=NCU_LAUNCHES):
    """ncu's gpu__time_duration of ``launches`` launches per config, clock control off. ``state``:
    "same" (the harness's flush before every launch, ncu's cache control off: the launches the
    harness times in cold mode), "all" (ncu's default cache control) or "hot" (neither)."""
    ncu = shutil.which("ncu")
    if ncu is None:
        return {"available": False, "reason": "ncu not on PATH"}
    plan = os.path.join(out_dir, f"ncu_plan_{state}.json")
    json.dump({"source": KERNELS, "launches": launches, "configs": configs, "flush": state == "same"},
              open(plan, "w"))
    log = os.path.join(out_dir, f"ncu_raw_{state}.csv")
    names = "|".join(sorted({c["kernel"] for c in configs}))
    cmd = [ncu, "--metrics", "gpu__time_duration.sum", "--csv", "--page", "raw", "--print-units", "base",
           "--cache-control", "all" if state == "all" else "none", "--clock-control", "none",
           "-k", f"regex:^({names})$",
           "--log-file", log, sys.executable, os.path.join(HERE, "_ncu_driver.py"), plan]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(os.path.dirname(os.path.dirname(HERE)), "src"),
                                                         os.environ.get("PYTHONPATH", "")]))
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=200, env=env)
    except subprocess.TimeoutExpired:
        return {"available": True, "ok": False, "reason": "ncu timed out after 200 s", "command": cmd}
    res = {"available": True, "command": " ".join(cmd), "returncode": p.returncode,
           "stderr_tail": p.stderr[-2000:], "stdout_tail": p.stdout[-2000:]}
    try:
        rows = parse_csv(open(log).read() if os.path.exists(log) else p.stdout, source=log)
    except InputError:
        rows = ()
    times = [lc.metrics["gpu__time_duration.sum"] * 1e-9 for lc in rows  # base unit: ns
             if lc.metrics.get("gpu__time_duration.sum") is not None]
    res["ok"] = p.returncode == 0 and len(times) == launches * len(configs)
    res["per_config_s"] = [times[i * launches:(i + 1) * launches] for i in range(len(configs))]
    res["medians_s"] = [float(np.median(x)) if x else None for x in res["per_config_s"]]
    return res


def cuda_bench_peer(cfg, out_dir):
    """NVBench's Python package (cuda-bench) on the same launch, in a child process (its benchmark
    registry is global). NVBench reports the mean GPU time of its cold samples, not a median."""
    try:
        import cuda.bench  # noqa: F401, PLC0415
    except Exception as exc:  # noqa: BLE001
        return {"error": f"not available ({type(exc).__name__})"}
    tag = cfg["label"].replace(" ", "_").replace("~", "")
    cfg_path = os.path.join(out_dir, f"cuda_bench_{tag}_config.json")
    out_path = os.path.join(out_dir, f"cuda_bench_{tag}.json")
    json.dump(cfg, open(cfg_path, "w"))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(os.path.dirname(os.path.dirname(HERE)), "src"),
                                                         os.environ.get("PYTHONPATH", "")]))
    try:
        p = subprocess.run([sys.executable, os.path.join(HERE, "_cuda_bench_driver.py"), cfg_path, out_path],
                           capture_output=True, text=True, timeout=120, env=env)
    except subprocess.TimeoutExpired:
        return {"error": "cuda-bench did not finish in 120 s"}
    if p.returncode != 0 or not os.path.exists(out_path):
        return {"error": f"cuda-bench exit {p.returncode}: {(p.stderr or p.stdout)[-300:]}"}
    summaries = {}
    for bench_ in json.load(open(out_path)).get("benchmarks", []):
        for state in bench_.get("states", []):
            for summ in state.get("summaries", []):
                for datum in summ.get("data", []):
                    if datum.get("name") == "value":
                        try:
                            summaries[summ.get("tag")] = float(datum["value"])
                        except (TypeError, ValueError):
                            summaries[summ.get("tag")] = datum["value"]
    mean = summaries.get("nv/cold/time/gpu/mean")
    samples = summaries.get("nv/cold/sample_size")
    if mean is None:
        return {"error": "no nv/cold/time/gpu/mean in cuda-bench's JSON", "summaries": summaries}
    return {"median_s": mean, "samples": int(samples or 0), "statistic": "mean (NVBench reports no median)",
            "summaries": summaries}


def peers(prepared: Prepared, ncu_median, cfg=None, out_dir="."):
    out = {}
    r = bench(prepared, stream=0, mode="cold", **POLICY)
    out["cudalens"] = {"median_s": r.summary.median, "samples": len(r.samples), "timer": r.config.get("timer")}
    try:
        import triton.testing as tt  # noqa: PLC0415

        ms = tt.do_bench(prepared, return_mode="median")
        out["triton.do_bench"] = {"median_s": ms * 1e-3, "samples": max(1, int(100 / ms)),
                                  "note": "samples estimated as rep(100 ms)/time, do_bench's own rule"}
    except Exception as exc:  # noqa: BLE001
        out["triton.do_bench"] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
    try:
        from cupyx.profiler import benchmark  # noqa: PLC0415

        def launch_once() -> None:  # cupyx reads the callable's __name__
            prepared()

        pr = benchmark(launch_once, n_repeat=10_000, n_warmup=10, max_duration=2.0)
        g = np.asarray(pr.gpu_times)[0]
        out["cupyx.benchmark"] = {"median_s": float(np.median(g)), "samples": int(g.size),
                                  "note": "no L2 flush (hot); stops at max_duration=2 s"}
    except Exception as exc:  # noqa: BLE001
        out["cupyx.benchmark"] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
    out["cuda-bench"] = cuda_bench_peer(cfg, out_dir)
    for v in out.values():
        if ncu_median and "median_s" in v:
            v["ratio_to_ncu"] = v["median_s"] / ncu_median
    return out


def main() -> int:
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OUT", "measure_out")
    os.makedirs(out_dir, exist_ok=True)
    everything = {"command": " ".join([sys.executable] + sys.argv),
                  "date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat()}
    summary = []
    with cu.device_context(0) as ctx:
        info = device_info(0)
        everything["device"] = info.to_dict()
        configs = _configs(info.sm_count)

        # (a) accuracy
        acc = {"configs": configs, "harness": [],
               "target": "|harness/ncu - 1| <= 2 % against ncu of the same launches (flush, cache control off)"}
        for cfg in configs:
            try:
                r = bench_kernel(KERNELS, cfg["kernel"], tuple(cfg["grid"]), tuple(cfg["block"]),
                                 parse_args(cfg["args"]), mode="cold", **POLICY)
                events = [s.event_seconds for s in r.samples if s.event_seconds is not None and not s.throttled]
                acc["harness"].append({"label": cfg["label"], "median_s": r.summary.median,
                                       "timer": r.config.get("timer"), "event_floor_s": r.config.get("event_floor_s"),
                                       "event_median_s": float(np.median(events)) if events else None,
                                       "rel_stdev": r.summary.rel_stdev, "samples": len(r.samples),
                                       "throttled": r.throttled_count, "stop": r.stop_reason,
                                       "ci": [r.summary.ci_low, r.summary.ci_high]})
            except Exception as exc:  # noqa: BLE001
                acc["harness"].append({"label": cfg["label"], "error": f"{type(exc).__name__}: {exc}"})
        acc["ncu"] = run_ncu(configs, out_dir, "same")
        acc["ncu_default_cache_control"] = run_ncu(configs, out_dir, "all")
        for i, h in enumerate(acc["harness"]):
            nm = (acc["ncu"].get("medians_s") or [None] * len(configs))[i]
            na = (acc["ncu_default_cache_control"].get("medians_s") or [None] * len(configs))[i]
            if nm and "median_s" in h:
                h["ncu_median_s"] = nm
                h["ratio"] = h["median_s"] / nm
                h["within_2pct"] = abs(h["ratio"] - 1) <= 0.02
                if h.get("event_median_s"):
                    h["raw_event_ratio"] = h["event_median_s"] / nm
                if na:
                    h["ncu_default_median_s"] = na
                    h["ratio_to_ncu_default"] = h["median_s"] / na
            summary.append(("a accuracy " + h["label"], f"{h.get('median_s', float('nan')) * 1e6:.2f} us",
                            (f"ncu {nm * 1e6:.2f} us, ratio {h['ratio']:.4f} (raw events {h.get('raw_event_ratio', 0):.4f}"
                             f"; vs ncu default {h.get('ratio_to_ncu_default', 0):.4f})")
                            if "ratio" in h else h.get("error", "no ncu")))
        json.dump(acc, open(os.path.join(out_dir, "measure_accuracy.json"), "w"), indent=2)
        everything["accuracy"] = acc

        # (b) stability: scale of 32M floats (256 MB moved), about 100 us on an H100
        n = 1 << 25
        stab = {"kernel": "scale", "n": n, "runs": []}
        for _ in range(5):
            r = bench_kernel(KERNELS, "scale", ((n + 255) // 256,), (256,),
                             parse_args([f"float32[{n}]:ones", f"float32[{n}]:zeros", "float32=2", f"int32={n}"]),
                             mode="cold", **POLICY)
            stab["runs"].append({"median_s": r.summary.median, "samples": len(r.samples), "stop": r.stop_reason})
        meds = [x["median_s"] for x in stab["runs"]]
        stab["spread"] = (max(meds) - min(meds)) / float(np.mean(meds))
        stab["within_1pct"] = stab["spread"] <= 0.01
        json.dump(stab, open(os.path.join(out_dir, "measure_stability.json"), "w"), indent=2)
        everything["stability"] = stab
        summary.append(("b stability 5 runs", f"{np.mean(meds) * 1e6:.2f} us", f"spread {stab['spread'] * 100:.3f} %"))

        # (c) ceilings
        nbytes = 1 << 30
        ceil = {"bytes": nbytes, "theoretical_gbs": info.theoretical_bandwidth_gbs, "bandwidth_gbs": {}}
        # cudalens' own copy kernel (the one `cudalens bandwidth` uses), timed by the harness
        from cudalens.measure.bandwidth import COPY_KERNEL_SOURCE, copy_grid  # noqa: PLC0415

        r = bench_kernel(COPY_KERNEL_SOURCE, "cudalens_copy", (copy_grid(nbytes, 512),), (512,),
                         parse_args([f"uint8[{nbytes}]:ones@in", f"uint8[{nbytes}]:empty@out",
                                     f"uint64={nbytes}"]), mode="cold", **POLICY)
        ceil["bandwidth_gbs"]["cudalens copy kernel"] = 2 * nbytes / 1e9 / r.summary.median
        try:
            from cudalens.measure.bandwidth import copy_kernel_bandwidth  # noqa: PLC0415

            bw = copy_kernel_bandwidth(nbytes)
            ceil["measure.bandwidth"] = bw.to_dict() if hasattr(bw, "to_dict") else repr(bw)
        except Exception as exc:  # noqa: BLE001
            ceil["measure.bandwidth"] = f"not usable: {type(exc).__name__}: {exc}"[:300]
        src, dst = cu.DeviceBuffer(nbytes), cu.DeviceBuffer(nbytes)
        drv = cu._driver()
        memcpy = lambda: cu.check(drv.cuMemcpyDtoDAsync(dst.ptr, src.ptr, nbytes, drv.CUstream(0)), "cuMemcpyDtoDAsync")  # noqa: E731
        r = bench(memcpy, stream=0, mode="cold", **POLICY)
        ceil["bandwidth_gbs"]["cuMemcpyDtoDAsync"] = 2 * nbytes / 1e9 / r.summary.median
        src.close(), dst.close()
        try:
            import torch  # noqa: PLC0415

            t = torch.ones(nbytes // 4, device="cuda")
            r = bench(lambda: t.clone(), stream=torch.cuda.current_stream(), mode="cold", **POLICY)
            ceil["bandwidth_gbs"]["torch.clone"] = 2 * nbytes / 1e9 / r.summary.median
            del t
            torch.cuda.empty_cache()
        except Exception as exc:  # noqa: BLE001
            ceil["torch.clone"] = f"not usable: {type(exc).__name__}: {exc}"[:300]
        others = [v for k, v in ceil["bandwidth_gbs"].items() if k != "cudalens copy kernel"]
        ceil["ours_vs_best_other"] = ceil["bandwidth_gbs"]["cudalens copy kernel"] / max(others) if others else None
        ceil["pct_of_theoretical"] = {k: 100 * v / info.theoretical_bandwidth_gbs
                                      for k, v in ceil["bandwidth_gbs"].items()} if info.theoretical_bandwidth_gbs else None
        json.dump(ceil, open(os.path.join(out_dir, "measure_ceilings.json"), "w"), indent=2)
        everything["ceilings"] = ceil
        for k, v in ceil["bandwidth_gbs"].items():
            summary.append((f"c ceiling {k}", f"{v:.1f} GB/s",
                            f"{100 * v / info.theoretical_bandwidth_gbs:.1f} % of {info.theoretical_bandwidth_gbs:.0f} GB/s theoretical"))

        # (d) peers on the four shortest configs (time budget)
        peer = {"rows": []}
        kernels = {}
        ncu_meds = acc["ncu"].get("medians_s") or [None] * len(configs)
        for i, cfg in [(j, configs[j]) for j in (0, 1, 3, 4, 6)]:
            p = Prepared(ctx, cfg, kernels)
            try:
                row = {"label": cfg["label"], "ncu_median_s": ncu_meds[i], "tools": peers(p, ncu_meds[i], cfg, out_dir)}
            except Exception as exc:  # noqa: BLE001
                row = {"label": cfg["label"], "error": f"{type(exc).__name__}: {exc}"}
            p.close()
            peer["rows"].append(row)
            for tool, v in row.get("tools", {}).items():
                if "median_s" in v:
                    summary.append((f"d {cfg['label']} {tool}", f"{v['median_s'] * 1e6:.2f} us",
                                    f"{v['samples']} samples" + (f", ratio to ncu {v['ratio_to_ncu']:.4f}" if "ratio_to_ncu" in v else "")))
        json.dump(peer, open(os.path.join(out_dir, "measure_peers.json"), "w"), indent=2)
        everything["peers"] = peer

    # (e) isolation, outside the context (the children have their own)
    iso = {}
    src_text = open(KERNELS).read()
    base = {"source": src_text, "grid": [1, 1, 1], "block": [32, 1, 1], "mode": "cold",
            "policy": {"max_time_s": 1.0, "min_time_s": 0.1}}
    for name, args, timeout in (("fault", ["float32[32]"], 60), ("spin", ["int32[1]:zeros"], 10)):
        t = time.monotonic()
        try:
            run_isolated(dict(base, kernel=name, args=args), timeout_s=timeout)
            iso[name] = {"reported": False, "message": "completed?!"}
        except Exception as exc:  # noqa: BLE001
            iso[name] = {"reported": True, "error_type": type(exc).__name__, "message": str(exc)[:500]}
        iso[name]["seconds"] = time.monotonic() - t
        summary.append((f"e isolation {name}", iso[name].get("error_type", "-"), iso[name]["message"][:70]))
    json.dump(iso, open(os.path.join(out_dir, "measure_isolation.json"), "w"), indent=2)
    everything["isolation"] = iso
    everything["elapsed_s"] = time.monotonic() - T0
    json.dump(everything, open(os.path.join(out_dir, "measure_all.json"), "w"), indent=2)

    print(f"\n{'item':<40} {'value':>14}  detail")
    for a, b, c in summary:
        print(f"{a:<40} {b:>14}  {c}")
    print(f"elapsed {everything['elapsed_s']:.1f} s; results in {out_dir}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception:  # noqa: BLE001
        traceback.print_exc()
        sys.exit(1)
