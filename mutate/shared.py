"""A mutant's unchanged kernels taken from the original's warm module, so their compiled code is not loaded again.

A mutant's copy is a new module: each of its `@triton.jit` functions is a new object whose cache of compiled
specializations is empty, and on a device every specialization its tests launch is loaded from Triton's disk cache
or compiled again (most of a host-side mutant's time on the H200: docs/mutate.md). A copy's jit function that is
the original's in every respect the compiled code depends on (its source, decorator options and defaults, and the
value of every global its body names, jit callees compared the same way) is replaced in the copy's modules by the
original's object, which the worker has compiled already. Anything not shown equal keeps the copy's own object:
sharing changes how long a mutant takes, never what it computes. The interpreter's functions are never shared
(nothing is compiled there).
"""
from __future__ import annotations

import sys
import types
from typing import Any

from mutate.launch_memo import code_names

_MISSING = object()
_PLAIN = (int, float, bool, str, bytes, type(None))


def share_kernels(copy: str, original: str) -> int:
    """Replace every jit function of the copy's modules (under package `copy`) that equals the same name in the
    original's module (under `original`) by the original's object; how many were replaced."""
    try:
        from triton.runtime.jit import JITFunction
    except ImportError:
        return 0
    same = _Same(JITFunction)
    shared = 0
    for name, module in list(sys.modules.items()):
        if module is None or not (name == copy or name.startswith(copy + ".")):
            continue
        twin = sys.modules.get(original + name[len(copy):])
        if twin is None:
            continue
        for attr, value in list(vars(module).items()):
            holder, jit = _innermost(value, JITFunction)
            old = vars(twin).get(attr, _MISSING)
            _, old_jit = _innermost(old, JITFunction)
            if jit is None or old_jit is None or jit is old_jit or not same.kernels(jit, old_jit):
                continue
            if holder is None:
                setattr(module, attr, old_jit)
            else:
                holder.fn = old_jit  # an autotune or heuristics wrapper keeps its own state, runs the warm kernel
            shared += 1
    return shared


def _innermost(value: Any, jit_type: type) -> tuple[Any, Any]:
    """(the wrapper holding it or None, the JITFunction) for a jit function or one wrapped by autotune/heuristics."""
    holder = None
    for _ in range(8):
        if isinstance(value, jit_type):
            return holder, value
        inner = getattr(value, "fn", None) if not isinstance(value, types.FunctionType) else None
        if inner is None:
            return None, None
        holder, value = value, inner
    return None, None


class _Same:
    """Equality of two jit functions as their compiled code sees them, remembered per pair (callees recur)."""

    def __init__(self, jit_type: type) -> None:
        self.jit_type = jit_type
        self.known: dict[tuple[int, int], bool] = {}

    def kernels(self, new: Any, old: Any) -> bool:
        key = (id(new), id(old))
        if key not in self.known:
            self.known[key] = True  # a recursive call assumes so; the answer below decides
            try:
                self.known[key] = self._kernels(new, old)
            except AttributeError:  # a Triton whose JITFunction lacks a field read here: not shown equal, not shared
                self.known[key] = False
        return self.known[key]

    def _kernels(self, new: Any, old: Any) -> bool:
        if type(new) is not type(old) or new.src != old.src:
            return False
        options = ("do_not_specialize", "do_not_specialize_on_alignment", "debug", "noinline", "version")
        if any(getattr(new, o, None) != getattr(old, o, None) for o in options):
            return False
        if any(getattr(j, o, None) is not None for j in (new, old) for o in ("_repr", "launch_metadata")):
            return False
        fn_new, fn_old = new.fn, old.fn
        if not (self.values(fn_new.__defaults__, fn_old.__defaults__)
                and self.values(fn_new.__kwdefaults__, fn_old.__kwdefaults__)):
            return False
        return all(self.values(fn_new.__globals__.get(n, _MISSING), fn_old.__globals__.get(n, _MISSING))
                   for n in code_names(fn_new.__code__))

    def values(self, a: Any, b: Any) -> bool:
        """Equal for the compiler: the same object, equal plain values (tuples of them), constexprs of equal
        values, or jit functions equal as above; anything else (a module or helper of the unit) is not."""
        if a is b:
            return True
        if type(a) is not type(b):
            return False
        if isinstance(a, self.jit_type):
            return self.kernels(a, b)
        if isinstance(a, tuple):
            return len(a) == len(b) and all(self.values(x, y) for x, y in zip(a, b))
        if isinstance(a, _PLAIN):
            return bool(a == b)
        value_a, value_b = getattr(a, "value", _MISSING), getattr(b, "value", _MISSING)  # tl.constexpr
        return type(a).__name__ == "constexpr" and self.values(value_a, value_b)

