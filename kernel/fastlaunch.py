"""Launch a compiled Triton kernel for little more host time than the driver's own launch.

vLLM's sampler calls get_num_nans eagerly once per step, so what a step pays is host cost plus device time.
Triton's `kernel[grid](...)` binds and specializes every argument, builds a cache key and queries the current
device and stream on every call (about 10-18 µs on an H200 host). Here the compiled kernel that Triton's own
first launch returns is kept under a key at least as fine as Triton's specialization (each pointer's dtype and
16-byte alignment; each integer's value class: equal to 1, a multiple of 16, its integer width; every constexpr
and option; the current device), and later calls with the same key run it directly on the current stream.
`launch` builds that key from every argument (about 0.5 µs each); `launch_keyed` takes one from a caller that
knows its arguments better (kernel.num_nans keys on a token for the input's kind and the pointers' alignment, so a
decode step pays one dict lookup), and may pass pointers as integers (Triton's launcher then skips asking the
driver about each one).

Used on CUDA only, and only where this Triton's compiled kernels have the launcher this module knows and no launch
hooks are installed (a profiler's hooks need Triton's own path); everything else takes Triton's own path.
"""
from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

import torch

_NOT_SET = object()
MAX_KEYS = 16384  # keys kept per launcher; past it the cache starts over (each kernel stays in Triton's own cache)


def arg_key(value: object) -> object:
    """What Triton specializes an argument on: a tensor's dtype and 16-byte alignment; an integer's being 1, its
    divisibility by 16 and the width its value needs; anything else (a float, a bool) by its value."""
    if type(value) is int:
        return value == 1, value & 15 == 0, -0x80000000 <= value <= 0x7FFFFFFF, 0 <= value < 2**63
    if isinstance(value, torch.Tensor):
        return value.dtype, value.data_ptr() & 15 == 0
    return type(value), value


def _installed(hook: object) -> bool:
    """A launch hook is set: None means none; a HookChain (newer Triton) counts when it holds calls."""
    if hook is None:
        return False
    calls = getattr(hook, "calls", None)
    return bool(calls) if calls is not None else True


def hooks_installed() -> bool:
    """Whether launch hooks (a profiler's) are installed: then Triton's own path must run them."""
    runtime = getattr(_KNOBS, "runtime", None)
    return runtime is None or _installed(runtime.launch_enter_hook) or _installed(runtime.launch_exit_hook)


try:
    from triton import knobs as _KNOBS
except ImportError:  # an older Triton: no knobs, always Triton's own path
    _KNOBS = None


class FastLauncher:
    """`launcher(grid, *args, **constexprs_and_options)` for one `@triton.jit` function; see the module docstring."""

    def __init__(self, jit_fn: Any) -> None:
        self.jit_fn = jit_fn
        params = inspect.signature(jit_fn.fn).parameters
        self.names = tuple(params)
        self.defaults = {n: p.default for n, p in params.items() if p.default is not inspect.Parameter.empty}
        self.compiled: dict[tuple[object, ...], tuple[Any, tuple[object, ...]]] = {}  # key -> kernel, tail

    def __call__(self, grid: int, *args: object, **kwargs: object) -> None:
        device = args[0].device if isinstance(args[0], torch.Tensor) else None
        if device is None or device.type != "cuda":
            self.jit_fn[(grid,)](*args, **kwargs)
            return
        index = torch.cuda.current_device()
        self.launch_keyed((index, *[arg_key(a) for a in args], *kwargs.items()), index, grid, args, kwargs)

    def launch_keyed(self, key: tuple[object, ...], index: int, grid: int, args: Sequence[object],
                     kwargs: dict[str, object], raw: Sequence[object] | None = None) -> None:
        """Launch on CUDA card `index` (the current one) under a caller's key, which must hold the card (or stand
        for it) and be at least as fine as Triton's specialization of `args` and `kwargs` (see arg_key). `raw`:
        the same arguments with each tensor replaced by its data_ptr(), passed to the compiled kernel instead."""
        entry = self.compiled.get(key)
        if entry is None or hooks_installed():
            compiled = self.jit_fn[(grid,)](*args, **kwargs)  # Triton's own path compiles, caches and launches
            if entry is None and _launchable(compiled):
                if len(self.compiled) >= MAX_KEYS:
                    self.compiled.clear()
                self.compiled[key] = (compiled, self._tail(kwargs, len(args)))
            return
        compiled, tail = entry
        stream = torch._C._cuda_getCurrentRawStream(index)
        compiled.run(grid, 1, 1, stream, compiled.function, compiled.packed_metadata, None, None, None,
                     *(args if raw is None else raw), *tail)

    def _tail(self, kwargs: dict[str, object], positional: int) -> tuple[object, ...]:
        """The values of the parameters after the first `positional` ones (constexprs included), in declaration
        order as Triton's launcher takes them; the key fixes kwargs, so the tail is kept with the compiled kernel."""
        values = []
        for name in self.names[positional:]:
            value = kwargs.get(name, self.defaults.get(name, _NOT_SET))
            if value is _NOT_SET:
                raise TypeError(f"{self.jit_fn.fn.__name__}: missing argument {name}")
            values.append(value)
        return tuple(values)


def _launchable(compiled: object) -> bool:
    """This Triton's compiled kernel exposes the launcher and handles `FastLauncher` calls."""
    return all(hasattr(compiled, name) for name in ("run", "function", "packed_metadata")) and \
        getattr(compiled, "function", None) is not None
