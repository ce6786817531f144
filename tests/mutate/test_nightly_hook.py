"""python -m nightly --mutate: runs python -m mutate on the night's kernel and adds one summary line; off by default."""
from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from nightly import cli
from tests.nightly.test_nightly import A, FakeRunner, results_doc


class Fake(FakeRunner):
    """The suite passes; mutate writes a mutation.json (or nothing, when `score` is None)."""

    def __init__(self, score: float | None) -> None:
        super().__init__(results_doc({A: "passed"}, backend="cpu"))
        self.score = score

    def __call__(self, argv: Sequence[str], log: Path | None) -> int:
        argv = list(argv)
        if argv[2] != "mutate" or self.score is None:
            return super().__call__(argv, log)
        self.commands.append(argv)
        out = Path(argv[argv.index("--out") + 1])
        out.mkdir(parents=True, exist_ok=True)
        (out / "mutation.json").write_text(json.dumps({"score": self.score, "counts": {
            "killed": 9, "survived": 1, "timeout": 0, "not_run": 2}}))
        return 1


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
