"""Text every page shares (an environment failure's headline, why a test failed, a diagnosis item's facts); torch-free,
so the gate tools (compare, the nightly) read JSON without torch."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from verdict.record import TestRecord


def environment_headline(failure: dict) -> str:
    """`ENVIRONMENT (pattern): first line of the message`: the verdict line of a run its machine stopped."""
    first = next((line.strip() for line in str(failure.get("message", "")).splitlines() if line.strip()), "")
    return f"ENVIRONMENT ({failure.get('name', '?')}): {first}"


def short_message(text: str, limit: int = 200) -> str:
    """The most telling line of a failure message: the first 'E ' line, else the first non-empty one."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line[1:].strip() for line in lines if line.startswith("E ")]
    line = errors[0] if errors else (lines[0] if lines else "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def why(record: TestRecord) -> str:
    """Why a test failed, in one line for every listing (HTML, merged page, compare, trend): its first problem or
    wrong row, else its refusal, else its message's telling line."""
    findings = record.findings
    if findings:
        more = len(findings) - 1
        return findings[0].describe() + (f" (+{more} more)" if more > 0 else "")
    refusal = next((c.refusal for c in record.checks if c.refusal and not c.ok), "")
    return f"refused: {refusal}" if refusal else short_message(record.message)


def item_count(item: Mapping[str, Any]) -> str:
    """'2 test(s); 4 failing check(s), 2 shapes': how many tests an item names and what its evidence spans, the same
    words after its category and name on every page (HTML, summary.md, the terminal)."""
    scope = f"; {item['scope']}" if item.get("scope") else ""
    return f"{len(item.get('cases') or ())} test(s){scope}"


def facts(item: Mapping[str, Any]) -> list[str]:
    """Every fact of an item (its results.json form) a reviewer reads beyond its category, name, scope, evidence and
    cases, where the fault lies first: the HTML pages (reports.tables) and summary.md show these, after the evidence.
    Its ranking internals (`weight`) stay in results.json: they order the items, they explain nothing."""
    blocks = item.get("blocks") or {}
    absorbed = item.get("absorbed") or ()
    parts = [
        f"where: {item['demoted']}" if item.get("demoted") else "",
        "block " + ", ".join(f"{size} ({path} path)" for path, size in blocks.items()) if blocks else "",
        f"control: {item['control']}" if item.get("control") else "",
        "also explains every failure of: " + "; ".join(map(str, absorbed)) if absorbed else "",
        "thin evidence (one shape or at most two checks): ranked after items seen across shapes" if item.get("thin")
        else "",
        "partial: read from the tests that ran (the run stopped early)" if item.get("partial") else "",
    ]
    return [p for p in parts if p]


def item_cases(item: Mapping[str, Any], shown: int) -> tuple[list[str], str]:
    """The first `shown` tests an item names, and '(+N more)' for the rest (results.json holds them all)."""
    cases = [str(c) for c in item.get("cases") or ()]
    return cases[:shown], (f"(+{len(cases) - shown} more)" if len(cases) > shown else "")
