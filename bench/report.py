"""bench.json on disk: written here; read back (and linked from the HTML report) by reports.bench_json."""
from __future__ import annotations

import json
from pathlib import Path

from reports.bench_json import NotABenchFile, html_link_fragment, load

__all__ = ["NotABenchFile", "html_link_fragment", "load", "write"]


def write(path: Path, payload: dict[str, object]) -> None:
    """Write bench.json (creating its folder)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=1) + "\n")
