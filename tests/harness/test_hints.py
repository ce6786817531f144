"""Every command a report hints at works where the run happened: a checkout's tox env, or the installed
`nan-harness`; a CPU run names the node commands that run what it could not (harness.skips). A node run without
-n gets the workers its cards want."""
from __future__ import annotations

from pathlib import Path

import pytest

from harness import hooks, preflight, skips

pytestmark = pytest.mark.nan_harness


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The harness as pip installs it: no checkout (and no tox.ini) beside it."""
    monkeypatch.setattr(skips, "checkout", lambda: None)


def test_a_checkout_is_told_its_tox_envs() -> None:
    semantics = skips.accelerator_semantics("cpu")
    assert semantics.commands == ("tox -e cuda -- -m nan_semantics", "tox -e npu -- -m nan_semantics")
    assert skips.large_batches().commands == ("tox -e cpu-batches",)
    assert skips.fp32_full().commands[0] == "tox -e cuda -- --nan-fp32-full -m nan_fp32_full"
    assert skips.host_tensor("cpu").commands == ("tox -e cuda", "tox -e npu")


@pytest.mark.usefixtures("installed")
def test_an_installed_run_is_told_the_nan_harness_form() -> None:
    everything = [skips.accelerator_semantics("cpu"), skips.second_card(1), skips.host_tensor("cpu"),
                  skips.large_batches(), skips.fp32_full()]
    commands = [c for what in everything for c in what.commands]
    assert commands and not any("tox" in c for c in commands), commands
    assert skips.accelerator_semantics("cpu").commands == ("nan-harness --device cuda -m nan_semantics",
                                                           "nan-harness --device npu -m nan_semantics")
    assert skips.large_batches().commands == ("nan-harness --device cpu --nan-large-batches -m nan_batches",)


def test_a_checkout_without_tox_ini_is_told_the_nan_harness_form(monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: Path) -> None:
    monkeypatch.setattr(skips, "checkout", lambda: tmp_path)  # a source tree without tox.ini (an sdist)
    assert skips.host_tensor("cpu").commands == ("nan-harness --device cuda", "nan-harness --device npu")


@pytest.mark.usefixtures("installed")
def test_the_interpreter_preflight_names_pip_where_no_tox_env_pins_numpy() -> None:
    assert "pip install 'numpy<2.5'" in preflight._pinned_numpy() and "tox" not in preflight._pinned_numpy()


@pytest.mark.parametrize("device, cards, workers", [("cuda", 1, 4), ("npu", 2, 4), ("cuda", 8, 8), ("npu", 16, 16),
                                                     ("cuda", 0, 1), ("cpu", 0, 1)])
def test_a_node_run_without_n_gets_workers_by_its_cards(monkeypatch: pytest.MonkeyPatch, device: str, cards: int,
                                                         workers: int) -> None:
    """Without -n: every card used, at least 4 workers on an accelerator (one card's launches overlap: measured on
    the H100, docs/backends.md); one on the CPU or where no card is seen (start-up then ends the run)."""
    monkeypatch.setattr(hooks.processes, "count_cards", lambda d, cwd: (cards, None))
    monkeypatch.setattr(hooks.needs, "missing", lambda d: None)  # a node holding what the device needs
    monkeypatch.setattr(hooks, "_cpu_build", lambda: False)  # and a CUDA build of torch
    assert hooks._node_workers(device) == workers


def test_a_cpu_build_of_torch_starts_no_card_counting_child(monkeypatch: pytest.MonkeyPatch) -> None:
    def never(device: str, cwd: Path) -> tuple[int, None]:
        raise AssertionError("a CPU build of torch has no card to count")
    monkeypatch.setattr(hooks.processes, "count_cards", never)
    monkeypatch.setattr(hooks.needs, "missing", lambda d: None)
    monkeypatch.setattr(hooks, "_cpu_build", lambda: True)
    assert hooks._node_workers("cuda") == 1


def test_cards_that_cannot_be_counted_leave_one_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(device: str, cwd: Path) -> tuple[int, None]:
        raise hooks.processes.CardCountError("cannot count cuda cards: driver gone")
    monkeypatch.setattr(hooks.processes, "count_cards", broken)
    monkeypatch.setattr(hooks.needs, "missing", lambda d: None)
    monkeypatch.setattr(hooks, "_cpu_build", lambda: False)
    assert hooks._node_workers("cuda") == 1
    monkeypatch.setattr(hooks.processes, "count_cards", lambda d, cwd: (8, None))
    monkeypatch.setattr(hooks.needs, "missing", lambda d: "torch_npu")  # nothing to count with: one, then ENVIRONMENT
    assert hooks._node_workers("npu") == 1
