"""Speed benchmark of get_num_nans against the anchor design, torch's composite and a read roofline."""
from __future__ import annotations

from reports.bench_json import SCHEMA

__all__ = ["SCHEMA"]
