"""Mutants proved equivalent, duplicate or not viable by compiled code, with no test run (Trivial Compiler
Equivalence, Papadakis et al., ICSE 2015): the kernels a mutant changed, compiled (mutate.compiled) for every
specialization the original's run launched, against the original's IR and other mutants'. Unequal IR proves
nothing; a changed jit function no launched kernel calls forbids any proof. Where and why: docs/mutate.md, step 3.
"""
from __future__ import annotations

import hashlib
import importlib
import json
import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mutate import classify, compiled, generate
from mutate.specs import Spec, as_jit_function, named_jit_functions
from mutate.package import Unit

COMPILE_LIMIT_S = 300.0  # one compile job (a fresh worker imports Triton first); past it the mutant is not viable


# --- in the worker ----------------------------------------------------------------------------------------------

def _jit_functions(top: str) -> dict[str, Any]:
    """"rel:qualname" -> JITFunction for every @triton.jit function defined in the copy `top` (imported)."""
    found: dict[str, Any] = {}
    for name, module in list(sys.modules.items()):
        if module is None or not (name == top or name.startswith(top + ".")):
            continue
        rel = name[len(top) + 1:]
        for value in list(vars(module).values()):
            try:
                jit = as_jit_function(value)
            except (TypeError, ImportError):
                continue
            if getattr(jit.fn, "__module__", None) == name:
                found[f"{rel}:{jit.fn.__qualname__}"] = jit
    return found


def _callees(jit: Any, by_fn: dict[int, str]) -> set[str]:
    """The jit functions of the copy that jit's body names (through its globals, `module.fn` included)."""
    return {by_fn[id(f.fn)] for f in named_jit_functions(jit) if id(f.fn) in by_fn}


def _source_keys(sources: dict[str, str], calls: dict[str, list[str]]) -> dict[str, str]:
    """Each jit function's source with the keys of those it calls, hashed: what changes when its code or a callee's
    does. (Triton's own cache key also holds the line the function starts on, which a mutant above it moves.)"""
    keys: dict[str, str] = {}

    def key(name: str, stack: tuple[str, ...]) -> str:
        if name not in keys:
            inner = [key(c, (*stack, name)) for c in calls.get(name, []) if c not in stack and c != name]
            keys[name] = hashlib.sha256("\n".join([sources[name], *sorted(inner)]).encode()).hexdigest()
        return keys[name]

    for name in sources:
        key(name, ())
    return keys


def compile_copy(job: dict[str, Any]) -> dict[str, Any]:
    """The reply to a compile job: the copy's jit functions (source key, callees) and the IR digests of the kernels
    whose key differs from `job["original_keys"]` (all kernels when it is empty), or the spec that fails."""
    try:
        importlib.import_module(job["module"])
    except Exception as exc:  # noqa: BLE001 - any import failure of a copy: the mutant does not load
        return {"status": "load_error", "message": f"{type(exc).__name__}: {exc}"[:2000]}
    functions = _jit_functions(job["top"])
    by_fn = {id(j.fn): k for k, j in functions.items()}
    calls = {k: sorted(_callees(j, by_fn)) for k, j in functions.items()}
    keys = _source_keys({k: getattr(j, "src", "") for k, j in functions.items()}, calls)
    original = job.get("original_keys") or {}
    target = None
    if job.get("target") == "cpu":
        target, why = compiled.cpu_target()
        if target is None:
            return {"status": "unavailable", "message": why}
    digests: dict[str, list[str]] = {}
    for kernel, specs in job["kernels"].items():
        if kernel not in functions or (original and keys[kernel] == original.get(kernel)):
            continue
        digests[kernel] = []
        for text in specs[:1] if job.get("first_only") else specs:
            try:
                digests[kernel].append(compiled.ir_digest(functions[kernel], Spec.from_json(text), target,
                                                          job["level"]))
            except compiled.CompileFailed as exc:
                return {"status": "compile_failed", "kernel": kernel, "spec": text, "message": exc.message[:2000],
                        "keys": keys, "calls": calls}
    return {"status": "compiled", "keys": keys, "calls": calls, "digests": digests}


def _error_line(message: str) -> str:
    """The line of a compiler's message that says what is wrong (its last line may be a caret under the source)."""
    lines = [line.strip() for line in message.strip().splitlines() if any(c.isalpha() for c in line)]
    return (lines[-1] if lines else message.strip())[:300]


def _short_spec(text: str) -> str:
    """A specialization in a few words: its constexpr values and pointer types."""
    spec = json.loads(text)
    pointers = sorted({t for t in spec.get("signature", {}).values() if isinstance(t, str) and t.startswith("*")})
    return ", ".join([*(f"{k}={v}" for k, v in sorted(spec.get("constexprs", {}).items())), *pointers])


# --- in the deciding process ------------------------------------------------------------------------------------

@dataclass
class Proof:
    """What compiled code proved about one mutant (status: not_viable, equivalent, duplicate)."""

    status: str
    why: str
    twin: str = ""


@dataclass
class Copy:
    """Where a copy of the unit is, for a compile job."""

    id: str
    module: str  # the --kernel name of the copy
    folder: str
    top: str  # its package (or module) name: mut_<id>


Ask = Callable[[dict[str, Any]], dict[str, Any]]  # a compile job -> its reply ({"status": "ended", ...} if none)


@dataclass
class Prover:
    """The original's compiled kernels, computed once, and the mutants whose first IR digests were seen."""

    launches: dict[str, list[str]]  # "rel:qualname" -> Spec JSON of every launch the original's run made
    original: Copy
    level: str
    target: str  # "device" (the current card) or "cpu" (a GPU target compiled without a device)
    off: str = ""  # why no proof is possible (the original does not compile here...)
    _keys: dict[str, str] | None = None
    _calls: dict[str, list[str]] = field(default_factory=dict)
    _full: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # copy id -> kernel -> digests
    _leaders: dict[tuple[Any, ...], Copy] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def kernels(self) -> dict[str, list[str]]:
        """Kernels whose every launch has a Spec (a launch without one cannot be compiled alike)."""
        return {k: sorted(v) for k, v in self.launches.items() if v and "" not in v}

    def describe(self) -> dict[str, Any]:
        """For the report: what was compared, at which level, for how many specializations."""
        kernels = self.kernels
        return {"level": self.level, "target": self.target, "kernels": sorted(kernels),
                "specs": sum(map(len, kernels.values())), "off": self.off}

    def _job(self, copy: Copy, kernels: dict[str, list[str]], first_only: bool, against: bool) -> dict[str, Any]:
        return {"op": "compile", "module": copy.module, "paths": [copy.folder], "top": copy.top,
                "kernels": kernels, "first_only": first_only, "level": self.level, "target": self.target,
                "original_keys": self._keys if against else {}}

    def _original(self, ask: Ask) -> bool:
        """The original's keys and full digests, once (the first slot to ask computes them)."""
        with self._lock:
            if self._keys is None and not self.off:
                reply = ask(self._job(self.original, self.kernels, True, False))
                if reply.get("status") == "budget":
                    return False
                if reply.get("status") != "compiled":
                    self.off = f"the original does not compile here: {reply.get('message', reply.get('status'))}"
                else:
                    self._keys, self._calls = reply["keys"], reply["calls"]
                    self._full[self.original.id] = reply["digests"]
            return not self.off

    def _reached(self) -> set[str]:
        """Jit functions a kernel with known specs launches or calls, transitively (on the original)."""
        seen, todo = set(), list(self.kernels)
        while todo:
            k = todo.pop()
            if k not in seen:
                seen.add(k)
                todo += self._calls.get(k, [])
        return seen

    def _full_of(self, copy: Copy, kernels: Iterable[str], ask: Ask) -> dict[str, list[str]] | None:
        known = self._full.get(copy.id, {})
        missing = {k: self.kernels[k] for k in kernels if len(known.get(k, [])) < len(self.kernels[k])}
        if missing:
            reply = ask(self._job(copy, missing, False, False))
            if reply.get("status") != "compiled":
                return None
            known = {**known, **reply["digests"]}
            self._full[copy.id] = known
        return known

    def prove(self, copy: Copy, ask: Ask) -> Proof | None:
        """A proof about the mutant copy, or None: its tests decide."""
        if not self._original(ask):
            return None
        kernels = self.kernels
        reply = ask(self._job(copy, kernels, True, True))
        status = reply.get("status")
        if status == "compile_failed":
            spec = reply["spec"]
            where = "on the current card" if self.target == "device" else "for CUDA sm_90, on the CPU"
            return Proof(classify.NOT_VIABLE, f"does not compile {where} ({reply['kernel']} for "
                                              f"{_short_spec(spec)}, as the suite launches it): "
                                              f"{_error_line(reply['message'])}")
        if status == "load_error":
            return Proof(classify.NOT_VIABLE, f"does not import: {reply['message'][:300]}")
        if status == "budget":
            return None
        if status == "ended":
            return Proof(classify.NOT_VIABLE, f"the compiler did not finish: {reply.get('message', '')[:300]}")
        if status != "compiled":
            return None
        assert self._keys is not None
        changed = {k for k, key in reply["keys"].items() if self._keys.get(k) != key}
        changed |= set(self._keys) - set(reply["keys"])
        changed_kernels = sorted(changed & set(kernels))
        if not changed_kernels or not changed <= self._reached():
            return None  # a change outside every launched kernel: nothing compiled can speak for it
        first = {k: reply["digests"][k][0] for k in changed_kernels}
        specs = sum(len(kernels[k]) for k in changed_kernels)
        names = ", ".join(k.split(":")[-1] for k in changed_kernels)
        if all(first[k] == self._full[self.original.id][k][0] for k in changed_kernels):
            full, original_full = self._full_of(copy, changed_kernels, ask), self._full_of(self.original,
                                                                                           changed_kernels, ask)
            if full is not None and original_full is not None and all(full[k] == original_full[k]
                                                                      for k in changed_kernels):
                return Proof(classify.EQUIVALENT, f"equivalent (proved: same {self.level} as the original for all "
                                                  f"{specs} specialization(s) of {names} the suite launches)")
        signature = (tuple(changed_kernels), tuple(first[k] for k in changed_kernels))
        with self._lock:
            leader = self._leaders.setdefault(signature, copy)
        if leader is copy:
            return None
        mine, theirs = self._full_of(copy, changed_kernels, ask), self._full_of(leader, changed_kernels, ask)
        if mine is not None and theirs is not None and all(mine[k] == theirs[k] for k in changed_kernels):
            return Proof(classify.DUPLICATE, f"duplicate of {leader.id} (proved: same {self.level} for all {specs} "
                                             f"specialization(s) of {names} the suite launches)", twin=leader.id)
        return None


def prover_for(unit: Unit, base: Any, traced: dict[str, str], original_module: str, out: Path,
               device: str) -> Prover | None:
    """The compiled-code prover for this unit's kernels (here), from the launches the original's run made;
    None when it launched no kernel of the unit."""
    rel = {path: ("" if unit.package is None or name == unit.package else name[len(unit.package) + 1:])
           for name, path in traced.items()}
    launches: dict[str, list[str]] = {}
    for key, specs in base.launches.items():
        file, _, qualname = key.partition("::")
        if file in rel:
            launches[f"{rel[file]}:{qualname}"] = specs
    if not launches:
        return None
    copy = Copy(generate.ORIGINAL, original_module, str(out / "original"), generate.ORIGINAL)
    return Prover(launches, copy, compiled.DEFAULT_LEVEL, "device" if device != "cpu" else "cpu")
