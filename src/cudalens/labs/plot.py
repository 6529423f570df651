"""One PNG per lab (matplotlib, Agg backend): the lab's PlotSpec says which columns to draw."""

from __future__ import annotations

from pathlib import Path

from cudalens.labs.core import Lab, LabResult


def plot_result(lab: Lab, result: LabResult, path: str | Path) -> Path:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    spec = lab.plot
    assert spec is not None
    rows = [r for r in result.rows if r.get(spec.x) is not None and r.get(spec.y) is not None]
    groups: dict[str, list] = {}
    for r in rows:
        groups.setdefault(str(r.get(spec.series, "")) if spec.series else spec.y, []).append(r)
    fig, ax = plt.subplots(figsize=(7, 4), dpi=110)
    if spec.kind == "bar":
        labels = []
        for r in rows:
            x = str(r[spec.x]) + (f"\n{r[spec.series]}" if spec.series else "")
            labels.append(x)
        ax.bar(range(len(rows)), [r[spec.y] for r in rows], color="#4c72b0")
        ax.set_xticks(range(len(rows)), labels, rotation=30, ha="right", fontsize=7)
    else:
        for name, rs in groups.items():
            ax.plot([r[spec.x] for r in rs], [r[spec.y] for r in rs], marker="o", ms=3, label=name)
        if len(groups) > 1:
            ax.legend(fontsize=7)
        if spec.logx:
            ax.set_xscale("log", base=2)
    if spec.logy:
        ax.set_yscale("log")
    ax.set_xlabel(spec.x)
    ax.set_ylabel(spec.y)
    dev = result.device.get("name", "")
    ax.set_title(f"{lab.number}. {spec.title or lab.title} - {dev}", fontsize=9)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return Path(path)
