"""How often the diagnosis's first item is the true bug class, over whole-suite runs of kernels whose bug is known.

    python -m tests.selftest.accuracy --device cuda --out out/accuracy [--jobs 8] [--only NAME ...] [-- PYTEST_ARGS]

The labelled table: every planted kernel in tests/planted (its `bug_class`), the designs in tests/designs (the first
class test_design_verdicts expects on this Triton), the hostile kernels of tests/hostile whose run can be diagnosed,
the semantics kernels of tests/semantics off the CPU, and the correct kernels ("correct": no diagnosis item at all).
A run that did not finish is never right.
Each runs the whole precision suite (tests/precision) in its own pytest, `--jobs` at a time; the table, the accuracy
and each run's results.json go to OUT. The self-test (tests/selftest/test_planted.py) checks the same rule on each
planted kernel's narrow selection in CI; this is the whole-suite measurement docs/verdicts.md quotes. Exit 0 when
every first item is right and every correct kernel gets none, 1 otherwise, 2 when a run did not finish.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORRECT = "correct"


@dataclass(frozen=True)
class Label:
    """A kernel module and the bug class it truly has ("correct" for none); options its catching cases need."""

    module: str
    truth: str
    options: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.module.rsplit(".", 1)[-1]


# The hostile kernels (tests/hostile) wrap the correct independent design, so what a whole-suite run judges is the
# hostile behaviour: its true class is the one the diagnosis names for that behaviour.
HOSTILE: tuple[tuple[str, str], ...] = (
    ("exits_zero", "device"),  # ends its process on every bf16 input: process crashes (the run may stop early)
    ("float_counts", "output"),  # right counts as float32: a malformed result
    ("lying_tensor", "output"),  # a Tensor subclass that says it equals anything: a malformed result (counts 0)
    ("raises_outcome", "contract"),  # pytest.skip on every bf16 input: in-domain input refused
)
# exits_zero ends a worker on each of its bf16 cases (more than the harness's default crash budget of 64): each
# must be replaced for its run to finish, or the table would only say "not finished"
HOSTILE_OPTIONS: dict[str, tuple[str, ...]] = {"exits_zero": ("--max-worker-restart=1000",)}
# Hostile modules whose whole-suite run says nothing about the diagnosis, and why.
LEFT_OUT: dict[str, str] = {
    "tests.hostile.patches_torch": "its counts are a stand-in (always 0, no bug class) and its hostile act, "
    "patching torch's isnan and sum, bends nothing the sealed reference reads",
    "tests.hostile.setup_exits": "a --kernel-setup callable, not a kernel: every run is a usage error (exit 4)",
    "tests.hostile.spawns_child": "a correct counter whose subject is the helper process it leaves (run with "
    "NAN_HOSTILE_PIDFILE by test_gate_integrity); without that variable its first call raises KeyError",
}
# Kernels that break what a caller on an accelerator relies on (tests/semantics): the interpreter has no streams or
# graphs, so they are labelled only off the CPU; stream order broken is the diagnosis's "device" category.
SEMANTICS: tuple[tuple[str, str], ...] = (
    ("side_stream", "device"),  # stream_order: wrong counts under a non-default current stream
    ("host_sync", CORRECT),  # not capturable is a property (a failure only with --require-capturable)
    ("torch_fallback", CORRECT),
)


def labels(flavour: str, device: str) -> list[Label]:
    """The labelled table for this Triton and device: planted variants that apply to it, the designs, the hostile
    kernels, the semantics kernels (accelerators only) and the correct kernels."""
    from tests.planted import PLANTED

    table = [Label(v.module, v.bug_class, v.options) for v in PLANTED
             if v.flavour is None or flavour.split()[0] == v.flavour]
    ascend = flavour.startswith("triton-ascend")
    table += [Label("tests.designs.upstream_vllm", "accumulation" if ascend else "offsets"),
              Label("tests.designs.vllm_ascend", "offsets")]
    table += [Label(f"tests.hostile.{name}", truth, HOSTILE_OPTIONS.get(name, ())) for name, truth in HOSTILE]
    if device != "cpu":
        table += [Label(f"tests.semantics.{name}", truth) for name, truth in SEMANTICS]
    table += [Label(m, CORRECT) for m in ("kernel", "tests.designs.independent")]
    # correct, but its `x != x` on bf16 is what both CPU interpreters get wrong (tests/designs/self_compare.py): on
    # the CPU the true first item is the interpreter's defect, which harness.preflight measures
    table.append(Label("tests.designs.self_compare", "interpreter" if device == "cpu" else CORRECT))
    return table


def run_one(label: Label, device: str, out: Path, extra: Sequence[str]) -> dict[str, object]:
    """The whole suite on one kernel in a fresh pytest; its first diagnosis item against the label."""
    folder = out / label.name
    folder.mkdir(parents=True, exist_ok=True)
    results = folder / "results.json"
    results.unlink(missing_ok=True)
    argv = [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), "-p", "no:cacheprovider", "-q",
            f"--device={device}", f"--kernel={label.module}", f"--nan-json={results}",
            f"--html={folder / 'precision.html'}", f"--junitxml={folder / 'junit.xml'}", "--nan-reruns=0",
            *label.options, *extra, str(ROOT / "tests" / "precision")]
    started = time.monotonic()
    with (folder / "pytest.log").open("w", encoding="utf-8") as log:
        code = subprocess.run(argv, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, check=False,
                              env={**os.environ, "PYTHONPATH": str(ROOT)}).returncode
    doc = json.loads(results.read_text(encoding="utf-8")) if results.is_file() else {}
    items = doc.get("diagnosis") or []
    first = items[0] if items else None
    got = first["category"] if first else CORRECT
    row = {"kernel": label.module, "truth": label.truth, "first": got, "name": first["name"] if first else "",
            "scope": first.get("scope", "") if first else "", "items": len(items),
            "right": bool(doc.get("finished")) and got == label.truth,  # an unfinished run is never right
            "finished": bool(doc.get("finished")), "exit": code, "failed": sum(
                1 for c in doc.get("cases", []) if c.get("outcome") in ("failed", "error")),
            "seconds": round(time.monotonic() - started, 1)}
    (folder / "row.json").write_text(json.dumps(row) + "\n", encoding="utf-8")  # kept if the table is never written
    return row


def render(rows: Sequence[dict[str, object]], device: str, flavour: str, table_size: int,
           extra: Sequence[str] = ()) -> str:
    """The Markdown table docs/verdicts.md quotes, with the accuracy over the bug kernels and the correct ones."""
    bugs = [r for r in rows if r["truth"] != CORRECT]
    correct = [r for r in rows if r["truth"] == CORRECT]
    covers = ("" if len(rows) == table_size else f"; {len(rows)} of the {table_size} labelled kernels run (--only)")
    suite = f"the suite narrowed by `{' '.join(extra)}`" if extra else "whole suite"
    lines = [f"Diagnosis accuracy, {suite} on {device} ({flavour}){covers}: first item right for "
             f"{sum(bool(r['right']) for r in bugs)}/{len(bugs)} kernels with a known bug; "
             f"{sum(r['items'] == 0 for r in correct)}/{len(correct)} correct kernels get no item.", "",
             "| kernel | true class | first item | right | scope of the first item | failed tests | s |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        mark = "yes" if r["right"] else ("NOT FINISHED" if not r["finished"] else "**no**")
        first = f"{r['first']}: {r['name']}" if r["name"] else r["first"]
        lines.append(f"| `{r['kernel']}` | {r['truth']} | {first} | {mark} | {r['scope']} | {r['failed']} | "
                     f"{r['seconds']} |")
    lines += ["", "Left out (a whole-suite run says nothing about the diagnosis):"]
    lines += [f"- `{module}`: {why}" for module, why in LEFT_OUT.items()]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    args_in = list(sys.argv[1:] if argv is None else argv)
    cut = args_in.index("--") if "--" in args_in else len(args_in)
    parser = argparse.ArgumentParser(prog="python -m tests.selftest.accuracy", description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", required=True, choices=("cpu", "cuda", "npu"))
    parser.add_argument("--out", type=Path, default=ROOT / "out" / "accuracy")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", nargs="*", default=None, help="kernel names (last dotted part) to run")
    args = parser.parse_args(args_in[:cut])
    extra = args_in[cut + 1:]
    from harness.backends import triton_flavour

    flavour = triton_flavour()
    labelled = labels(flavour, args.device)
    table = [lab for lab in labelled if args.only is None or lab.name in args.only]
    args.out.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        rows = list(pool.map(lambda lab: run_one(lab, args.device, args.out, extra), table))
    page = render(rows, args.device, flavour, len(labelled), extra)
    (args.out / "accuracy.md").write_text(page, encoding="utf-8")
    (args.out / "accuracy.json").write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    print(page)
    if not all(r["finished"] for r in rows):
        return 2
    return 0 if all(r["right"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
