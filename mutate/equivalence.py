"""Is a survivor equivalent? The original and the mutant side by side on random inputs the suite did not hold.

Run as a child (`python -m mutate.equivalence ...`, JSON on the last stdout line): it imports and runs both modules.
The contract's inputs outside the domain first (any exception equals any other), then random inputs (`draw`) through
both paths; the first difference in counts, dtype, raising or the input's bytes is a real blind spot, reported with
its input. Under the interpreter a line tracer also says whether the mutated lines ran (docs/mutate.md, Survivors).
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import json
import os
import random
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from cases.formats import BF16, FP16, FP32, from_bits, to_bits
from cases.ieee import IEEE_CLASSES
from cases.random_bits import random_nan_bits
from mutate.coverage import Recorder, recording

BLOCKS = (16, 64, 128, 256, 512, 1024, 2048, 4096, 8192)
WIDE = (32_769, 40_000, 65_537, 70_001)
MAX_ELEMENTS = 140_000  # per trial: the interpreter runs about 3 M elements/s


def draw(rng: random.Random, device: str) -> tuple[Any, Any, str]:
    """One random input (a strided view into a NaN-filled buffer), that buffer, and its description."""
    fmt = rng.choice((FP32, BF16, FP16))
    rows = rng.choice((1, 1, 2, 3, 4, 5, 7, 8, 9, 16, 33))
    wide = rng.random() < 0.15  # a short batch of wide rows: counts past 2^15 and 2^16 (how 7d0ca2a828 was missed)
    if wide:
        vocab = rng.choice(WIDE)
    elif rng.random() < 0.7:
        vocab = max(1, rng.choice(BLOCKS) * rng.choice((1, 1, 2, 3)) + rng.choice((-1, 0, 0, 1, 2)))
    else:
        vocab = rng.randint(1, 20_000)
    rows = max(1, min(rows, MAX_ELEMENTS // vocab))
    stride = vocab + (rng.choice((1, 3, 16, 64, 4096)) if rng.random() < 0.4 else 0)
    offset = rng.choice((1, 3, 8, 17)) if rng.random() < 0.3 else 0
    tail = rng.choice((0, 0, 5))
    frac = rng.choice((0.9, 1.0)) if wide else rng.choice((0.0, 0.001, 0.01, 0.1, 0.5, 0.9, 1.0))
    kind = rng.choice(("random", "classes", "negative"))
    background = rng.choice(("normal", "specials"))
    gen = torch.Generator().manual_seed(rng.randrange(2**31))
    total = offset + (rows - 1) * stride + vocab + tail
    storage = random_nan_bits(total, fmt, gen).to(torch.int64)  # everything outside the view is NaN
    if background == "normal":
        values = torch.randn(rows, vocab, generator=gen).to(fmt.dtype).view(fmt.int_dtype).to(torch.int64)
        values &= (1 << fmt.width) - 1
    else:
        specials = torch.tensor([c.bits(fmt, s) for c in IEEE_CLASSES if not c.is_nan for s in (False, True)])
        values = specials[torch.randint(0, len(specials), (rows, vocab), generator=gen)]
    nan_mask = torch.rand(rows, vocab, generator=gen) < frac
    n = int(nan_mask.sum())
    if kind == "classes":
        pats = torch.tensor([c.bits(fmt, s) for c in IEEE_CLASSES if c.is_nan for s in (False, True)])
        nans = pats[torch.randint(0, len(pats), (n,), generator=gen)]
    else:
        nans = random_nan_bits(n, fmt, gen) | (fmt.sign_bit if kind == "negative" else 0)
    values[nan_mask] = nans.to(torch.int64)
    for r in range(rows):
        start = offset + r * stride
        storage[start: start + vocab] = values[r].to(torch.int64)
    base = from_bits(storage, fmt).to(device)
    x = base.as_strided((rows, vocab), (stride, 1), offset)
    desc = (f"{fmt.name} {rows}x{vocab} stride {stride} offset {offset} tail {tail}, NaN fraction {frac} ({kind}), "
            f"{background} background")
    return x, base, desc


def _outcome(call: Callable[[], Any]) -> dict[str, Any]:
    """What one call gave, as plain data: counts and dtype, or the exception's class."""
    try:
        out = call()
        if isinstance(out, torch.Tensor):
            return {"counts": [int(v) for v in out.detach().cpu().tolist()], "dtype": str(out.dtype)}
        return {"value": repr(out)[:200]}
    except Exception as exc:  # noqa: BLE001 - what a kernel raises is part of its behaviour
        return {"raised": type(exc).__name__}


def same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Equal outcomes; any two exceptions are the same outcome (the contract accepts any refusal)."""
    return ("raised" in a and "raised" in b) or a == b


def contract_inputs(device: str) -> list[tuple[Any, str]]:
    """Inputs outside the domain the suite's contract tests use: where guards and checks make a difference."""
    base = torch.randn(4, 300)
    base[:, ::7] = float("nan")
    return [(x.to(device), desc) for x, desc in (
        (base[0], "1-D"), (base.reshape(2, 2, 300), "3-D"), (base.double(), "float64"),
        (base.to(torch.int32), "int32"), (base.t(), "transposed 300x4 view"), (base[:, :0], "4x0"),
        (base[:0], "0x300"), (base[:, :2].t().contiguous().t(), "4x2 column-major"))]


def _paths(module: ModuleType, x: Any) -> dict[str, Callable[[], Any]]:
    """The suite's two paths on one input: the wrapper, and the anchor kernel at BLOCK_SIZE 8192."""
    paths: dict[str, Callable[[], Any]] = {"wrapper": lambda: module.get_num_nans(x)}
    kernel = getattr(module, "_num_nans_kernel", None)
    if kernel is not None:
        def direct() -> Any:
            out = torch.full((x.shape[0],), -7, dtype=torch.int32, device=x.device)
            kernel[(x.shape[0],)](x, x.stride(0), out, x.shape[1], BLOCK_SIZE=8192)
            return out
        paths["direct"] = direct
    return paths


def load_file(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def compare(original: ModuleType, mutant: ModuleType, mutant_file: Path, changed: Sequence[int], trials: int,
            seed: int, device: str) -> dict[str, Any]:
    """Up to `trials` inputs; stops at the first one on which the two differ."""
    rng = random.Random(seed)
    tracer = Recorder([str(mutant_file)]) if device == "cpu" else None

    def traced(call: Callable[[], Any]) -> dict[str, Any]:
        with recording(tracer) if tracer is not None else contextlib.nullcontext():
            return _outcome(call)

    for x, desc in contract_inputs(device):
        want, got = _outcome(lambda: original.get_num_nans(x)), traced(lambda: mutant.get_num_nans(x))
        if not same(want, got):
            return {"differs": True, "trial": -1, "trials": 0, "seed": seed, "input": f"contract input {desc}",
                    "path": "wrapper", "original": want, "mutant": got, "input_modified": False,
                    "reached": _reached(tracer, changed)}
    for trial in range(trials):
        x, base, desc = draw(rng, device)
        before = to_bits(base)
        for path, call in _paths(original, x).items():
            want = _outcome(call)
            mutant_call = _paths(mutant, x).get(path)
            if mutant_call is None:
                continue
            got = traced(mutant_call)
            changed_input = not torch.equal(before, to_bits(base))  # the view or anything around it
            if not same(got, want) or changed_input:
                return {"differs": True, "trial": trial, "trials": trial + 1, "seed": seed, "input": desc,
                        "path": path, "original": want, "mutant": got, "input_modified": changed_input,
                        "reached": _reached(tracer, changed)}
    return {"differs": False, "trials": trials, "seed": seed, "reached": _reached(tracer, changed)}


def _reached(tracer: Recorder | None, changed: Sequence[int]) -> bool | None:
    if tracer is None or not changed:
        return None
    return any(line in lines for lines in tracer.lines.values() for line in changed)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mutate.equivalence")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--original", help="dotted module of the original")
    which.add_argument("--original-file", type=Path, help="the original's snapshot file (python -m mutate writes one)")
    mutant_is = parser.add_mutually_exclusive_group(required=True)
    mutant_is.add_argument("--mutant", help="dotted module of the mutant (found on --kernel-path)")
    mutant_is.add_argument("--mutant-file", type=Path, help="the mutant's file, imported under its stem")
    parser.add_argument("--traced-file", type=Path, default=None,
                        help="the file whose --changed lines the tracer watches (default: --mutant-file)")
    parser.add_argument("--changed", default="", help="comma-separated changed lines of the mutant file")
    parser.add_argument("--kernel-path", action="append", default=[], type=Path)
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args(argv)
    if args.device == "cpu":
        os.environ["TRITON_INTERPRET"] = "1"
    for folder in reversed(args.kernel_path):
        sys.path.insert(0, str(folder))
    original = (importlib.import_module(args.original) if args.original
                else load_file(args.original_file.stem, args.original_file.resolve()))
    mutant = (importlib.import_module(args.mutant) if args.mutant
              else load_file(args.mutant_file.stem, args.mutant_file.resolve()))
    traced = (args.traced_file or args.mutant_file or Path(str(getattr(mutant, "__file__", "")))).resolve()
    changed = [int(n) for n in args.changed.split(",") if n]
    result = compare(original, mutant, traced, changed, args.trials, args.seed, args.device)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
