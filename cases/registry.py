"""Find the case families: every module of `cases.families`, plus modules named on the command line."""
from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from cases import families as builtin
from cases.family import Case, Context, Family


class FamilyError(ValueError):
    """A family module that cannot be used: no FAMILY, a duplicate name, or case ids that collide."""


@dataclass(frozen=True)
class FamilyCase:
    """One case of one family: what the generic test is parametrized with."""

    family: Family
    case: Case

    def __str__(self) -> str:
        return str(self.case)


def load(extra_modules: Iterable[str] = ()) -> tuple[Family, ...]:
    """The built-in families and the extra ones, ordered by `order` then name; names must be unique."""
    found: dict[str, Family] = {}
    builtins = sorted(f"{builtin.__name__}.{m.name}" for m in pkgutil.iter_modules(builtin.__path__))
    for module_name in [*builtins, *extra_modules]:
        module = importlib.import_module(module_name)
        family = getattr(module, "FAMILY", None)
        if not isinstance(family, Family):
            raise FamilyError(f"{module_name} has no FAMILY (a cases.family.Family)")
        if family.name in found and found[family.name] is not family:
            raise FamilyError(f"two families are called {family.name!r} ({module_name})")
        found[family.name] = family
    return tuple(sorted(found.values(), key=lambda f: (f.order, f.name)))


def expand(families: Sequence[Family], context: Context) -> list[FamilyCase]:
    """Every case of every family for this context; a case id used twice is an error (ids select with -k)."""
    seen: dict[str, str] = {}
    out: list[FamilyCase] = []
    for family in families:
        for case in family.cases(context):
            key = str(case)
            if key in seen:
                raise FamilyError(f"case id {key!r} of family {family.name} is also one of {seen[key]}")
            seen[key] = family.name
            out.append(FamilyCase(family, case))
    return out
