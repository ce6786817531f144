"""--kernel-setup MODULE[:CALLABLE]: run what a deployment runs before the kernel module is imported, and say
what the kernel names resolve to afterwards (a patch can swap the kernel without the module name changing)."""
from __future__ import annotations

import importlib
import inspect
import sys
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import ModuleType

JsonValue = str | int | bool | None | dict[str, "JsonValue"]


class SetupError(Exception):
    """A --kernel-setup spec that could not be parsed, imported or run; the message names the spec and cause."""


@dataclass(frozen=True)
class SetupSpec:
    """One --kernel-setup value: a module to import, and optionally an attribute of it to call with no args."""

    module: str
    attribute: str | None = None

    def __str__(self) -> str:
        return self.module if self.attribute is None else f"{self.module}:{self.attribute}"


def _dotted(text: str) -> bool:
    """True for `a.b.c` where every part is a Python identifier."""
    return bool(text) and all(part.isidentifier() for part in text.split("."))


def parse_spec(text: str) -> SetupSpec:
    """MODULE or MODULE:CALLABLE (CALLABLE may be dotted, e.g. Class.method); anything else is a SetupError."""
    module, sep, attribute = text.strip().partition(":")
    if not _dotted(module) or (sep and not _dotted(attribute)):
        raise SetupError(
            f"--kernel-setup {text!r}: expected MODULE or MODULE:CALLABLE with dotted Python names, "
            "e.g. setups.vllm_interpreter:install"
        )
    return SetupSpec(module, attribute if sep else None)


def parse_specs(texts: Iterable[str] | None) -> tuple[SetupSpec, ...]:
    """Every spec in command-line order (the option is repeatable; None means none given)."""
    return tuple(parse_spec(text) for text in texts or ())


def _where(exc: BaseException) -> str:
    """The innermost frame of a traceback, so the message points at the failing line of the setup."""
    frames = traceback.extract_tb(exc.__traceback__)
    if isinstance(exc, SyntaxError) and exc.filename:
        return f" ({exc.filename}:{exc.lineno})"
    return f" ({frames[-1].filename}:{frames[-1].lineno})" if frames else ""


def _cause(exc: BaseException) -> str:
    """One line for an exception, SystemExit spelled as the exit it asked for."""
    if isinstance(exc, SystemExit):
        return f"called sys.exit({exc.code!r})"
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def _import(spec: SetupSpec) -> ModuleType:
    """Import the spec's module; a missing module and a module that fails while importing read differently."""
    try:
        return importlib.import_module(spec.module)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - any failure of a user's setup is a usage error
        if isinstance(exc, ModuleNotFoundError) and exc.name and f"{spec.module}.".startswith(f"{exc.name}."):
            raise SetupError(f"--kernel-setup {spec}: no module named {exc.name!r} (is it on PYTHONPATH?)") from exc
        raise SetupError(f"--kernel-setup {spec}: importing {spec.module} failed: {_cause(exc)}{_where(exc)}") from exc


def _resolve(spec: SetupSpec, module: ModuleType) -> Callable[[], object]:
    """Follow the dotted attribute and insist on something callable."""
    assert spec.attribute is not None
    obj: object = module
    for part in spec.attribute.split("."):
        if not hasattr(obj, part):
            raise SetupError(f"--kernel-setup {spec}: {spec.module} has no attribute {spec.attribute!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise SetupError(f"--kernel-setup {spec}: {spec.attribute} is a {type(obj).__name__}, not callable")
    return obj


def run_setup(spec: SetupSpec) -> None:
    """Import the module (its side effects are the setup), then call the attribute with no arguments, if named.

    KeyboardInterrupt is left alone: it is the user stopping the run, not a broken setup.
    """
    module = _import(spec)
    if spec.attribute is None:
        return
    setup = _resolve(spec, module)
    try:
        setup()
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - any failure of a user's setup is a usage error
        raise SetupError(f"--kernel-setup {spec}: {spec.attribute}() failed: {_cause(exc)}{_where(exc)}") from exc


def run_setups(specs: Iterable[SetupSpec]) -> tuple[SetupSpec, ...]:
    """Run each spec in order, stopping at the first failure; returns what ran."""
    done: list[SetupSpec] = []
    for spec in specs:
        run_setup(spec)
        done.append(spec)
    return tuple(done)


def _is_jit(obj: object) -> bool:
    """A Triton JITFunction or interpreter function: callable wrapper with the Python function in .fn."""
    return inspect.isfunction(getattr(obj, "fn", None)) and type(obj).__module__.split(".")[0] == "triton"


def _source_file(obj: object) -> str | None:
    """The file an object was defined in, None for builtins and other objects without one."""
    try:
        return inspect.getsourcefile(obj) or inspect.getfile(obj)  # type: ignore[arg-type]
    except (TypeError, OSError):
        return None


def describe_object(obj: object) -> dict[str, JsonValue] | None:
    """qualname, defining module and file of a function, Triton kernel (its .fn) or module; None for None."""
    if obj is None:
        return None
    if isinstance(obj, ModuleType):
        return {"kind": "module", "qualname": obj.__name__, "module": obj.__name__, "file": _source_file(obj)}
    jit = _is_jit(obj)
    target = getattr(obj, "fn") if jit else obj
    qualname = getattr(target, "__qualname__", None) or type(target).__qualname__
    module = getattr(target, "__module__", None) or type(target).__module__
    kind = f"triton {type(obj).__name__}" if jit else type(obj).__name__
    return {"kind": kind, "qualname": str(qualname), "module": str(module), "file": _source_file(target)}


def _libdevice_of(kernel: object, module: ModuleType) -> tuple[str, object] | None:
    """Which libdevice a kernel resolves at launch: the one in its defining module's globals, else the module's."""
    fn = getattr(kernel, "fn", None)
    scopes: list[tuple[str, dict[str, object]]] = []
    if inspect.isfunction(fn):
        scopes.append((str(fn.__globals__.get("__name__", "?")), fn.__globals__))
    scopes.append((module.__name__, vars(module)))
    for scope_name, scope in scopes:
        if "libdevice" in scope:
            return scope_name, scope["libdevice"]
    return None


def describe_resolution(kernel_module: ModuleType | str) -> dict[str, JsonValue]:
    """After setup: what get_num_nans, _num_nans_kernel and the kernel's libdevice resolve to (JSON-ready)."""
    module = sys.modules[kernel_module] if isinstance(kernel_module, str) else kernel_module
    kernel = getattr(module, "_num_nans_kernel", None)
    found = _libdevice_of(kernel, module)
    libdevice: dict[str, JsonValue] | None = None
    if found is not None:
        scope_name, obj = found
        libdevice = {
            "globals_of": scope_name,
            "name": str(getattr(obj, "__name__", type(obj).__qualname__)),
            "file": _source_file(obj) if isinstance(obj, ModuleType) else _source_file(type(obj)),
            "isnan": describe_object(getattr(obj, "isnan", None)),
        }
    return {
        "module": module.__name__,
        "file": _source_file(module),
        "get_num_nans": describe_object(getattr(module, "get_num_nans", None)),
        "_num_nans_kernel": describe_object(kernel),
        "libdevice": libdevice,
    }
