"""The speed targets (issue 29: what a user pays), checked on one run's rows (meaningful on an accelerator only).

Retired with the kernel's private launch path (issue 29): decode >= 1.5x torch on device, decode <= 2x (launch floor
+ bytes at roofline) and decode eager <= 1.25x (one empty launch + device time); the ratios stay in the JSON."""
from __future__ import annotations

DECODE_MIN_VOCAB = 128_000
LARGE_MIN_ROWS, LARGE_VOCAB = 1024, 152064


def _is_decode(row: dict) -> bool:
    return row["group"] == "decode" and row["shape"][1] >= DECODE_MIN_VOCAB


def _is_large(row: dict) -> bool:
    return row["shape"][0] >= LARGE_MIN_ROWS and row["shape"][1] == LARGE_VOCAB


TARGETS: tuple[tuple[str, object, str, str, float], ...] = (
    ("decode: >= 4x the anchor", _is_decode, "speedup_vs_anchor", ">=", 4.0),
    ("large: >= 90% of read roofline", _is_large, "roofline_fraction", ">=", 0.9),
    ("every shape: never slower than the anchor", lambda row: True, "speedup_vs_anchor", ">=", 1.0),
    ("every shape: eager per-call cost <= the anchor's", lambda row: True, "eager_vs_anchor", ">=", 1.0),
    ("every shape: eager per-call cost <= torch's", lambda row: True, "eager_vs_torch", ">=", 1.0),
    ("every shape: graph replay never slower than the anchor's", lambda row: True, "graph_vs_anchor", ">=", 1.0),
)


def check_targets(rows: list[dict]) -> list[dict[str, object]]:
    """One entry per target: how many rows it covers, the worst value, and the rows that miss."""
    results = []
    for name, applies, ratio, op, bound in TARGETS:
        picked = [r for r in rows if applies(r) and r["ratios"].get(ratio) is not None]  # type: ignore[operator]
        values = {r["key"]: r["ratios"][ratio] for r in picked}
        ok = (lambda v: v >= bound) if op == ">=" else (lambda v: v <= bound)
        missed = sorted(k for k, v in values.items() if not ok(v))
        worst = (min if op == ">=" else max)(values.values()) if values else None
        results.append({"target": name, "ratio": ratio, "bound": f"{op} {bound}", "rows": len(picked),
                        "worst": worst, "missed": missed, "met": bool(picked) and not missed})
    return results
