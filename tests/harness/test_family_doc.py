"""docs/families.md is what `python -m cases.doc` writes from the family registry: it cannot drift from the code."""
from __future__ import annotations

import difflib

import pytest

from cases import doc

pytestmark = pytest.mark.nan_harness


def test_families_page_is_generated() -> None:
    """A family added, renamed or re-marked without regenerating the page fails here, with the command to run."""
    want = doc.render()
    have = doc.DOC.read_text(encoding="utf-8") if doc.DOC.is_file() else ""
    diff = "".join(list(difflib.unified_diff(have.splitlines(True), want.splitlines(True), "docs/families.md",
                                             f"{doc.COMMAND}"))[:60])
    assert have == want, f"docs/families.md is stale: run `{doc.COMMAND}` and commit it\n{diff}"
