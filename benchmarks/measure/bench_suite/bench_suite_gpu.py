"""#17 on a GPU: named public kernels vs ncu, the adversarial suite vs peers, short kernels.

Usage (repository root, GPU machine): python3 benchmarks/measure/bench_suite/bench_suite_gpu.py OUTDIR [STEP...]
steps: named l2sweep adversarial short (default: all). Each writes OUTDIR/<step>.json.
ncu always runs with --clock-control none and --cache-control none (the harness's own flush gives
the cache state).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "src"))

from cudalens.hardware import cuda_driver as cu  # noqa: E402
from cudalens.measure.argspec import parse_args  # noqa: E402
from cudalens.measure.harness import bench, bench_kernel  # noqa: E402
from cudalens.measure.kernels import BuildContext, compile_named  # noqa: E402
from cudalens.profile.ncu import parse_csv  # noqa: E402

POLICY = dict(noise_target=0.005, min_samples=20, min_time_s=0.3, max_time_s=2.0)
NCU_LAUNCHES = 10


def env_with_src():
    return dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(ROOT, "src"), HERE,
                                                         os.environ.get("PYTHONPATH", "")]))


def run_ncu(configs, symbols, out_dir, state):
    ncu = shutil.which("ncu")
    if ncu is None:
        return {"available": False}
    os.makedirs(os.path.join(out_dir, "ncu"), exist_ok=True)
    plan = os.path.join(out_dir, "ncu", f"ncu_plan_{state}.json")
    json.dump({"launches": NCU_LAUNCHES, "state": state, "configs": configs}, open(plan, "w"))
    log = os.path.join(out_dir, "ncu", f"ncu_{state}_{len(configs)}.csv")
    cmd = [ncu, "--metrics", "gpu__time_duration.sum", "--csv", "--page", "raw", "--print-units", "base",
           "--cache-control", "none", "--clock-control", "none", "--kernel-name-base", "mangled",
           "-k", "regex:^(" + "|".join(sorted(set(symbols))) + ")$", "--log-file", log,
           sys.executable, os.path.join(HERE, "_named_ncu_driver.py"), plan]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=400, env=env_with_src())
    rows = parse_csv(open(log).read(), source=log) if os.path.exists(log) else ()
    times = [lc.metrics["gpu__time_duration.sum"] * 1e-9 for lc in rows
             if lc.metrics.get("gpu__time_duration.sum") is not None]
    ok = len(times) == NCU_LAUNCHES * len(configs)
    per = [times[i * NCU_LAUNCHES:(i + 1) * NCU_LAUNCHES] for i in range(len(configs))] if ok else []
    return {"available": True, "ok": ok, "returncode": p.returncode, "n_times": len(times),
            "stderr_tail": p.stderr[-1500:], "command": " ".join(cmd),
            "medians_s": [float(np.median(x)) for x in per], "per_config_s": per}


def step_named(out_dir):
    from named_kernels import COMMON, NAMED  # noqa: PLC0415

    rows, symbols, cfgs = [], [], []
    with cu.device_context(0) as ctx:
        cc = ctx.cc
    build = BuildContext(include_dirs=(COMMON,))
    compiled, compile_s = {}, {}
    for cfg in NAMED:  # one compilation per file, all of its kernels by name
        if cfg["file"] not in compiled:
            names = [c["kernel"] for c in NAMED if c["file"] == cfg["file"]]
            t0 = time.time()
            try:
                compiled[cfg["file"]] = compile_named(open(cfg["file"]).read(), names, cc, origin=cfg["file"], build=build)
            except Exception as exc:  # noqa: BLE001
                compiled[cfg["file"]] = exc
            compile_s[cfg["file"]] = time.time() - t0
    cubin_dir = "/tmp/cudalens_named_cubins"
    os.makedirs(cubin_dir, exist_ok=True)
    for i, cfg in enumerate(NAMED):
        comp = compiled[cfg["file"]]
        t0 = time.time()
        try:
            if isinstance(comp, Exception):
                raise comp
            r = bench_kernel(cfg["file"], cfg["kernel"], tuple(cfg["grid"]), tuple(cfg["block"]), parse_args(cfg["args"]),
                             cfg["smem"], compiled=comp, mode="cold", **POLICY)
            d = r.to_dict()
            d.pop("samples")
            rows.append({"kernel": cfg["kernel"], "file": cfg["file"].split("Samples/")[-1], "symbol": comp.symbol(cfg["kernel"]),
                         "compiler": comp.compiler, "compile_s": compile_s[cfg["file"]], "median_s": r.summary.median,
                         "rel_stdev": r.summary.rel_stdev, "samples": r.summary.n, "verdict": r.certificate["verdict"],
                         "reasons": r.certificate["reasons"], "result": d, "seconds": time.time() - t0})
            path = os.path.join(cubin_dir, f"k{i}.cubin")
            open(path, "wb").write(comp.cubin)
            symbols.append(comp.symbol(cfg["kernel"]))
            cfgs.append(dict(cfg, cubin=path, symbol=comp.symbol(cfg["kernel"])))
        except Exception as exc:  # noqa: BLE001
            rows.append({"kernel": cfg["kernel"], "error": f"{type(exc).__name__}: {exc}"[:1500],
                         "trace": traceback.format_exc()[-1500:]})
        print(rows[-1].get("kernel"), rows[-1].get("median_s"), rows[-1].get("error", "")[:300], flush=True)
    ncu = run_ncu(cfgs, symbols, out_dir, "cold") if cfgs else {"ok": False}
    ok_rows = [r for r in rows if "median_s" in r]
    if ncu.get("ok"):
        for r, m in zip(ok_rows, ncu["medians_s"]):
            r["ncu_median_s"] = m
            r["ratio_to_ncu"] = r["median_s"] / m
            r["within_2pct"] = abs(r["ratio_to_ncu"] - 1) <= 0.02
    for r in rows:
        print(f"{r['kernel']:32s} {r.get('median_s', 0) * 1e6:10.2f} us  ncu {r.get('ncu_median_s', 0) * 1e6:10.2f} us  "
              f"ratio {r.get('ratio_to_ncu', float('nan')):.4f}  {r.get('verdict', r.get('error', ''))[:80]}", flush=True)
    return {"rows": rows, "ncu": {k: v for k, v in ncu.items() if k != "per_config_s"}, "ncu_per_config_s": ncu.get("per_config_s")}


def _brief(r):
    c = r.certificate
    return {"median_s": r.summary.median, "samples": len(r.samples), "kept": r.summary.n, "verdict": c["verdict"],
            "reasons": c["reasons"], "checks": {k: {kk: vv for kk, vv in v.items() if kk in ("checked", "ok", "reason",
                                                                                             "windows_found", "untrusted_samples", "ratio",
                                                                                             "found", "other_devices", "note")}
                                                for k, v in c["checks"].items()}, "notes": list(r.notes)}


CHECKS_OFF = {"recheck": False, "reset_persisting": False, "speed_of_light": False, "detect_side_work": False}


def _peers(adv, naive_launches=200):
    """The same adversary through triton.testing.do_bench (median; it zeroes a 256 MB buffer before
    each call), do_bench_cudagraph (a CUDA graph of back-to-back calls, no cache clearing: hot) and
    a naive hot loop (torch events around ``naive_launches`` back-to-back calls, no flush)."""
    out = {}
    try:
        import torch  # noqa: PLC0415
        import triton.testing as tt  # noqa: PLC0415
    except Exception as exc:  # noqa: BLE001
        return {"triton_do_bench": {"error": f"{type(exc).__name__}: {exc}"[:300]}}
    ts = torch.cuda.Stream()
    cur = lambda: adv.run(torch.cuda.current_stream().cuda_stream)  # noqa: E731
    for label, run in (
            ("triton_do_bench", lambda: tt.do_bench(cur, return_mode="median")),
            ("triton_do_bench_cudagraph", lambda: tt.do_bench_cudagraph(cur, return_mode="median")),
            ("naive_hot_loop", lambda: _naive_loop(torch, cur, naive_launches))):
        adv.reset()
        try:
            with torch.cuda.stream(ts):
                ms = run()
            torch.cuda.synchronize()
            out[label] = {"median_s": ms * 1e-3}
        except Exception as exc:  # noqa: BLE001
            out[label] = {"error": f"{type(exc).__name__}: {exc}"[:600]}
            try:
                torch.cuda.synchronize()
            except Exception:  # noqa: BLE001
                pass
    return out


def _naive_loop(torch, fn, launches):
    """What many scripts do: warm up, then events around a loop of launches; median of 5 loops (ms)."""
    for _ in range(10):
        fn()
    times = []
    for _ in range(5):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(launches):
            fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) / launches)
    return float(np.median(times))


def step_l2sweep(out_dir):
    """The L2-resident adversary over working sets of 4-48 MiB: hot (cudalens default and with the
    checks off), cold, and do_bench_cudagraph (hot), against the DRAM floor. Sets ADV_L2_MB for the
    adversarial step: the largest size whose hot time is below 0.9 x floor (else 24)."""
    import adversaries as A  # noqa: PLC0415

    rows, pol = [], dict(POLICY, max_time_s=1.0, min_time_s=0.2)
    with cu.device_context(0) as ctx:
        mod = A.Module(ctx.cc)
        stream = cu.Stream()
        h = int(stream.handle)
        for mb in (4, 8, 12, 16, 20, 24, 28, 32, 40, 48):
            adv = A.L2Resident(mod, mb * 2**20 // 4)
            row = {"mib": mb, "bytes": adv.bytes_read + adv.bytes_written,
                   "dram_floor_s": (adv.bytes_read + adv.bytes_written) / 3352.3e9}
            kw = dict(stream=h, outputs=adv.outputs, bytes_read=adv.bytes_read, bytes_written=adv.bytes_written,
                      name=f"l2-resident-{mb}MiB", **pol)
            for label, extra in (("hot", {}), ("hot_checks_off", CHECKS_OFF), ("cold", {"mode": "cold"})):
                try:
                    row[label] = _brief(bench(lambda adv=adv: adv.run(h), **kw, **extra))
                except Exception as exc:  # noqa: BLE001
                    row[label] = {"error": f"{type(exc).__name__}: {exc}"[:600]}
            row.update({k: v for k, v in _peers(adv).items() if k == "triton_do_bench_cudagraph"})
            for label in ("hot", "hot_checks_off", "cold", "triton_do_bench_cudagraph"):
                if "median_s" in row.get(label, {}):
                    row[label]["ratio_to_floor"] = row[label]["median_s"] / row["dram_floor_s"]
            rows.append(row)
            cu.check(cu._driver().cuCtxSynchronize(), "sync")
            adv.close()
            print(f"l2 {mb:3d} MiB floor {row['dram_floor_s'] * 1e6:6.2f} us",
                  {k: (round(v.get("median_s", 0) * 1e6, 2), round(v.get("ratio_to_floor", 0), 3), v.get("verdict"))
                   for k, v in row.items() if isinstance(v, dict)}, flush=True)
        stream.close()
    fast = [r["mib"] for r in rows if r.get("hot_checks_off", {}).get("ratio_to_floor", 9) < 0.9]
    chosen = max(fast) if fast else 24
    os.environ["ADV_L2_MB"] = str(chosen)
    return {"rows": rows, "chosen_mib": chosen, "rule": "largest size with hot (checks off) < 0.9 x DRAM floor"}


def step_nvml(out_dir):
    """The other-devices check's NVML pieces on this machine: this process's context and SM samples
    on the timed device itself while it works (the same readings the watch asks of other devices),
    and the watch's verdict."""
    import adversaries as A  # noqa: PLC0415

    from cudalens.measure.nvml import NvmlSource, OtherDevicesWatch, cuda_bus_id  # noqa: PLC0415

    src = NvmlSource.open()
    if src is None:
        return {"nvml": False}
    with cu.device_context(0) as ctx:
        mod = A.Module(ctx.cc)
        adv = A.Adversary(mod, 1 << 24)
        watch = OtherDevicesWatch(0)
        watch.start()
        since = src.now_us()
        t0 = time.time()
        while time.time() - t0 < 1.5:
            for _ in range(20):
                adv.run(0)
            cu.check(cu._driver().cuCtxSynchronize(), "sync")
        own = [src.reading(i, os.getpid(), since) for i in src.device_indexes()]
        verdict = watch.finish()
        adv.close()
        out = {"devices": len(own), "cuda_bus_id": cuda_bus_id(0), "nvml_bus_ids": [src.bus_id(i) for i in src.device_indexes()],
               "pid": os.getpid(), "own_readings": [r.__dict__ for r in own], "watch": verdict}
    print("nvml", json.dumps(out, default=str)[:1500], flush=True)
    return out


def step_adversarial(out_dir):
    import adversaries as A  # noqa: PLC0415

    sweep = os.path.join(out_dir, "l2sweep.json")
    if "ADV_L2_MB" not in os.environ and os.path.exists(sweep):  # the size the sweep chose (its own process)
        os.environ["ADV_L2_MB"] = str(json.load(open(sweep)).get("chosen_mib", 24))

    rows = []
    with cu.device_context(0) as ctx:
        mod = A.Module(ctx.cc)
        stream = cu.Stream()
        h = int(stream.handle)
        for cls, n in A.suite():
            adv = cls(mod, n)
            row = {"kind": adv.kind, "what": adv.what, "bytes": adv.bytes_read + adv.bytes_written}
            kw = dict(stream=h, outputs=adv.outputs, bytes_read=adv.bytes_read, bytes_written=adv.bytes_written,
                      name=adv.kind, **POLICY)
            for label, extra in (("cudalens_default", {}),
                                 ("cudalens_cold", {"mode": "cold"}),
                                 ("cudalens_checks_off", {"mode": "cold", **CHECKS_OFF}),
                                 ("cudalens_hot_checks_off", CHECKS_OFF)):
                adv.reset()
                try:
                    row[label] = _brief(bench(lambda adv=adv: adv.run(h), **kw, **extra))
                except Exception as exc:  # noqa: BLE001
                    row[label] = {"error": f"{type(exc).__name__}: {exc}"[:600]}
            row.update(_peers(adv))
            honest = row.get("cudalens_cold", {}).get("median_s")
            row["dram_floor_s"] = row["bytes"] / (3352.3e9)
            rows.append(row)
            cu.check(cu._driver().cuCtxSynchronize(), "sync")
            adv.close()
            print(adv.kind, {k: (v.get("median_s"), v.get("verdict"), v.get("reasons")) for k, v in row.items()
                             if isinstance(v, dict)}, honest, flush=True)
        stream.close()
    os.makedirs(os.path.join(out_dir, "raw"), exist_ok=True)
    out_cb = os.path.join(out_dir, "raw", "adversarial_cuda_bench.json")
    try:
        p = subprocess.run([sys.executable, os.path.join(HERE, "_adv_cuda_bench.py"), out_cb], capture_output=True,
                           text=True, timeout=300, env=env_with_src())
        cb = {"returncode": p.returncode, "stdout_tail": p.stdout[-3000:], "stderr_tail": p.stderr[-1500:]}
        if os.path.exists(out_cb):
            for b in json.load(open(out_cb)).get("benchmarks", []):
                summ = {s.get("tag"): d.get("value") for st in b.get("states", []) for s in st.get("summaries", [])
                        for d in s.get("data", []) if d.get("name") == "value"}
                name = b.get("name", "").replace("_", "-")
                for row in rows:
                    if row["kind"] == name:
                        row["cuda_bench"] = {"mean_s": float(summ.get("nv/cold/time/gpu/mean") or "nan"),
                                             "samples": summ.get("nv/cold/sample_size"),
                                             "batch_mean_s": float(summ.get("nv/batch/time/gpu/mean") or "nan"),
                                             "batch_samples": summ.get("nv/batch/sample_size")}
    except Exception as exc:  # noqa: BLE001
        cb = {"error": f"{type(exc).__name__}: {exc}"}
    return {"rows": rows, "cuda_bench_run": cb}


def step_short(out_dir):
    """Short kernels: cold events and hot events/graph against ncu of the same launches."""
    src = os.path.join(ROOT, "benchmarks", "measure", "measure_kernels.cu")
    cfgs, rows = [], []
    for n in (1 << 12, 1 << 16, 1 << 18, 1 << 19, 1 << 20):
        cfgs.append({"file": src, "kernel": "scale", "grid": [(n + 255) // 256, 1, 1], "block": [256, 1, 1], "smem": 0,
                     "args": [f"float32[{n}]:rand", f"float32[{n}]:zeros@out", "float32=2", f"int32={n}"]})
    cfgs.append({"file": src, "kernel": "empty_kernel", "grid": [1, 1, 1], "block": [32, 1, 1], "smem": 0, "args": []})
    for cfg in cfgs:
        row = {"kernel": cfg["kernel"], "args": cfg["args"]}
        for label, kw in (("cold_events", {"mode": "cold"}), ("cold_events_raw", {"mode": "cold", "timer": "events-raw"}),
                          ("hot_events", {"mode": "hot"}), ("hot_graph", {"mode": "hot", "timer": "graph"})):
            try:
                r = bench_kernel(src, cfg["kernel"], tuple(cfg["grid"]), tuple(cfg["block"]), parse_args(cfg["args"]),
                                 **kw, **POLICY)
                row[label] = {"median_s": r.summary.median, "batch": r.config["batch"], "floor_s": r.config["event_floor_s"],
                              "verdict": r.certificate["verdict"], "graph": r.certificate["regime"]["graph"],
                              "notes": list(r.notes)}
            except Exception as exc:  # noqa: BLE001
                row[label] = {"error": f"{type(exc).__name__}: {exc}"[:500]}
        rows.append(row)
    for state in ("cold", "hot"):
        ncu = run_ncu(cfgs, ["scale", "empty_kernel"], out_dir, state)
        if ncu.get("ok"):
            for row, m in zip(rows, ncu["medians_s"]):
                row[f"ncu_{state}_s"] = m
        else:
            rows.append({f"ncu_{state}_error": {k: v for k, v in ncu.items() if k != "per_config_s"}})
    for row in rows:
        if "kernel" not in row:
            continue
        for label in ("cold_events", "cold_events_raw"):
            if "median_s" in row.get(label, {}) and row.get("ncu_cold_s"):
                row[label]["ratio_to_ncu"] = row[label]["median_s"] / row["ncu_cold_s"]
        for label in ("hot_events", "hot_graph"):
            if "median_s" in row.get(label, {}) and row.get("ncu_hot_s"):
                row[label]["ratio_to_ncu"] = row[label]["median_s"] / row["ncu_hot_s"]
        print(row["kernel"], row["args"][:1], {k: (round(v.get("median_s", 0) * 1e6, 3), round(v.get("ratio_to_ncu", 0), 4))
                                                for k, v in row.items() if isinstance(v, dict)},
              row.get("ncu_cold_s"), row.get("ncu_hot_s"), flush=True)
    return {"rows": rows}


def main(argv):
    out_dir = argv[0]
    os.makedirs(out_dir, exist_ok=True)
    steps = argv[1:] or ["named", "adversarial", "short"]
    meta = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "script": "benchmarks/measure/bench_suite/bench_suite_gpu.py"}
    try:
        meta["nvidia_smi"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm",
                                             "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    except OSError:
        pass
    for step in steps:
        t0 = time.time()
        try:
            res = {"step_ok": True, **globals()[f"step_{step}"](out_dir)}
        except Exception as exc:  # noqa: BLE001
            res = {"step_ok": False, "error": f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc()[-3000:]}
            print(res["trace"], flush=True)
        res["meta"] = dict(meta, seconds=time.time() - t0)
        json.dump(res, open(os.path.join(out_dir, f"{step}.json"), "w"), indent=1, default=str)
        print(f"step {step}: {time.time() - t0:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
