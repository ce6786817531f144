"""Synthetic bench.json payloads for the compare and report tests."""
from __future__ import annotations

import copy
import json
from pathlib import Path

from bench import SCHEMA


def row(key: str, kernel: float, roofline: float, anchor: float = 100.0, torch: float = 50.0) -> dict:
    return {"key": key, "group": "decode", "dtype": key.split("-")[0], "shape": [1, 152064], "stride": [152064, 1],
            "bytes": 608256, "us": {"kernel": kernel, "anchor": anchor, "torch": torch, "roofline": roofline},
            "eager_us": {"kernel": 20.0, "anchor": 28.0, "torch": 38.0, "launch_floor": 17.0},
            "ratios": {"speedup_vs_anchor": anchor / kernel, "roofline_fraction": roofline / kernel}}


def payload(meaningful: bool = True, device: str = "NVIDIA H200") -> dict:
    return {"schema": SCHEMA, "timings_meaningful": meaningful,
            "environment": {"device_name": device, "kernel_module": "kernel"},
            "rows": [row("fp32-1x152064", 8.0, 6.0), row("bf16-1024x152064", 84.0, 86.0)]}


def scaled(base: dict, kernel: float = 1.0, roofline: float = 1.0, key: str | None = None, eager: float = 1.0,
           anchor_eager: float = 1.0) -> dict:
    """A copy with kernel and roofline times (and the eager costs of kernel and anchor) multiplied, for every row
    or only `key`."""
    out = copy.deepcopy(base)
    for r in out["rows"]:
        if key is None or r["key"] == key:
            r["us"]["kernel"] *= kernel
            r["us"]["roofline"] *= roofline
            r["eager_us"]["kernel"] *= eager
            r["eager_us"]["anchor"] *= anchor_eager
    return out


def write(path: Path, data: object) -> str:
    path.write_text(json.dumps(data))
    return str(path)
