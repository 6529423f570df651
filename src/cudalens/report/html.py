"""One self-contained HTML report: summary, findings with source excerpts, occupancy charts,
the roofline point and the predicted-vs-measured table. No network, no external files: styles are
inline and charts are inline SVG drawn by matplotlib.

Input is the analysis JSON document (schema cudalens/analysis-1 and its added keys), so an HTML
report can be made from a JSON file saved earlier as well as from a fresh analysis.
"""

from __future__ import annotations

import html
import io
from collections.abc import Callable, Sequence
from typing import Any

from cudalens.report.frames import SourceText

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:1100px;color:#1d2330;padding:0 1rem}
h1{font-size:1.6rem;margin-bottom:.2rem} h2{border-bottom:1px solid #d8dde6;padding-bottom:.2rem;margin-top:2rem}
.sub{color:#5b6577} table{border-collapse:collapse;width:100%;margin:.5rem 0 1rem} th,td{border:1px solid #d8dde6;padding:.3rem .5rem;text-align:left;font-size:.9rem;vertical-align:top}
th{background:#f3f5f9} .pri{font-weight:600;border-radius:4px;padding:.05rem .4rem;font-size:.8rem}
.pri-high{background:#fde2e1;color:#9b1c1c} .pri-medium{background:#fff1d6;color:#8a5300} .pri-medium-low{background:#fff8e6;color:#7a5b00}
.pri-low{background:#e6f0ff;color:#1e4fa3} .pri-info{background:#eef0f3;color:#3d4656}
.finding{border:1px solid #d8dde6;border-radius:6px;padding:.6rem .8rem;margin:.6rem 0}
pre.src{background:#f7f8fb;padding:.4rem .6rem;overflow-x:auto;font-size:.82rem;margin:.4rem 0}
pre.src .hit{background:#fff3b0} .ok{color:#1c7a3a;font-weight:600} .bad{color:#9b1c1c;font-weight:600}
ol.first li{margin:.3rem 0} .chart svg{max-width:100%;height:auto}
"""

_SELF_CHECK = """
window.__cudalensErrors = [];
window.addEventListener('error', function (e) { window.__cudalensErrors.push(String(e.message)); });
document.addEventListener('DOMContentLoaded', function () {
  var n = document.querySelectorAll('.finding').length;
  document.getElementById('finding-count').textContent = String(n);
});
"""


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def _fmt(value: Any, digits: int = 2) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def with_unit(value: Any, unit: str | None = None, relation: str | None = None) -> str:
    """A predicted or measured number as a reader needs it: its relation (``< 99 %``; none for
    "≈", an equality within tolerance) and its unit; 3 significant digits; "n/a" when absent."""
    if value is None:
        return "n/a"
    text = f"{value:.3g}" if isinstance(value, float) else str(value)
    if unit:
        text += f" {unit}"
    if relation and relation != "≈":
        text = f"{relation} {text}"
    return text


def _impact(f: dict[str, Any]) -> str:
    """The finding's impact estimate in words: cost share (what it measures) x runs per thread."""
    cost = f.get("impact")
    gain = f.get("estimated_speedup")
    head = f"<p class='sub'><b>Estimated speedup:</b> {gain:.1%}</p>" if gain is not None else ""
    if cost is None:
        return head
    text = f"{cost:.0%}" + (f" {f['impact_text']}" if f.get("impact_text") else "")
    runs = f.get("runs")
    if runs is not None:
        text += f" · about {runs:g} run(s) per thread"
    return f"{head}<p class='sub'><b>Impact:</b> {_e(text)}</p>"


def _excerpt(path: str, line: int | None, source: Callable[[str], Sequence[str]], context: int = 2) -> str:
    """The lines around ``line`` of ``path`` (``source``: path -> its lines), that line marked."""
    if not line or not path:
        return ""
    lines = source(path)
    if not lines:
        return ""
    lo, hi = max(1, line - context), min(len(lines), line + context)
    rows = []
    for n in range(lo, hi + 1):
        text = _e(f"{n:5d}  {lines[n - 1]}")
        rows.append(f'<span class="hit">{text}</span>' if n == line else text)
    return '<pre class="src">' + "\n".join(rows) + "</pre>"


def _svg(fig) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]


def occupancy_chart(cc: str, occupancy: dict[str, Any], resources: dict[str, Any]) -> str:
    """Occupancy against block size for this kernel's registers and shared memory (SVG), current point marked."""
    try:
        from cudalens.occupancy import calculate
    except ImportError:
        return ""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    regs = int(resources.get("registers") or 0)
    static = int(resources.get("static_shared_bytes") or 0)
    dynamic = int(occupancy.get("dynamic_shared_bytes") or 0)
    sizes = list(range(32, 1025, 32))
    values = []
    for threads in sizes:
        res = calculate(cc=cc, threads_per_block=threads, registers_per_thread=max(regs, 1),
                        shared_mem_per_block=dynamic, static_shared_mem=static)
        values.append(res.occupancy * 100)
    fig, ax = plt.subplots(figsize=(6, 2.6))
    ax.plot(sizes, values, drawstyle="steps-mid", color="#2f6fd6")
    current = occupancy.get("threads_per_block")
    if current and occupancy.get("occupancy") is not None:
        ax.plot([current], [occupancy["occupancy"] * 100], "o", color="#c0392b", label=f"{current} threads")
        ax.legend(loc="lower right", fontsize=8)
    ax.set_xlabel("threads per block")
    ax.set_ylabel("theoretical occupancy (%)")
    ax.set_ylim(0, 105)
    ax.grid(alpha=0.3)
    return _svg(fig)


def roofline_chart(point: dict[str, Any]) -> str:
    """The roofline: peak FLOP/s and DRAM bandwidth ceilings, with the kernel's measured point (SVG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    peak_flops = point["peak_flops"]
    peak_bw = point["peak_bandwidth_bytes_per_s"]
    ai = point["arithmetic_intensity"]
    achieved = point["achieved_flops"]
    x = np.logspace(-3, 4, 200)
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.loglog(x, np.minimum(peak_flops, peak_bw * x), color="#2f6fd6", label="ceiling")
    ax.loglog([ai], [achieved], "o", color="#c0392b", label=point.get("kernel", "kernel"))
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("FLOP/s")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    return _svg(fig)


def render_html(report: dict[str, Any], title: str = "cudalens report",
                source: Callable[[str], Sequence[str]] | None = None) -> str:
    """Render the analysis document as one self-contained HTML page. ``source``: path -> its lines,
    for the excerpts under the findings (default: read from the files, for a document saved earlier)."""
    source = source if source is not None else SourceText()
    findings = report.get("findings", [])
    kernels = report.get("kernels", [])
    cc = report.get("cc", "9.0")
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{_e(title)}</title><style>{_CSS}</style><script>{_SELF_CHECK}</script></head><body>",
        f"<h1>{_e(title)}</h1>",
        f"<p class='sub'>schema {_e(report.get('schema'))} · target CC {_e(cc)} · "
        f"{len(kernels)} kernel(s) · <span id='finding-count'>{len(findings)}</span> finding(s)</p>",
    ]
    parts.append("<section id='summary'><h2>Summary</h2>")
    counts: dict[str, int] = {}
    for f in findings:
        counts[f["priority"]] = counts.get(f["priority"], 0) + 1
    parts.append("<table><tr><th>priority</th><th>findings</th></tr>")
    for pri in ("high", "medium", "medium-low", "low", "info"):
        if pri in counts:
            parts.append(f"<tr><td><span class='pri pri-{pri}'>{pri}</span></td><td>{counts[pri]}</td></tr>")
    parts.append("</table>")
    first = report.get("first_steps") or [f"{f['rule']}: {f['fix']}" for f in findings[:3]]
    if first:
        parts.append("<h3>First things to do</h3><ol class='first'>")
        parts += [f"<li>{_e(step)}</li>" for step in first[:3]]
        parts.append("</ol>")
    for line in report.get("speed_of_light", []) or []:
        parts.append(f"<p>{_e(line)}</p>")
    failed = [f["compile_failure"] for f in report.get("files", []) if f.get("compile_failure")]
    if failed:  # files analysed source-only: said, with the fix (pipeline.compile_failure)
        parts.append(f"<h3>{len(failed)} file(s) analysed source-only (not compiled)</h3><ul class='source-only'>")
        parts += [f"<li>{_e(c['path'])}: {_e(c['error'])}. Fix: {_e(c['fix'])}</li>" for c in failed]
        parts.append("</ul>")
    parts.append("</section>")

    parts.append("<section id='findings'><h2>Findings</h2>")
    if not findings:
        parts.append("<p class='ok'>No findings.</p>")
    for f in findings:
        where = f"{_e(f.get('file'))}:{_e(f.get('line'))}" if f.get("line") else _e(f.get("file"))
        parts.append(
            f"<div class='finding' data-rule='{_e(f['rule'])}'><span class='pri pri-{_e(f['priority'])}'>"
            f"{_e(f['priority'])}</span> <b>{_e(f['rule'])}</b> · {_e(f.get('section'))} · "
            f"{_e(f.get('kernel') or 'host code')} · {where}"
            f"{' · ' + _e(f.get('status')) if f.get('status') not in (None, 'flagged') else ''}"
            f"<p>{_e(f['message'])}</p><p><b>Fix:</b> {_e(f['fix'])}</p>{_impact(f)}"
            f"{_excerpt(f.get('file', ''), f.get('line'), source)}</div>"
        )
    parts.append("</section>")

    parts.append("<section id='kernels'><h2>Kernels</h2>")
    for k in kernels:
        parts.append(f"<h3>{_e(k['name'])} <span class='sub'>{_e(k.get('file'))}:{_e(k.get('line'))}</span></h3>")
        occ, res = k.get("occupancy"), k.get("resources")
        if res:
            parts.append("<table><tr>" + "".join(f"<th>{_e(key)}</th>" for key in res) + "</tr><tr>"
                         + "".join(f"<td>{_fmt(v)}</td>" for v in res.values()) + "</tr></table>")
        if occ and res:
            parts.append(f"<p>Theoretical occupancy {_fmt((occ.get('occupancy') or 0) * 100, 1)} % "
                         f"({_e(occ.get('active_blocks_per_sm'))} blocks/SM, limited by "
                         f"{_e(', '.join(occ.get('limiters') or []) or 'n/a')})</p>")
            chart = occupancy_chart(cc, occ, res)
            if chart:
                parts.append(f"<div class='chart occupancy-chart'>{chart}</div>")
        if k.get("accesses"):
            parts.append("<table class='accesses'><tr><th>line</th><th>array</th><th>space</th><th>op</th>"
                         "<th>sectors/request</th><th>ideal</th><th>bank ways</th><th>pattern</th></tr>")
            for a in k["accesses"]:
                parts.append("<tr>" + "".join(f"<td>{_fmt(a.get(key))}</td>" for key in (
                    "line", "array", "space", "op", "sectors_per_request", "ideal_sectors_per_request",
                    "bank_conflict_ways", "pattern")) + "</tr>")
            parts.append("</table>")
    parts.append("</section>")

    checks = report.get("cross_checks") or []
    parts.append("<section id='predicted-vs-measured'><h2>Predicted vs measured</h2>")
    if not checks:
        parts.append("<p class='sub'>No measurement or counters in this report (use --run / --counters).</p>")
    else:
        parts.append("<table><tr><th>kernel</th><th>quantity</th><th>line</th><th>predicted</th><th>measured</th><th>agree</th></tr>")
        for c in checks:
            agree = c.get("agree")
            cls = "ok" if agree else ("bad" if agree is False else "")
            parts.append(f"<tr><td>{_e(c.get('kernel'))}</td><td>{_e(c.get('quantity'))}</td><td>{_e(c.get('line'))}</td>"
                         f"<td>{_e(with_unit(c.get('predicted'), c.get('unit'), c.get('relation')))}</td>"
                         f"<td>{_e(with_unit(c.get('measured'), c.get('unit')))}</td>"
                         f"<td class='{cls}'>{_fmt(agree)}</td></tr>")
        parts.append("</table>")
    parts.append("</section>")
    roofline = report.get("roofline")
    if roofline:
        parts.append(f"<section id='roofline'><h2>Roofline</h2><div class='chart'>{roofline_chart(roofline)}</div></section>")
    parts.append("</body></html>")
    return "".join(parts)
