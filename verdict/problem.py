"""What a check found wrong besides its counts, as data: a Problem is a reader's words (a str, so every reader
that prints problems still can) with its kind, which the diagnosis reads instead of the words."""
from __future__ import annotations

from typing import Any


# What a check's problem is, as data (Problem.kind): the diagnosis reads these, never the problem's words.
STRAY_WRITE = "stray write"  # stores into the guard slots around the output
INPUT_MODIFIED = "input modified"
PADDING_MODIFIED = "padding modified"  # the input or the storage around it (row padding, before or after the view)
COPIED = "copied"  # padded rows copied instead of read in place
SHARED_OUTPUT = "shared output"  # two calls handed back one output buffer (the later call overwrote the earlier)
MALFORMED = "malformed result"  # the result's dtype, shape, device, layout or values are not a count per row
OTHER = ""  # anything else (older files, a problem no rule reads)


class Problem(str):
    """A problem's words for a reader, with its kind as data (str, so every reader that prints problems still can)."""

    kind: str

    def __new__(cls, kind: str, text: str) -> Problem:
        made = super().__new__(cls, text)
        made.kind = kind
        return made

    def __eq__(self, other: object) -> bool:
        """Two problems are equal in words and kind; a plain string has no kind to differ in."""
        same_kind = not isinstance(other, Problem) or other.kind == self.kind
        return str.__eq__(self, other) is True and same_kind  # type: ignore[arg-type]

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = str.__hash__

    def __reduce__(self) -> tuple[Any, ...]:
        return Problem, (self.kind, str(self))


def kind_of(problem: object) -> str | None:
    """A problem's kind (OTHER for a plain string); None for a value that is not a problem at all."""
    if isinstance(problem, Problem):
        return problem.kind
    return OTHER if isinstance(problem, str) else None
