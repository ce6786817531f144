"""Records <-> JSON in one place: a frozen dataclass becomes a dict of its fields (tuples as lists, nested records as
dicts) and is rebuilt from its fields' type hints, so no record writes its own pair of converters. Torch-free."""
from __future__ import annotations

import functools
import json
import types
import typing
from collections.abc import Mapping
from dataclasses import MISSING, fields, is_dataclass
from typing import Any, TypeVar

R = TypeVar("R", bound="JsonRecord")
_SCALARS = (str, int, float, bool)


def to_data(value: Any) -> Any:
    """VALUE as JSON-ready data: records as dicts of their fields, tuples as lists, all the way down."""
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_data(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, (tuple, list)):
        return [to_data(v) for v in value]
    if isinstance(value, dict):
        return {k: to_data(v) for k, v in value.items()}
    return value


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def from_data(cls: type[Any], data: Mapping[str, Any]) -> Any:
    """A CLS built from DATA by its fields' types; keys it does not know are ignored (newer writers may add fields),
    a missing or null field takes its default, or its type's empty value (older writers lacked it)."""
    hints = _hints(cls)
    made: dict[str, Any] = {}
    for f in fields(cls):
        value = data.get(f.name)
        if value is None and (f.default is not MISSING or f.default_factory is not MISSING):
            continue
        made[f.name] = _build(hints[f.name], value)
    return cls(**made)


def _build(hint: Any, value: Any) -> Any:
    """VALUE read as the type HINT names: a record, a tuple of them, a scalar, or as it is (Any, dict)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return None if value is None else _build(next(a for a in args if a is not type(None)), value)
    if origin is tuple:
        items = list(value or ())
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_build(args[0], v) for v in items)
        return tuple(_build(a, v) for a, v in zip(args, items))
    if isinstance(hint, type) and is_dataclass(hint):
        reader = getattr(hint, "from_dict", None)
        return reader(value or {}) if reader else from_data(hint, value or {})
    if hint in _SCALARS:
        return hint() if value is None else hint(value)
    return value


class JsonRecord:
    """to_dict/from_dict and their JSON text for a frozen dataclass, through to_data and from_data."""

    def to_dict(self) -> dict[str, Any]:
        return to_data(self)  # type: ignore[no-any-return]

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    @classmethod
    def from_dict(cls: type[R], data: Mapping[str, Any]) -> R:
        return from_data(cls, data)  # type: ignore[no-any-return]

    @classmethod
    def from_json(cls: type[R], text: str) -> R:
        return cls.from_dict(json.loads(text))
