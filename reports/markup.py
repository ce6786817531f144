"""HTML escaping for every page the harness writes (pytest-html's, the merged page, the trend): one helper, so text
from kernels, ids and messages never becomes markup. Torch-free, like the nightly that uses it."""
from __future__ import annotations

from html import escape


def esc(value: object) -> str:
    """`value` as HTML text or attribute value (quotes escaped too); None shows as nothing."""
    return "" if value is None else escape(str(value), quote=True)
