"""What a case family is: its cases, how each is built, its marker, and how the report's summary groups it.

A family is one module under `cases/families/` (or named with --nan-family) exposing `FAMILY`. Nothing else
needs editing to add one: the generic test runs every family's cases through every path, the result record
carries its `CaseParams`, and the summary lays it out by its `summary` grouping.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from verdict.record import CaseParams

if TYPE_CHECKING:  # the reports read families on a Python without torch (a missing-package ending)
    import torch


class Case(Protocol):
    """A case record: a frozen value whose str() is its pytest id (unique across families)."""

    def __str__(self) -> str: ...


@dataclass(frozen=True)
class Context:
    """What a family may vary its cases by: the backend's name and its large-batch size, and run options."""

    device: str = "cpu"
    batch_rows: int = 257
    options: tuple[tuple[str, Any], ...] = ()

    def option(self, name: str, default: Any = None) -> Any:
        return dict(self.options).get(name, default)


@dataclass(frozen=True)
class Built:
    """A case's tensors on the CPU: the logical logits, the expected counts and a label per row.

    `storage` is the whole CPU allocation when `logits` is a view into it (padded rows): the input is placed on
    the device as the same view of a copy of that storage, and everything in it must survive the call.
    `build_on` makes the device input itself instead (a view far into a large allocation); it may raise MemoryError.
    """

    logits: torch.Tensor
    expected: torch.Tensor
    labels: Sequence[str] | None = None
    storage: torch.Tensor | None = None
    build_on: Callable[[str], torch.Tensor] | None = None

    def input_on(self, device: str) -> torch.Tensor:
        """The input as the kernel gets it: on `device`, with the CPU logits' strides and offset."""
        if self.build_on is not None:
            return self.build_on(device)
        if self.storage is None:
            return self.logits.to(device, copy=True)
        whole = self.storage.to(device, copy=True)
        return whole.as_strided(self.logits.shape, self.logits.stride(), self.logits.storage_offset())


PATHS: tuple[str, ...] = ("wrapper", "direct")  # every case runs through each: get_num_nans, then the bare kernel


# -- how the summary shows a family ------------------------------------------------------------------------
@dataclass(frozen=True)
class Tally:
    """One line: how many of the family's cases passed, failed or did not run."""


@dataclass(frozen=True)
class Grid:
    """A table: rows keyed by two CaseParams fields, columns by two more, one cell per case over its paths."""

    rows: tuple[str, str]
    cols: tuple[str, str]


@dataclass(frozen=True)
class ClassTable:
    """IEEE class x dtype: a row label that names classes attributes a wrong count to them."""

    classes: tuple[str, ...]
    nan_classes: tuple[str, ...]


@dataclass(frozen=True)
class Totals:
    """One line per check: patterns, NaNs expected, NaNs counted (exhaustive sweeps)."""


Grouping = Tally | Grid | ClassTable | Totals


@dataclass(frozen=True)
class Family:
    """One case family; see the module docstring."""

    name: str
    marker: str
    description: str  # what this family is: its section heading in the report says it
    cases: Callable[[Context], Sequence[Case]]
    build: Callable[[Any], Built]
    params: Callable[[Any], CaseParams]
    summary: Grouping = field(default_factory=Tally)
    extra_markers: tuple[str, ...] = ()  # markers every case of the family also gets (e.g. nan_bigoffset)
    order: int = 100  # position in collection and in the summary
    marker_help: str = ""  # what `marker` selects when families share it (default: the description)

    def __post_init__(self) -> None:
        """Every CaseParams of this family names it: a family module writes its name once, in `Family(...)`."""
        object.__setattr__(self, "params", partial(_named, self.name, self.params))

    def markers(self) -> dict[str, str]:
        own = {m: self.description for m in self.extra_markers}
        return {self.marker: self.marker_help or self.description, **own}


def _named(family: str, params: Callable[[Any], CaseParams], case: Any) -> CaseParams:
    """The case's CaseParams with `family` as its family, whatever the family module's `params` put there."""
    return replace(params(case), family=family)


def params_of(case: Any, shape: tuple[int, ...], detail: str, layout: str = "") -> CaseParams:
    """CaseParams for the usual record fields (dtype, layout, seed) of a case; its Family fills in the family."""
    return CaseParams("", str(case), getattr(case, "dtype", ""), layout or getattr(case, "layout", ""),
                      tuple(shape), detail, getattr(case, "seed", None))
