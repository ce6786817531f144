"""docs/nightly.md's CI step for a kernel repository, run as written, from a checkout of this project.

A kernel repository (a copied correct kernel, tests/designs/independent.py, and the drop-in file), this project's
checkout where the step's `actions/checkout` puts it, a runner's Python that already holds torch, triton and
pytest (tests/support/node.py: as after the backend's own install step), then the step's `run:` lines in bash in
the repository with the step's `env:`. The test sets only what the step leaves to the job: the device (cpu), an
affordable selection ($NAN_HARNESS_ARGS, as tests/nightly/test_dropin.py), $GITHUB_STEP_SUMMARY, and pip's
settings: no index (everything but this project is installed already, so nothing is downloaded) and no build
isolation (setuptools is there). Then what the job keeps: the reports under upload-artifact's path, the summary;
and, from that install and outside the checkout, every tool the docs name starts (`--help`), and `python -m nightly`
and `python -m mutate` judge a small selection with their outputs in the folder they were called from.
"""
from __future__ import annotations

import json
import re
import shlex
import subprocess
import textwrap
from pathlib import Path

from harness import processes
from nightly import dropin
from tests.nightly.test_bisect import CORRECT_TEST, DESIGN
from tests.nightly.test_dropin import KERNEL, SELECTION, kernel_repo
from tests.support.limits import hang_limit
from tests.support.node import base_python, checkout_copy, shell_env
from tests.support.subrun import ROOT

DOCS = ROOT / "docs" / "nightly.md"
STEP_SLOWEST_S = 50.0  # pip install of the checkout (nothing else to fetch) and the drop-in's 2-case suite:
# 41-50 s on 2 cores beside other pytest runs, 116 s at load 7
# documented modules that are no tool to start from an install: pytest's and pip's, the checkout's tests, and one
# GPU measurement that needs CUDA to import
NOT_TOOLS = ("pytest", "pip", "tox", "tests.", "bench.decode_sweep")
HELP_ALL = """import contextlib, io, json, runpy, sys
codes = {}
for name in sys.argv[1:]:
    sys.argv, out = [name, "--help"], io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            runpy.run_module(name, run_name="__main__", alter_sys=True)
        codes[name] = 0
    except SystemExit as stop:
        codes[name] = stop.code if stop.code == 0 else f"exit {stop.code}: {out.getvalue()[-500:]}"
    except BaseException as exc:
        codes[name] = repr(exc)[:500]
print(json.dumps(codes))
"""
TINY = '''"""A torch-only NaN count (no Triton kernel: its direct path is not run): a mutation run that stays cheap."""
import torch


def get_num_nans(logits: torch.Tensor) -> torch.Tensor:
    if logits.ndim != 2:
        raise ValueError("get_num_nans: 2-D logits only")
    return torch.isnan(logits).sum(dim=-1).to(torch.int32)
'''
BISECT_OUT = "from nightly import bisect; print(bisect.parse('--repo . --good a --bad b --kernel k'.split())[0].out)"
TOOLS_SLOWEST_S = 37.0  # python -m nightly (2 cases) and python -m mutate (1 mutant) at once: 13 s at load 3, 37 at 6.5


def ci_steps() -> list[str]:
    """The steps of the YAML block of the drop-in section, one text each."""
    text = DOCS.read_text(encoding="utf-8")
    section = text[text.index("## A drop-in"):]
    start = section.index("```yaml\n") + len("```yaml\n")
    block = section[start:section.index("```", start)]
    return ["- " + step for step in re.split(r"^- ", block, flags=re.M) if step.strip()]


def step_using(steps: list[str], marker: str) -> str | None:
    return next((step for step in steps if marker in step), None)


def scalar(text: str) -> str:
    """A YAML scalar as the runner reads it: quotes off, or up to a comment, a flow mapping's comma or brace."""
    text = text.strip()
    return text[1:text.index('"', 1)] if text.startswith('"') else re.split(r"\s#|,|}", text)[0].strip()


def value(step: str, key: str) -> str:
    """The scalar of `key:` in a step (flow or block style)."""
    found = re.search(rf"\b{key}:(.*)", step)
    assert found, f"no {key}: in {step!r}"
    return scalar(found.group(1))


def nested(step: str, key: str) -> list[str]:
    """The lines under `key:` (more indented than it), dedented: a `run: |` script or an `env:` mapping."""
    lines = step.splitlines()
    at = next(i for i, line in enumerate(lines) if re.match(rf"\s*{key}:", line))
    indent = len(lines[at]) - len(lines[at].lstrip())
    body = []
    for line in lines[at + 1:]:
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        body.append(line)
    return textwrap.dedent("\n".join(body)).splitlines()


def documented_tools() -> list[str]:
    """Every `python -m X` the README and docs/ name, less what is no tool of this project's install."""
    text = "\n".join(p.read_text(encoding="utf-8") for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))])
    return sorted({m for m in re.findall(r"python3? -m ([a-z_][a-z0-9_.]*)", text) if not m.startswith(NOT_TOOLS)})


def test_the_documented_ci_step_runs_from_a_checkout(tmp_path: Path) -> None:
    assert CORRECT_TEST in DESIGN
    steps = ci_steps()
    repo = kernel_repo(tmp_path / "kernel-repo", DESIGN)
    checkout = step_using(steps, "actions/checkout")
    if checkout is not None:
        checkout_copy(ROOT, repo / value(checkout, "path"))
    runner = base_python(tmp_path / "runner")
    run = step_using(steps, "run: |")
    assert run is not None, steps
    variables = {k.strip(): scalar(v) for k, v in (line.split(":", 1) for line in nested(run, "env") if line.strip())}
    env = {**shell_env(runner), **variables,
           dropin.DEVICE_VAR: "cpu", dropin.ARGS_VAR: SELECTION, "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
           "PIP_NO_BUILD_ISOLATION": "0"}  # pip's own spelling: 0 turns build isolation off
    done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", "\n".join(nested(run, "run"))],
                          cwd=repo, env=env, capture_output=True, text=True, check=False,
                          timeout=hang_limit(slowest_s=STEP_SLOWEST_S))
    text = done.stdout + done.stderr
    assert done.returncode == 0, text
    assert f"nan-harness: PASS: kernel {KERNEL} on cpu: 2 tests: 2 pass" in text and "1 passed" in text, text
    kept = repo / value(step_using(steps, "actions/upload-artifact") or "", "path")
    assert sorted(p.name for p in kept.iterdir()) == sorted(dropin.REPORTS.values()), text
    doc = json.loads((kept / dropin.REPORTS["json"]).read_text())
    assert doc["finished"] and doc["environment"]["Kernel file"] == str(repo / "my_kernels" / "num_nans.py")
    assert {c["nodeid"].split("::")[0] for c in doc["cases"]} == {"harness/suite/test_families.py"}  # installed
    assert (tmp_path / "summary.md").read_text().startswith("### nan-harness: PASS")
    assert (runner.parent / "nan-harness").is_file()  # the console script of the install

    tools = documented_tools()
    assert {"bench", "mutate", "nightly", "reports.compare", "nightly.dropin"} <= set(tools)
    started = subprocess.run([str(runner), "-c", HELP_ALL, *tools], cwd=tmp_path, env=shell_env(runner),
                             stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False,
                             timeout=hang_limit(slowest_s=10.0))  # 19 tools: 4.8 s alone
    assert started.returncode == 0, started.stdout + started.stderr
    assert {k: v for k, v in json.loads(started.stdout.splitlines()[-1]).items() if v != 0} == {}
    tools_judge_from_the_install(runner, tmp_path / "work", repo)


def tools_judge_from_the_install(runner: Path, work: Path, repo: Path) -> None:
    """From the install, in a folder outside the checkout, `python -m nightly` (the kernel repository's kernel, a
    small selection) and `python -m mutate` (one mutant of a torch-only module) each judge, their outputs in that
    folder (they ran the checkout's tests/precision with its pyproject.toml: no test collected, a usage error), as
    the bisect's are (they went into site-packages)."""
    work.mkdir()
    (work / "tiny_nans.py").write_text(TINY)
    bisect_out = subprocess.run([str(runner), "-c", BISECT_OUT], cwd=work, env=shell_env(runner), capture_output=True,
                                text=True, check=False, timeout=hang_limit(slowest_s=1.0))
    assert bisect_out.stdout.strip() == str(work / "out" / "bisect"), bisect_out.stdout + bisect_out.stderr
    # mutate: one mutant (`ndim != 2` -> `==`), judged by the tests `-k` leaves (the arguments after -- narrow every
    # test of its judge): killed by an aliasing test
    commands = {"nightly": ["-m", "nightly", "--device", "cpu", "--workers", "1", "--kernel", KERNEL,
                            "--kernel-path", str(repo), "--", *shlex.split(SELECTION)],
                "mutate": ["-m", "mutate", "--kernel", "tiny_nans", "--operators", "compare_equality", "--jobs", "1",
                           "--trials", "0", "--", "-k", "aliasing and fp32"]}
    procs: dict[str, subprocess.Popen[bytes]] = {}
    try:
        for name, argv in commands.items():  # side by side: each is mostly Python and torch starting up
            with open(work / f"{name}.log", "wb") as log:
                procs[name] = subprocess.Popen([str(runner), *argv], cwd=work, env=shell_env(runner), stdout=log,
                                               stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                               start_new_session=True)
        codes = {name: proc.wait(timeout=hang_limit(slowest_s=TOOLS_SLOWEST_S)) for name, proc in procs.items()}
    finally:
        for proc in procs.values():
            processes.kill_group(proc)  # the group this test started, by its id
    logs = {name: (work / f"{name}.log").read_text(encoding="utf-8", errors="replace")[-3000:] for name in commands}
    assert codes == {"nightly": 0, "mutate": 0}, logs
    night = next((work / "out" / "nightly").glob("2*"))
    assert json.loads((night / "nightly.json").read_text())["verdict"] == "OK", logs["nightly"]
    run = json.loads((night / "results.json").read_text())
    assert run["finished"] and run["environment"]["Kernel file"] == str(repo / "my_kernels" / "num_nans.py")
    assert {c["nodeid"].split("::")[0] for c in run["cases"]} == {"harness/suite/test_families.py"}
    doc = json.loads((work / "out" / "mutation" / "tiny_nans" / "mutation.json").read_text())
    assert doc["complete"] and doc["counts"]["killed"] == 1 and doc["baseline"]["tests"] > 0, logs["mutate"]
    assert doc["mutants"][0]["killer"]["nodeid"].startswith("harness/suite/test_aliasing.py::"), doc["mutants"]
