"""Specializations of a `@triton.jit` function (mutate.compiled compiles them) as plain JSON values (Spec), so the
orchestrator can hand them to a worker, read from a launch's arguments through Triton's own binder or by hand; and
the JITFunction behind whatever wraps a kernel (autotune, heuristics, the interpreter's InterpretedFunction).
"""
from __future__ import annotations

import ast
import functools
import importlib
import inspect
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from verdict.codec import from_data, to_data

# the launch options that change the generated code; taken from a launch's metadata, passed back to triton.compile
OPTION_KEYS: tuple[str, ...] = ("num_warps", "num_ctas", "num_stages", "maxnreg", "enable_fp_fusion", "debug")


@dataclass(frozen=True)
class Spec:
    """One specialization, in plain JSON values, so that the orchestrator can hand it to a worker process.

    Keys are parameter names ("name.1" for item 1 of a tuple parameter); signature values are Triton type strings
    ("*fp32", "i32", "constexpr"); attrs values Triton's own [[attribute, value], ...] (["tt.divisibility", 16]).
    """

    signature: dict[str, Any]
    constexprs: dict[str, Any] = field(default_factory=dict)
    attrs: dict[str, list[list[Any]]] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        """One line of JSON, keys sorted, so equal specs give equal text."""
        return json.dumps(to_data(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Spec:
        """The Spec that to_json wrote."""
        return from_data(cls, json.loads(text))  # type: ignore[no-any-return]

    def __hash__(self) -> int:  # dict fields: hash the canonical JSON so specs can be deduplicated in sets
        return hash(self.to_json())


_REMADE: dict[Callable[..., Any], Any] = {}


def as_jit_function(fn: Any) -> Any:
    """The JITFunction behind fn (through autotune/heuristics wrappers); re-made when fn is interpreted."""
    from triton.runtime.jit import JITFunction

    for _ in range(8):
        if isinstance(fn, JITFunction):
            return fn
        if _interpreted(fn):  # TRITON_INTERPRET=1 at import: triton.jit gave an InterpretedFunction
            return _remade(fn.fn, getattr(fn, "kwargs", {}))
        fn = getattr(fn, "fn", None)
    raise TypeError("not a @triton.jit function (no JITFunction or InterpretedFunction under .fn)")


def named_jit_functions(jit: Any) -> list[Any]:
    """The @triton.jit functions jit's body names through its globals (`helper` or `module.helper`), as JITFunctions:
    what a compile of jit compiles in, and what its launch runs."""
    out: list[Any] = []
    scope = getattr(jit, "__globals__", None) or getattr(getattr(jit, "fn", None), "__globals__", {})
    try:
        tree = ast.parse(jit.src if hasattr(jit, "src") else "")
    except SyntaxError:
        return out
    for node in ast.walk(tree):
        chain: list[str] = []
        while isinstance(node, ast.Attribute):
            chain.insert(0, node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id not in scope:
            continue
        value = scope[node.id]
        for attr in [None, *chain]:
            if attr is not None:
                value = getattr(value, attr, None)
            try:
                out.append(as_jit_function(value))
            except (TypeError, ImportError):
                continue
    return out


def _interpreted(value: Any) -> bool:
    """Whether value is Triton's InterpretedFunction (a @triton.jit function under TRITON_INTERPRET=1)."""
    return type(value).__name__ == "InterpretedFunction" and inspect.isfunction(getattr(value, "fn", None))


def _remade(fn: Callable[..., Any], options: Mapping[str, Any]) -> Any:
    """A JITFunction of an interpreted function's Python function: its parameters, for specs_from_call."""
    from triton.runtime.jit import JITFunction

    if fn not in _REMADE:
        accepted = inspect.signature(JITFunction.__init__).parameters
        _REMADE[fn] = JITFunction(fn, **{k: v for k, v in options.items() if k in accepted})
    return _REMADE[fn]


def interpreted_here(jit_fn: Any = None) -> bool:
    """Whether Triton's own language functions (or jit_fn) were made under TRITON_INTERPRET=1 in this process."""
    try:
        import triton.language.standard as standard
    except ImportError:  # laid out otherwise: judge by jit_fn alone
        standard = None
    library = vars(standard).values() if standard is not None else ()
    return any(map(_interpreted, library)) or (jit_fn is not None and _interpreted(jit_fn))


def _plain(value: Any) -> Any:
    """A constexpr value as plain JSON (dtypes, tuples and JIT functions tagged), so a worker can rebuild it."""
    kind = type(value).__name__
    if kind == "constexpr":
        return _plain(value.value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, tuple):
        return {"tuple": [_plain(v) for v in value]}
    if kind == "dtype":  # a scalar tl.dtype (pointer and block types have other class names)
        return {"dtype": str(value)}
    if hasattr(value, "fn") and hasattr(value.fn, "__qualname__"):
        return {"jit": f"{value.fn.__module__}:{value.fn.__qualname__}"}
    raise TypeError(f"constexpr value {value!r} has no JSON form")


def unplain(value: Any) -> Any:
    """The Python value _plain encoded."""
    if not isinstance(value, dict):
        return value
    if "tuple" in value:
        return tuple(unplain(v) for v in value["tuple"])
    if "dtype" in value:
        import triton.language as tl

        return tl.dtype(value["dtype"])
    module, _, qualname = value["jit"].partition(":")
    return functools.reduce(getattr, qualname.split("."), importlib.import_module(module))


def _as_json_type(ty: Any) -> Any:
    """A signature entry as JSON keeps it (tuple parameters' nested types become lists)."""
    return [_as_json_type(t) for t in ty] if isinstance(ty, (tuple, list)) else ty


def as_triton_type(ty: Any) -> Any:
    """A signature entry as Triton wants it (lists back to tuples)."""
    return tuple(as_triton_type(t) for t in ty) if isinstance(ty, list) else ty


def _key(names: Sequence[str], path: tuple[int, ...]) -> str:
    """Triton's argument path (index, sub-index, ...) as a name: (2,) -> "n", (2, 1) -> "n.1"."""
    return ".".join([names[path[0]], *map(str, path[1:])])


def param_path(names: Sequence[str], key: str) -> tuple[int, ...]:
    """The argument path _key named."""
    head, *rest = key.split(".")
    return (names.index(head), *map(int, rest))


def _spec(names: Sequence[str], signature: Mapping[str, Any], constants: Mapping[tuple[int, ...], Any],
          attrs: Mapping[tuple[int, ...], Any], options: Mapping[str, Any]) -> Spec:
    """A Spec from Triton's own ASTSource fields (path-keyed constants and attrs)."""
    return Spec(signature={k: _as_json_type(v) for k, v in signature.items()},
                constexprs={_key(names, p): _plain(v) for p, v in constants.items()},
                attrs={_key(names, p): [list(a) for a in v] for p, v in attrs.items() if v},
                options={k: options[k] for k in OPTION_KEYS if options.get(k) is not None})


def specs_from_call(jit_fn: Any, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Spec:
    """The Spec a launch jit_fn[grid](*args, **kwargs) would compile, where no device compiled it (interpreter).

    Triton's own binder (native_specialize_impl through create_function_from_signature: pointer type by dtype,
    i32/i64/u64 by range, an int 1 made a constexpr, divisibility by 16 of ints and data pointers) where Triton
    has it; else _spec_by_hand's rules, which follow 3.6/3.9's.
    """
    jit = as_jit_function(jit_fn)
    try:
        return _spec_by_binder(jit, args, kwargs)
    except (ImportError, AttributeError):
        return _spec_by_hand(jit, args, kwargs)


def _call_options(jit: Any, options: Mapping[str, Any]) -> dict[str, Any]:
    """The launch options of a call that change code (debug as JITFunction.run decides it)."""
    out = {k: options[k] for k in OPTION_KEYS if options.get(k) is not None}
    if out.get("debug", getattr(jit, "debug", None)):
        out["debug"] = True
    return out


def _spec_by_binder(jit: Any, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Spec:
    """specs_from_call through Triton's binder and path helpers (private: triton.runtime.jit, triton._utils)."""
    from triton._utils import find_paths_if, get_iterable_path
    from triton.backends.compiler import BaseBackend
    from triton.runtime.jit import create_function_from_signature

    binder = create_function_from_signature(jit.signature, jit.params, BaseBackend)
    bound, specialization, options = binder(*args, **kwargs)
    types = [s[0] for s in specialization]
    values = list(bound.values())
    constants = {p: get_iterable_path(values, p) for p in find_paths_if(types, lambda _, t: t == "constexpr")}
    marks = ["" if s[0] == "constexpr" else s[1] for s in specialization]
    attrs = {p: BaseBackend.parse_attr(get_iterable_path(marks, p))
             for p in find_paths_if(marks, lambda _, m: isinstance(m, str))}
    return _spec(jit.arg_names, dict(zip(jit.arg_names, types)), constants, attrs, _call_options(jit, options))


_INT_TYPES = (("i32", -2**31, 2**31), ("i64", -2**63, 2**63), ("u64", 0, 2**64))


def _spec_by_hand(jit: Any, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Spec:
    """specs_from_call without Triton's binder: flat parameters only, Triton 3.6/3.9's rules written out."""
    sig = inspect.signature(jit.fn)
    bound = sig.bind(*args, **{k: v for k, v in kwargs.items() if k in sig.parameters})
    bound.apply_defaults()
    signature: dict[str, Any] = {}
    constexprs: dict[str, Any] = {}
    attrs: dict[str, list[list[Any]]] = {}
    for name, value in bound.arguments.items():
        annotation = str(sig.parameters[name].annotation)
        ty, aligned = _type_by_hand(value, constexpr="constexpr" in annotation)
        signature[name] = ty
        if ty == "constexpr":
            constexprs[name] = _plain(value)
        elif aligned:
            attrs[name] = [["tt.divisibility", 16]]
    return Spec(signature, constexprs, attrs, _call_options(jit, kwargs))


def _type_by_hand(value: Any, constexpr: bool) -> tuple[str, bool]:
    """One argument's Triton type and whether it is specialized as divisible by 16."""
    if constexpr or value is None or (isinstance(value, int) and not isinstance(value, bool) and value == 1):
        return "constexpr", False
    if isinstance(value, bool):
        return "u1", False
    if isinstance(value, int):
        ty = next((t for t, lo, hi in _INT_TYPES if lo <= value < hi), None)
        if ty is None:
            raise ValueError(f"integer {value} fits no Triton integer type")
        return ty, value % 16 == 0
    if isinstance(value, float):
        return "fp32", False
    if hasattr(value, "data_ptr") and hasattr(value, "dtype"):
        return "*" + _dtype_name(value.dtype), value.data_ptr() % 16 == 0
    raise TypeError(f"no Triton type for argument {value!r}")


def _dtype_name(dtype: Any) -> str:
    """torch.float32 -> fp32, torch.bfloat16 -> bf16, torch.int64 -> i64 (Triton's names)."""
    name = str(dtype).split(".")[-1]
    names = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float64": "fp64", "bool": "i1",
             "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8"}
    return names.get(name, name)
