"""Trivial Compiler Equivalence: equal IR for an equivalent rewrite, not for a real change; failures and locations.

Under the harness, TRITON_INTERPRET=1 and Triton cannot compile here: specs are made here, as the orchestrator makes
them, and one worker without the interpreter compiles them all (`_measure`), as in production."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
import triton
import triton.language as tl

from mutate import compiled
from mutate import specs as specializations
from mutate.specs import Spec
from mutate.run import ROOT
from tests.support.limits import hang_limit

OFFSET_SOURCE = '''
import triton
import triton.language as tl

@triton.jit(noinline=True)
def _plus_one(x):  # not inlined: its mangled name carries the module's name
    return x + 1.0

@triton.jit
def _masked_sum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + tl.program_id(0), _plus_one(tl.sum(x, axis=0)))
'''


@triton.jit
def _masked_sum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + tl.program_id(0), tl.sum(x, axis=0))


@triton.jit
def _masked_sum_renamed_times_one(x_ptr, out_ptr, n, BLOCK: tl.constexpr):  # folds to _masked_sum
    cols = tl.arange(0, BLOCK)
    vals = tl.load(x_ptr + cols, mask=cols < n, other=0.0) * 1.0
    tl.store(out_ptr + tl.program_id(0), tl.sum(vals, axis=0))


@triton.jit
def _masked_sum_le(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs <= n, other=0.0)
    tl.store(out_ptr + tl.program_id(0), tl.sum(x, axis=0))


@triton.jit
def _bad_arange(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    tl.store(out_ptr + tl.arange(0, 3), 0.0)


def _call(dtype: torch.dtype, n: int = 1000) -> tuple[tuple[Any, ...], dict[str, Any]]:
    return (torch.zeros(1024, dtype=dtype), torch.zeros(4, dtype=dtype), n), {"BLOCK": 1024}


def _module_at(path: Path, name: str, blank_lines: int) -> Any:
    path.write_text("\n" * blank_lines + OFFSET_SOURCE)
    spec = importlib.util.spec_from_file_location(name, path)
    module = sys.modules[name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _measure(specs: list[str], tmp: str) -> dict[str, Any]:
    """In the worker (no interpreter): the digests and failures the tests below judge."""
    target = compiled.cpu_target()[0]
    fp32, *others = map(Spec.from_json, specs)
    out: dict[str, Any] = {"same": compiled.ir_digest(_masked_sum, fp32, target)}
    out["folded"] = compiled.ir_digest(_masked_sum_renamed_times_one, fp32, target)
    out["changed"] = compiled.ir_digest(_masked_sum_le, fp32, target)
    try:
        compiled.ir_digest(_bad_arange, fp32, target)
    except compiled.CompileFailed as e:
        out["failed"] = e.message
    near, far = (_module_at(Path(tmp, f"at{k}.py"), f"tce_at{k}", k) for k in (0, 40))
    out["raw_differs"] = (compiled.compile_spec(near._masked_sum, fp32, target).asm["ttgir"]
                          != compiled.compile_spec(far._masked_sum, fp32, target).asm["ttgir"])
    out["offsets"] = {level: [compiled.ir_digest(m._masked_sum, fp32, target, level) for m in (near, far)]
                      for level in compiled.LEVELS}
    out["dtypes"] = [compiled.ir_digest(_masked_sum, spec, target) for spec in others]
    return out


@pytest.fixture(scope="module")
def worker(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    target, why = compiled.cpu_target()
    if target is None:
        pytest.skip(f"this Triton cannot compile for a GPU target without one: {why}")
    specs = [specializations.specs_from_call(_masked_sum, *_call(d)).to_json()
             for d in (torch.float32, torch.bfloat16, torch.float16)]
    tmp = tmp_path_factory.mktemp("tce")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"} | {"TRITON_CACHE_DIR": str(tmp / "cache")}
    code = "import json, sys; from tests.mutate.test_compiled import _measure; " \
           "print(json.dumps(_measure(json.loads(sys.argv[1]), sys.argv[2])))"
    done = subprocess.run([sys.executable, "-c", code, json.dumps(specs), str(tmp)], cwd=ROOT, env=env,  # took 3.3 s
                          capture_output=True, text=True, check=False, timeout=hang_limit(slowest_s=3.3))
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_an_equivalent_rewrite_compiles_to_the_same_ir(worker: dict[str, Any]) -> None:
    assert worker["same"] == worker["folded"]  # `* 1.0` folded, variables renamed


def test_a_real_change_compiles_to_other_ir(worker: dict[str, Any]) -> None:
    assert worker["changed"] != worker["same"]  # `<` -> `<=` in the mask


def test_a_kernel_that_does_not_compile_raises_compile_failed(worker: dict[str, Any]) -> None:
    assert "power of 2" in worker.get("failed", "")


def test_locations_kernel_and_module_names_are_stripped(worker: dict[str, Any]) -> None:
    assert worker["raw_differs"]  # the IR text itself carries the line numbers
    assert all(near == far for near, far in worker["offsets"].values()), worker["offsets"]


def test_specs_from_calls_of_each_dtype_compile_apart(worker: dict[str, Any]) -> None:
    assert len({worker["same"], *worker["dtypes"]}) == 3


@pytest.mark.parametrize("dtype,name", [(torch.float32, "*fp32"), (torch.bfloat16, "*bf16"), (torch.float16, "*fp16")])
def test_specs_from_call_types_arguments_as_triton_does(dtype: torch.dtype, name: str) -> None:
    args, kwargs = _call(dtype, n=2**40)
    spec = specializations.specs_from_call(_masked_sum, args, kwargs)
    assert spec.signature == {"x_ptr": name, "out_ptr": name, "n": "i64", "BLOCK": "constexpr"}
    assert spec.attrs == {k: [["tt.divisibility", 16]] for k in ("x_ptr", "out_ptr", "n")}
    assert Spec.from_json(spec.to_json()) == spec
    odd = (args[0][1:], args[1], 1001)  # an unaligned pointer and an int not divisible by 16: no attribute
    by_hand = specializations._spec_by_hand(specializations.as_jit_function(_masked_sum), odd, kwargs)
    assert by_hand == specializations.specs_from_call(_masked_sum, odd, kwargs) and set(by_hand.attrs) == {"out_ptr"}


def test_an_interpreter_process_refuses_to_compile() -> None:
    if not specializations.interpreted_here():
        pytest.skip("Triton was not set up under TRITON_INTERPRET=1 in this process")
    with pytest.raises(compiled.NotCompilableHere):
        compiled.compile_spec(_masked_sum, specializations.specs_from_call(_masked_sum, *_call(torch.float32)),
                              compiled.cpu_target()[0])
