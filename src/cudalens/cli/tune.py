"""`cudalens tune`: autotune a kernel's template or macro parameters; the models prune, the harness measures."""

from __future__ import annotations

import json
from typing import Any

import click

from cudalens.cli._common import cc_option, echo_json, format_option
from cudalens.errors import InputError

_DB_HELP = "History database (default ~/.cudalens/history.db); the session resumes from it."


def _us(s: float | None) -> str:
    return "-" if s is None else f"{s * 1e6:,.1f} us"


def _render(r: dict[str, Any]) -> None:
    click.echo(f"tuning session {r['session_id']}{' (resumed)' if r['resumed'] else ''} on {r['device'].get('name')}: "
               f"strategy {r['strategy']}")
    click.echo(f"  configurations: {r['configurations']} (of {r['space_before_restrictions']} before restrictions); "
               f"compiled {r['compiled']} in {r['compile_seconds']:.1f} s")
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(r["pruned_by_kind"].items())) or "none"
    click.echo(f"  pruned by the models: {r['pruned']} ({kinds})")
    click.echo(f"  measured: {r['measured']} ({r['measured'] / max(1, r['configurations']):.0%} of the space), "
               f"failed {r['failed']}, wrong output {r['wrong_output']}; stopped: {r['stop_reason']}")
    best = r.get("best")
    if not best:
        click.echo("  no configuration was measured successfully")
        return
    f = best["model_facts"]
    click.echo(f"best: {best['config']}  median {_us(best['median_s'])} "
               f"[95% CI {_us(best['ci_low_s'])} .. {_us(best['ci_high_s'])}], {best['samples']} samples, run {best['run_id']}")
    click.echo(f"  evidence: {f.get('registers')} registers, {f.get('static_shared_bytes')} B static shared, "
               f"{f.get('threads_per_block')} threads/block, occupancy {f.get('occupancy', 0):.1%}, "
               f"{f.get('waves')} waves (efficiency {f.get('wave_efficiency', 0):.0%}); output checked against {r['reference']}")
    click.echo("  rank  configuration                              median        95% CI                      P(fastest)")
    for t in r["top"]:
        p = "-" if t["p_fastest"] is None else f"{t['p_fastest']:.2f}"
        click.echo(f"  {t['rank']:>4}  {t['config']:<42} {_us(t['median_s']):>12}  "
                   f"{_us(t['ci_low_s']):>11} .. {_us(t['ci_high_s']):<11}  {p}")
    st = r["stability"]
    if st:
        verdict = ("separated from the runner-up" if st["winner_separated_from_runner_up"]
                   else f"within the noise of {len(st['within_winner_ci'])} other(s)")
        click.echo(f"  stability: the winner's interval is {verdict}; bootstrap P(winner fastest) = "
                   f"{st['p_winner_fastest']:.2f}")


def register(group: click.Group) -> None:
    @group.command("tune")
    @click.argument("source", type=click.Path(dir_okay=False))
    @click.option("--kernel", required=True, help="Kernel name, with template arguments over the parameters: 'gemm<BM,BN,BK>'.")
    @click.option("--space", "spaces", multiple=True, required=True,
                  help="A parameter: NAME=V1,V2,... or NAME=START:STOP:STEP (STEP +k adds, xk multiplies; numbers may "
                       "be 2^k), e.g. BK=8:32:x2: the range grammar of `cudalens bench --axis`. Repeatable.")
    @click.option("--restrict", "restrictions", multiple=True, help="A condition every configuration must meet, e.g. 'BM*BK <= 4096'. Repeatable.")
    @click.option("--const", "constants", multiple=True, help="A named constant for the expressions: NAME=INT. Repeatable.")
    @click.option("--grid", required=True, help="Grid dimensions: up to three expressions, comma-separated.")
    @click.option("--block", required=True, help="Block dimensions: up to three expressions, comma-separated.")
    @click.option("--shared-mem", "shared_mem", default="0", show_default=True,
                  help="Dynamic shared memory per block in bytes (an expression over the parameters).")
    @click.option("--arg", "args", multiple=True, help="Kernel argument, in order: `cudalens bench --arg`'s grammar, {NAME} standing for a --const "
                       "(float32[{N}*{N}]).")
    @click.option("--strategy", type=click.Choice(["guided", "exhaustive", "optuna"]), default="guided", show_default=True)
    @click.option("--max-fraction", default=0.5, show_default=True, type=float,
                  help="guided/optuna: measure at most this fraction of the configurations.")
    @click.option("--patience", default=None, type=int, help="guided/optuna: stop after this many measurements without a gain.")
    @click.option("--min-gain", default=0.01, show_default=True, type=float, help="Relative improvement that counts as a gain.")
    @click.option("--seed", default=0, show_default=True, type=int)
    @click.option("--keep-spills", is_flag=True, help="Measure configurations that spill registers instead of pruning them.")
    @click.option("--min-occupancy", default=None, type=float, help="Prune below this occupancy (default: 4 warps per SM).")
    @click.option("--reference", default=None, help="Configuration whose outputs the others must match (default: the first survivor).")
    @click.option("--rtol", default=1e-4, show_default=True, type=float)
    @click.option("--atol", default=1e-5, show_default=True, type=float)
    @click.option("--cold/--hot", default=True, show_default=True,
                  help="cold: flush L2 before every launch; hot: back-to-back launches (as in `cudalens bench`).")
    @click.option("--noise", default="1%", show_default=True, help="Stop sampling when stdev/mean is below this.")
    @click.option("--min-time", default=0.05, show_default=True, type=float, help="Seconds of sampling at least, per configuration.")
    @click.option("--max-time", default=2.0, show_default=True, type=float, help="Seconds of sampling at most, per configuration.")
    @click.option("--min-samples", default=10, show_default=True, type=int)
    @cc_option
    @click.option("--nvcc-flag", "nvcc_flags", multiple=True, metavar="FLAG",
                  help="A flag passed to nvcc as given (repeatable); flags holding shell characters are refused.")
    @click.option("-j", "--jobs", default=None, type=click.IntRange(1, 1024), help="Compile processes (default: the CPU count).")
    @click.option("--ray", default=None, help="Run through Ray: 'auto' (join or start a cluster) or a cluster ADDRESS.")
    @click.option("--workers", default=None, type=int, help="--ray: GPU workers (default: every GPU of the cluster).")
    @click.option("--db", default=None, help=_DB_HELP)
    @click.option("--top", default=5, show_default=True, type=int, help="Configurations in the stability table.")
    @click.option("--fake", default=None, hidden=True, help="Testing aid: a JSON object of FakeRunner options (no GPU, no compiler).")
    @format_option
    def tune_cmd(source, kernel, spaces, restrictions, constants, grid, block, shared_mem, args, strategy, max_fraction,
                 patience, min_gain, seed, keep_spills, min_occupancy, reference, rtol, atol, cold, noise,
                 min_time, max_time, min_samples, cc, nvcc_flags, jobs, ray, workers, db, top, fake, fmt):
        """Tune SOURCE's kernel over a space of parameters: every configuration is compiled (in parallel),
        the models prune what cannot launch, spills or starves the SM and order the rest; the harness
        measures them cold, each output checked against the reference. Resumes an interrupted session."""
        from cudalens.api import tune
        from cudalens.measure.stats import parse_percent
        from cudalens.tune.runners import policy_dict

        if not 0 < max_fraction <= 1:
            raise InputError(f"--max-fraction {max_fraction}: give a fraction in (0, 1]")
        try:
            noise_target = parse_percent(noise)
        except ValueError as exc:
            raise InputError(f"--noise {noise!r}: {exc}") from None
        pol = policy_dict({"noise_target": noise_target, "min_time_s": min_time, "max_time_s": max_time,
                           "min_samples": min_samples})
        fake_opts = None
        if fake is not None:
            try:
                fake_opts = json.loads(fake)
            except ValueError:
                raise InputError(f"--fake {fake!r}: not a JSON object") from None
        quiet = fmt == "json"

        def event(text: str) -> None:
            if not quiet:
                click.echo(text, err=True)

        def outcome(o: Any) -> None:
            if not quiet:
                med = o.result.summary.median if o.result is not None else None
                click.echo(f"  {o.status:<8} {o.config_key:<42} {_us(med):>12} {o.reason or ''}", err=True)

        report = tune(source, kernel, list(spaces), grid=grid, block=block,
                      args=list(args), shared_mem=shared_mem, restrict=list(restrictions), const=list(constants),
                      nvcc_flags=list(nvcc_flags), cc=cc, fake=fake_opts, strategy=strategy, db=db,
                      mode="cold" if cold else "hot", policy=pol, max_fraction=max_fraction, patience=patience,
                      min_gain=min_gain, seed=seed, keep_spills=keep_spills, min_occupancy=min_occupancy,
                      reference=reference, rtol=rtol, atol=atol, ray=ray, num_workers=workers, compile_workers=jobs,
                      on_outcome=outcome, on_event=event, top=top).to_dict()
        if fmt == "json":
            echo_json(report)
        else:
            _render(report)
