"""bench.png: speed-up over the anchor design and fraction of the read roofline, per shape."""
from __future__ import annotations

from pathlib import Path

COLORS = {"fp32": "tab:blue", "bf16": "tab:orange", "fp16": "tab:green"}


def plot(payload: dict, path: Path) -> bool:
    """Draw the two panels; False (and nothing written) when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    rows = payload["rows"]
    labels = [r["key"] for r in rows]
    colors = [COLORS.get(r["dtype"], "gray") for r in rows]
    xs = range(len(rows))
    fig, (top, middle, bottom) = plt.subplots(3, 1, figsize=(max(8.0, 0.22 * len(rows) + 2), 10.0), sharex=True)
    top.bar(xs, [r["ratios"]["speedup_vs_anchor"] for r in rows], color=colors)
    top.axhline(1.0, color="black", lw=0.8)
    top.set_yscale("log")
    top.set_ylabel("speed-up over anchor design (x)")
    middle.bar(xs, [r["ratios"].get("eager_vs_anchor") or 0 for r in rows], color=colors)
    middle.axhline(1.0, color="black", lw=0.8)
    middle.set_ylabel("eager per-call: anchor / kernel (x)")
    bottom.bar(xs, [r["ratios"]["roofline_fraction"] for r in rows], color=colors)
    bottom.axhline(0.9, color="red", lw=0.8, ls="--")
    bottom.set_ylabel("fraction of read roofline")
    bottom.set_xticks(list(xs))
    bottom.set_xticklabels(labels, rotation=90, fontsize=6)
    env = payload["environment"]
    title = f"{env['kernel_module']} on {env['device_name']} ({env['triton']}, torch {env['torch']})"
    if not payload.get("timings_meaningful", False):
        title += "\nINTERPRETER SMOKE RUN: timings mean nothing"
    top.set_title(title, fontsize=9)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in COLORS.values()]
    top.legend(handles, list(COLORS), fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return True
