"""Replay interpreted kernel launches that a warm worker has already run with the same code and the same bytes.

On the CPU nearly all of a mutant's time is kernels interpreted in Python, and most mutants leave most launches as
an earlier job made them. A launch's key is everything it can see: the jit source it runs and the globals it names,
transitively; every argument (a tensor by its layout and a hash of its whole storage); the grid. Its effect, the
bytes of every argument storage it changed, is written back on a replay (docs/mutate.md, step 4). Anything the key
cannot describe exactly runs as is; only while `replaying()` is active (the traced original only records).
"""
from __future__ import annotations

import hashlib
import inspect
import threading
import types
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch

MAX_STORAGE_BYTES = 256 << 20  # larger storages are not hashed: the launch runs
MAX_MEMO_BYTES = 1 << 30  # stored effects kept per worker, least recently used dropped first
SIMPLE = (int, float, bool, str, type(None))
Position = int | str  # where a launch argument sits: its index among the positional ones, or its keyword
FIXED_PACKAGES = ("triton", "torch", "numpy", "math")  # the same for every mutant: named, never read through


class Unsupported(Exception):
    """Something the key cannot describe exactly: run the launch as is."""


@dataclass
class LaunchMemo:
    """Effects of interpreted launches by key, least recently used dropped past `limit_bytes`; counts for the log."""

    limit_bytes: int = MAX_MEMO_BYTES
    effects: OrderedDict[str, list[tuple[Position, torch.Tensor]]] = field(default_factory=OrderedDict)
    stored_bytes: int = 0
    hits: int = 0
    misses: int = 0
    bypassed: int = 0

    def get(self, key: str) -> list[tuple[Position, torch.Tensor]] | None:
        found = self.effects.get(key)
        if found is not None:
            self.effects.move_to_end(key)
        return found

    def put(self, key: str, effect: list[tuple[Position, torch.Tensor]]) -> None:
        size = sum(t.numel() for _, t in effect)
        if size > self.limit_bytes:
            return
        self.effects[key] = effect
        self.stored_bytes += size
        while self.stored_bytes > self.limit_bytes:
            _, dropped = self.effects.popitem(last=False)
            self.stored_bytes -= sum(t.numel() for _, t in dropped)


_state = threading.local()


@contextmanager
def replaying(memo: LaunchMemo, replay: bool = True) -> Iterator[LaunchMemo]:
    """Remember interpreted launches made in this thread meanwhile, and replay them unless `replay` is False (the
    traced original: its coverage needs every line to run, its launches may serve the mutants after it)."""
    install()
    before = (getattr(_state, "memo", None), getattr(_state, "replay", True))
    _state.memo, _state.replay, _state.code = memo, replay, {}
    try:
        yield memo
    finally:
        (_state.memo, _state.replay), _state.code = before, {}


def _bytes_of(tensor: torch.Tensor) -> torch.Tensor:
    """The whole storage under a tensor as uint8: what a kernel given its pointer can read or write."""
    if tensor.device.type != "cpu":
        raise Unsupported("a tensor off the CPU")
    storage = tensor.untyped_storage()
    if storage.nbytes() > MAX_STORAGE_BYTES:
        raise Unsupported("storage too large to hash")
    return torch.empty(0, dtype=torch.uint8).set_(storage)


def _digest(tensor: torch.Tensor) -> str:
    return hashlib.blake2b(_bytes_of(tensor).numpy().tobytes(), digest_size=16).hexdigest()


def _value_key(value: Any) -> str:
    """A global a kernel names: simple values and Triton constants by repr, jit functions by their code."""
    if isinstance(value, SIMPLE):
        return f"{type(value).__name__}:{value!r}"
    jitted = getattr(value, "fn", None)
    if isinstance(jitted, types.FunctionType) and type(value).__name__ in ("InterpretedFunction", "JITFunction"):
        return "jit:" + _code_key(value)
    if isinstance(value, types.FunctionType):  # a plain helper the interpreter would call: its source counts
        try:
            return "py:" + inspect.getsource(value)
        except (OSError, TypeError) as exc:
            raise Unsupported(f"no source for {value.__qualname__}") from exc
    if isinstance(value, (types.ModuleType, types.BuiltinFunctionType, type)):
        return f"{type(value).__name__}:{getattr(value, '__module__', '')}:{getattr(value, '__qualname__', '')}:" \
               f"{getattr(value, '__name__', '')}"
    module = type(value).__module__
    if module.startswith("triton"):  # tl.constexpr, tl.dtype: their repr holds their value
        return f"{module}.{type(value).__qualname__}:{value!r}"
    raise Unsupported(f"a global of type {type(value).__qualname__}")


def code_names(code: types.CodeType) -> set[str]:
    """Every name a function's code (and the code nested in it) looks up: its globals and attributes, a superset."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= code_names(const)
    return names


def _code_key(jit: Any) -> str:
    """The launched function's source and every global it names (attributes of named modules included), by value;
    computed once per function object while replaying."""
    cache: dict[int, tuple[Any, str]] = _state.code
    found = cache.get(id(jit))
    if found is not None and found[0] is jit:
        return found[1]
    cache[id(jit)] = (jit, "cycle")  # a recursive reference names itself by its source alone
    fn = jit.fn
    try:
        source = inspect.getsource(fn)
    except (OSError, TypeError) as exc:
        raise Unsupported(f"no source for {fn.__qualname__}") from exc
    names = code_names(fn.__code__)
    parts = [source]
    for name in sorted(names):
        if name not in fn.__globals__:
            continue
        value = fn.__globals__[name]
        parts.append(f"{name}={_value_key(value)}")
        if isinstance(value, types.ModuleType) and not value.__name__.startswith(FIXED_PACKAGES):
            for attr in sorted(names):  # module.attr: every attribute of it the code names, by value
                if hasattr(value, attr) and not isinstance(getattr(value, attr), types.ModuleType):
                    parts.append(f"{name}.{attr}={_value_key(getattr(value, attr))}")
    key = hashlib.blake2b("\n".join(parts).encode(), digest_size=16).hexdigest()
    cache[id(jit)] = (jit, key)
    return key


def _arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[tuple[Position, Any]]:
    return [*enumerate(args), *sorted(kwargs.items())]


def _argument(args: tuple[Any, ...], kwargs: dict[str, Any], position: Position) -> Any:
    return args[position] if isinstance(position, int) else kwargs[position]


def storage_digests(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[Position, str]:
    """A hash of the whole storage of every tensor argument, positional or keyword."""
    return {pos: _digest(a) for pos, a in _arguments(args, kwargs) if isinstance(a, torch.Tensor)}


def launch_key(jit: Any, args: tuple[Any, ...], kwargs: dict[str, Any], grid: Any,
               digests: dict[Position, str]) -> str:
    """Everything an interpreted launch can see, as one string (Unsupported when something cannot be named);
    `digests` from storage_digests."""
    if callable(grid) or not isinstance(grid, (tuple, list, int)):
        raise Unsupported("a computed grid")
    parts = [_code_key(jit), f"grid={tuple(grid) if not isinstance(grid, int) else (grid,)}"]
    for pos, value in _arguments(args, kwargs):
        if isinstance(value, torch.Tensor):
            parts.append(f"{pos}=T:{value.dtype}:{tuple(value.shape)}:{value.stride()}:{value.storage_offset()}:"
                         f"{value.untyped_storage().nbytes()}:{digests[pos]}")
        else:
            parts.append(f"{pos}={_value_key(value)}")
    return hashlib.blake2b("\n".join(parts).encode(), digest_size=20).hexdigest()


def _memo_run(original: Any) -> Any:
    def run(self: Any, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
        memo: LaunchMemo | None = getattr(_state, "memo", None)
        if memo is None or warmup:
            return original(self, *args, grid=grid, warmup=warmup, **kwargs)
        try:
            before = storage_digests(args, kwargs)
            key = launch_key(self, args, kwargs, grid, before)
        except Exception:  # noqa: BLE001 - anything the key cannot describe (Unsupported, a hostile tensor): run it
            memo.bypassed += 1
            return original(self, *args, grid=grid, warmup=warmup, **kwargs)
        effect = memo.get(key) if _state.replay else None
        if effect is not None:
            memo.hits += 1
            for position, after in effect:
                _bytes_of(_argument(args, kwargs, position)).copy_(after)
            return None
        memo.misses += 1
        result = original(self, *args, grid=grid, warmup=warmup, **kwargs)
        try:
            changed = [(pos, _bytes_of(t).clone()) for pos, digest in before.items()
                       if _digest(t := _argument(args, kwargs, pos)) != digest]
        except Exception:  # noqa: BLE001 - an effect that cannot be read back is not kept
            return result
        memo.put(key, changed)
        return result

    run._launch_memo = True  # type: ignore[attr-defined]
    return run


def install() -> bool:
    """Wrap the interpreter's launch once (a no-op where this Triton has no InterpretedFunction.run)."""
    try:
        from triton.runtime.interpreter import InterpretedFunction
    except ImportError:
        return False
    current = getattr(InterpretedFunction, "run", None)
    if current is None or getattr(current, "_launch_memo", False):
        return current is not None
    InterpretedFunction.run = _memo_run(current)  # type: ignore[method-assign]
    return True
