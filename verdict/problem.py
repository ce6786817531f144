"""What a check found wrong besides its counts, as data: a Problem is a kind, which the diagnosis reads, and a
reader's words (its str)."""
from __future__ import annotations

from dataclasses import dataclass


# What a check's problem is, as data (Problem.kind): the diagnosis reads these, never the problem's words.
STRAY_WRITE = "stray write"  # stores into the guard slots around the output
INPUT_MODIFIED = "input modified"
PADDING_MODIFIED = "padding modified"  # the input or the storage around it (row padding, before or after the view)
COPIED = "copied"  # padded rows copied instead of read in place
SHARED_OUTPUT = "shared output"  # two calls handed back one output buffer (the later call overwrote the earlier)
MALFORMED = "malformed result"  # the result's dtype, shape, device, layout or values are not a count per row
OUT_OF_MEMORY = "out of memory"  # the call failed to allocate: the kernel's own allocations, or a card others fill
OTHER = ""  # anything else (older files, a problem no rule reads)


@dataclass(frozen=True)
class Problem:
    """What a check found wrong besides its counts: its kind (the diagnosis reads it) and its words (a reader's).
    A value: equal in kind and words, never to a plain string."""

    kind: str
    text: str

    def __str__(self) -> str:
        return self.text

    @classmethod
    def of(cls, value: object) -> Problem:
        """A problem as given: a Problem as it is, anything else as words of no known kind (OTHER)."""
        return value if isinstance(value, Problem) else cls(OTHER, str(value))
