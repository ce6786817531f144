"""python -m nightly --mutate: runs python -m mutate on the night's kernel and adds one summary line; off by default."""
from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from nightly import cli

A = "tests/precision/test_families.py::test_case[fp32-prefix-1x128-nan0.5-wrapper]"


class Fake:
    """The suite passes; mutate writes a mutation.json (or nothing, when `score` is None)."""

    def __init__(self, score: float | None) -> None:
        self.score, self.commands = score, []  # type: ignore[var-annotated]

    def __call__(self, argv: Sequence[str], log: Path | None) -> int:
        argv = list(argv)
        self.commands.append(argv)
        if argv[2] == "pytest":
            path = Path([a for a in argv if a.startswith("--nan-json=")][-1].split("=", 1)[1])  # the last wins
            run_id = next(a.split("=", 1)[1] for a in argv if a.startswith("--nan-run-id="))
            case = {"nodeid": A, "id": A.rsplit("::", 1)[-1], "outcome": "passed", "verdict": "pass",
                    "duration": 0.1, "checks": [], "wrong_rows": [], "message": ""}
            path.write_text(json.dumps({"schema": "nan-harness-results/2", "environment": {}, "exitstatus": 0,
                                        "finished": True, "ended": "passed", "collected": 1, "counts": {},
                                        "verdicts": {}, "diagnosis": [], "kernel": "kernel", "backend": "cpu",
                                        "coverage_gaps": [], "ran": 1, "cases": [case], "run_id": run_id}))
            return 0
        if argv[2] == "mutate" and self.score is not None:
            out = Path(argv[argv.index("--out") + 1])
            out.mkdir(parents=True, exist_ok=True)
            (out / "mutation.json").write_text(json.dumps({"score": self.score, "counts": {
                "killed": 9, "survived": 1, "timeout": 0, "not_run": 2}}))
            return 1
        return 0


def _night(tmp_path: Path, fake: Fake, *extra: str) -> dict:  # type: ignore[type-arg]
    code = cli.main(["--device", "cpu", "--root", str(tmp_path), "--night", "2026-07-01", "--no-bench", *extra],
                    runner=fake, cards=lambda d: 0, available=lambda: (True, ""))
    assert code == 0, "the mutation score never changes the night's exit status"
    return json.loads((tmp_path / "2026-07-01" / "nightly.json").read_text())["steps"]


def test_off_by_default(tmp_path: Path) -> None:
    fake = Fake(0.9)
    assert "mutation" not in _night(tmp_path, fake)
    assert not any(c[2] == "mutate" for c in fake.commands)


def test_mutate_adds_one_summary_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake = Fake(0.9)
    step = _night(tmp_path, fake, "--mutate", "--mutate-budget-s", "120")["mutation"]
    command = next(c for c in fake.commands if c[2] == "mutate")
    assert command[command.index("--kernel") + 1] == "kernel" and command[command.index("--budget-s") + 1] == "120.0"
    assert step["status"] == "ran" and step["detail"].startswith("mutation score 90%: 9 killed, 1 survived, 2 not judged")
    assert "nightly: mutation: ran (mutation score 90%" in capsys.readouterr().out


def test_a_mutate_run_without_results_is_a_failed_step(tmp_path: Path) -> None:
    step = _night(tmp_path, Fake(None), "--mutate")["mutation"]
    assert step["status"] == "failed" and "without mutation.json" in step["detail"]
