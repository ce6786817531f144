"""Compiled-code proofs (mutate.tce): each status from real compiles of small planted mutants, and no proof where
one would be unsound (a specialization not compared, a changed kernel the suite never launches).

The compiles run where production runs them on the CPU: a `python -m mutate.warm --compile-only` worker (no
interpreter), for a CUDA sm_90 target."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from mutate import classify, compiled
from mutate import specs as specializations
from mutate.pool import Session, WorkerProcess
from mutate.run import run_env
from mutate.tce import Copy, Prover

ORIGINAL = '''
import triton
import triton.language as tl


@triton.jit
def _plus_one(x):
    return x + 1.0


@triton.jit
def _shared(x):
    return x * 3.0


@triton.jit
def _copy_kernel(x_ptr, out_ptr, n, MODE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    if MODE == 1:
        x = _plus_one(x)
    tl.store(out_ptr + offs, _shared(x), mask=offs < n)


@triton.jit
def _never_launched(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, _shared(tl.load(x_ptr + offs, mask=offs < n)), mask=offs < n)
'''

LOAD = "    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)\n"
MUTANTS = {  # id -> (old text, new text)
    "times_one": (LOAD, LOAD.rstrip() + " * 1.0\n"),  # folds away: equivalent
    "bad_arange": ("    offs = tl.arange(0, BLOCK)\n    x = tl", "    offs = tl.arange(0, BLOCK - 1)\n    x = tl"),
    "mode1_only": ("        x = _plus_one(x)\n", "        x = x + 2.0\n"),  # MODE 0 compiles alike, MODE 1 not
    "mode1_twin": ("        x = _plus_one(x)\n", "        y = x + 2.0\n        x = y\n"),  # same code as mode1_only
    "mode1_other": ("        x = _plus_one(x)\n", "        x = x + 5.0\n"),  # same first digest, other code
    "unlaunched": ("    tl.store(x_ptr + offs, _shared(", "    tl.store(x_ptr + offs, 2.0 * _shared("),
    "shared_helper": ("    return x * 3.0\n", "    return x * 3.0 * 1.0\n"),  # equal code, but in a kernel never run
}


def _write(folder: Path, top: str, source: str) -> Copy:
    package = folder / top
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "k.py").write_text(source, encoding="utf-8")
    return Copy(top, f"{top}.k", str(folder), top)


def _launches() -> dict[str, list[str]]:
    """The specs the original's run would record: MODE 0 and 1 at BLOCK 16 (made here, under the interpreter)."""
    import triton
    import triton.language as tl

    @triton.jit
    def _copy_kernel(x_ptr, out_ptr, n, MODE: tl.constexpr, BLOCK: tl.constexpr):  # same parameters
        pass

    x, out = torch.zeros(16), torch.zeros(16)
    specs = [specializations.specs_from_call(_copy_kernel, (x, out, 10), {"MODE": mode, "BLOCK": 16}).to_json()
             for mode in (0, 1)]
    return {"k:_copy_kernel": sorted(specs)}


@pytest.fixture(scope="module")
def proofs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every planted mutant proved (or not) by one compile worker, in this order."""
    if compiled.cpu_target()[0] is None:
        pytest.skip(f"this Triton cannot compile without a device: {compiled.cpu_target()[1]}")
    folder = tmp_path_factory.mktemp("tce")
    prover = Prover(_launches(), _write(folder / "original", "tu_original", ORIGINAL), compiled.DEFAULT_LEVEL, "cpu")
    worker = WorkerProcess(Session("cpu", ("unused", folder)), run_env("cpu", None, None), folder / "compile.log",
                           compile_only=True)
    try:
        assert worker.started() == ""

        def ask(job: dict[str, Any]) -> dict[str, Any]:
            answer = worker.ask(job, {}, 300.0)
            assert not answer.ended, (answer.ended, answer.detail, (folder / "compile.log").read_text())
            return answer.reply

        results = {}
        for name, (old, new) in MUTANTS.items():
            assert ORIGINAL.count(old) == 1, name
            results[name] = prover.prove(_write(folder / name, f"tu_{name}", ORIGINAL.replace(old, new)), ask)
        results["prover"] = prover
        return results
    finally:
        worker.close()


def test_a_change_that_folds_away_is_equivalent(proofs: dict[str, Any]) -> None:
    proof = proofs["times_one"]
    assert proof is not None and proof.status == classify.EQUIVALENT, proof
    assert "same ttgir as the original for all 2 specialization(s) of _copy_kernel" in proof.why


def test_a_kernel_that_does_not_compile_is_not_viable(proofs: dict[str, Any]) -> None:
    proof = proofs["bad_arange"]
    assert proof is not None and proof.status == classify.NOT_VIABLE, proof
    assert proof.why.startswith("does not compile for CUDA sm_90, on the CPU (k:_copy_kernel for BLOCK=16, MODE=0, "
                                "*fp32, as the suite launches it): ")
    assert "arange's range must be a power of 2" in proof.why, proof.why


def test_every_specialization_is_compared(proofs: dict[str, Any]) -> None:
    """MODE 0 compiles to the original's code, MODE 1 does not: no proof, the tests decide."""
    assert proofs["mode1_only"] is None


def test_same_code_as_another_mutant_is_its_duplicate(proofs: dict[str, Any]) -> None:
    proof = proofs["mode1_twin"]
    assert proof is not None and proof.status == classify.DUPLICATE and proof.twin == "tu_mode1_only", proof


def test_a_duplicate_needs_every_specialization_alike(proofs: dict[str, Any]) -> None:
    """mode1_other's first digest equals mode1_only's (MODE 0), its MODE 1 code does not."""
    assert proofs["mode1_other"] is None


@pytest.mark.parametrize("name", ["unlaunched", "shared_helper"])
def test_no_proof_for_a_change_in_a_kernel_the_suite_never_launches(proofs: dict[str, Any], name: str) -> None:
    """`shared_helper` compiles alike for the launched kernel, but changes one no test launches."""
    assert proofs[name] is None


def test_the_report_says_what_was_compared(proofs: dict[str, Any]) -> None:
    info = proofs["prover"].describe()
    assert info == {"level": "ttgir", "target": "cpu", "kernels": ["k:_copy_kernel"], "specs": 2, "off": ""}
