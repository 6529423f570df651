"""HTML and SARIF for an application profile (``cudalens/profile-1``).

The HTML page is self-contained (inline CSS and SVG, no script from the network): summary, a
timeline strip of the traced span (kernels above, copies and sets below, each bin shaded by how busy
it was), the top kernels, the transfers, and the findings with source excerpts where they have a
source line. SARIF carries the findings that have a source line (what code scanning can place).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from cudalens.report.frames import SourceText
from cudalens.report.html import _CSS, _e, _excerpt
from cudalens.report.profile_terminal import _t as duration_text


def _t(seconds: float | None) -> str:
    return duration_text(seconds, unknown="n/a", micro="µs")


def timeline_svg(tl: dict[str, Any], width: int = 960, height: int = 46) -> str:
    n = tl.get("bins") or 0
    if not n:
        return ""
    w = width / n
    rects = []
    for _row, (key, color, y) in enumerate((("kernel", "31,111,235", 2), ("copy", "214,110,0", 26))):
        for i, v in enumerate(tl[key]):
            if v > 0:
                rects.append(f'<rect x="{i * w:.2f}" y="{y}" width="{w + 0.05:.2f}" height="18" '
                             f'fill="rgba({color},{0.15 + 0.85 * v:.2f})"/>')
    return (f'<svg class="timeline" viewBox="0 0 {width} {height}" width="100%" role="img" '
            f'aria-label="timeline: kernels (top), copies and sets (bottom)">'
            f'<rect x="0" y="0" width="{width}" height="{height}" fill="#f7f8fb"/>{"".join(rects)}</svg>'
            f'<div class="sub">0 → {_t(tl.get("span_s"))}; top row kernels, bottom row copies and sets '
            f'(darker: busier)</div>')


def _finding_html(f: dict[str, Any], source: Callable[[str], Sequence[str]]) -> str:
    cost = f" <span class=\"sub\">[{f['impact']:.1%} {_e(f['impact_text'])}]</span>" if f.get("impact") is not None else ""
    where = f"{_e(f['file'])}:{f['line']}" if f.get("line") else _e(f.get("kernel") or "application")
    return (f'<div class="finding"><span class="pri pri-{_e(f["priority"])}">{_e(f["priority"])}</span> '
            f'<b>{_e(f["rule"])}</b> <span class="sub">{_e(f.get("section"))} · {where} · {_e(f.get("status"))}'
            f'</span><div>{_e(f["message"])}{cost}</div>'
            f'{_excerpt(f["file"], f.get("line"), source)}<div class="ok">fix: {_e(f["fix"])}</div></div>')


def render_html(report: dict[str, Any], source: Callable[[str], Sequence[str]] | None = None) -> str:
    """The profile as one page; ``source``: path -> its lines, for the excerpts (default: read from the files)."""
    s, dev = report["summary"], report.get("device") or {}
    source = source if source is not None else SourceText()
    rows = []
    for k in report["kernels"][:15]:
        occ = (k.get("occupancy") or {}).get("occupancy")
        src = k.get("source") or {}
        rows.append(f"<tr><td>{_e(k['name'])}</td><td>{k['share']:.1%}</td><td>{_t(k['total_s'])}</td>"
                    f"<td>{k['launches']}</td><td>{_t(k['mean_s'])}</td>"
                    f"<td>{'x'.join(map(str, k['grid']))} × {'x'.join(map(str, k['block']))}</td>"
                    f"<td>{k['registers']}</td><td>{'n/a' if occ is None else f'{occ:.0%}'}</td>"
                    f"<td>{k['amdahl_2x']:.2f}×</td>"
                    f"<td>{_e(src.get('file', '').rsplit('/', 1)[-1])}{':' + str(src['line']) if src else ''}</td></tr>")
    xfer = []
    for x in report["transfers"]:
        bw = x.get("achieved_gbps")
        xfer.append(f"<tr><td>{_e(x['kind'])}</td><td>{_e(x.get('host_memory') or '-')}</td><td>{x['count']}</td>"
                    f"<td>{x['bytes']:,}</td><td>{_t(x['total_s'])}</td><td>{'n/a' if bw is None else f'{bw:.2f}'}</td>"
                    f"<td>{x['synchronous']}</td><td>{x['small']}</td></tr>")
    link = (f"<p class=\"sub\">link: {_e(s.get('link'))}, {s['link_gbps']:.1f} GB/s per direction (theoretical)</p>"
            if s.get("link_gbps") else "")
    per_kernel: dict[str, list[str]] = {}
    app = []
    for f in report["findings"]:
        (per_kernel.setdefault(f["kernel"], []) if f.get("kernel") else app).append(_finding_html(f, source))
    kernel_sections = "".join(f"<h3>{_e(name)}</h3>{''.join(items)}" for name, items in per_kernel.items())
    notes = "".join(f"<li>{_e(n)}</li>" for n in report.get("notes") or [])
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>cudalens profile</title>
<style>{_CSS}</style></head><body>
<h1>cudalens profile</h1><div class="sub"><code>{_e(' '.join(report['command']))}</code> · {_e(dev.get('name'))}
(cc {_e(dev.get('cc'))}) · {_e(report['collector'])} trace · mode {_e(report['mode'])} ·
exit status {report['exit_status']} · {report['wall_s']:.2f} s wall · <span id="finding-count">{len(report['findings'])}</span> findings</div>
<h2>Timeline</h2><p>assessed span ({_e(s.get('window'))}) {_t(s['span_s'])}: GPU busy {s['busy_share']:.1%}; kernels {_t(s['kernel_s'])} in
{s['launches']} launches; copies {_t(s['copy_s'])}; sets {_t(s['set_s'])}; idle {_t(s['idle_s'])}</p>
{timeline_svg(report.get('timeline') or {})}
<h2>Top kernels</h2><table><tr><th>kernel</th><th>share of kernel time</th><th>time</th><th>launches</th><th>mean</th>
<th>grid × block</th><th>registers</th><th>occupancy</th><th>if 2× faster</th><th>source</th></tr>{''.join(rows)}</table>
<h2>Transfers</h2>{'<table><tr><th>kind</th><th>host memory</th><th>count</th><th>bytes</th><th>time</th><th>GB/s</th><th>synchronous</th><th>small</th></tr>' + ''.join(xfer) + '</table>' if xfer else '<p>none</p>'}{link}
<h2>Application findings</h2>{''.join(app) or '<p>none</p>'}
<h2>Per-kernel findings</h2>{kernel_sections or '<p>none</p>'}
{'<h2>Notes</h2><ul>' + notes + '</ul>' if notes else ''}
</body></html>
"""


def sarif_log(report: dict[str, Any], lines: Callable[[str, int | None], str] | None = None) -> dict[str, Any]:
    """SARIF 2.1.0 with the findings that have a source line (``lines``: as :func:`to_sarif` takes it)."""
    from cudalens.guided.inputs import finding_from_dict
    from cudalens.report.sarif import to_sarif
    from cudalens.rules.registry import load_all

    located = [finding_from_dict(f) for f in report["findings"] if f.get("line")]
    rules = {f.rule for f in located}
    specs = {rid: spec for rid, spec in load_all().items() if rid in rules}
    return to_sarif(located, specs, root=".", **({"lines": lines} if lines is not None else {}))
