"""One diagnosis item's facts in words, read from its results.json form, so the HTML page
(reports.tables.diagnosis_block) and the Markdown summary (reports.markdown) show the same facts. Torch-free, like
the Markdown summary."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

THIN = "thin evidence (one shape or at most two checks): ranked after items seen across shapes"
PARTIAL = "partial: read from the tests that ran (the run stopped early)"


def facts(item: Mapping[str, Any]) -> list[str]:
    """Every fact of an item beyond its category, name, scope, evidence and cases, where the fault lies first."""
    blocks = item.get("blocks") or {}
    absorbed = item.get("absorbed") or ()
    parts = [
        f"where: {item['demoted']}" if item.get("demoted") else "",
        "block " + ", ".join(f"{size} ({path} path)" for path, size in blocks.items()) if blocks else "",
        f"control: {item['control']}" if item.get("control") else "",
        "also explains every failure of: " + "; ".join(map(str, absorbed)) if absorbed else "",
        THIN if item.get("thin") else "",
        PARTIAL if item.get("partial") else "",
        f"weight {int(item.get('weight') or 0)} (failing tests explained, with the rule's bonus)",
    ]
    return [p for p in parts if p]
