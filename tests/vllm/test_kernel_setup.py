"""--kernel-setup specs: parsed strictly, run in order, every failure a SetupError naming the spec and the cause."""
from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from harness.kernel_setup import (
    SetupError,
    SetupSpec,
    describe_resolution,
    parse_spec,
    parse_specs,
    run_setup,
    run_setups,
)
from tests.vllm.fakes import FakeModules

pytestmark = pytest.mark.nan_harness


@pytest.mark.parametrize(
    "text, spec",
    [
        ("setups.vllm_interpreter", SetupSpec("setups.vllm_interpreter")),
        ("setups.vllm_interpreter:install", SetupSpec("setups.vllm_interpreter", "install")),
        ("pkg:Patcher.apply", SetupSpec("pkg", "Patcher.apply")),
        ("  mod:fn  ", SetupSpec("mod", "fn")),
    ],
)
def test_spec_parses_and_prints_back(text: str, spec: SetupSpec) -> None:
    assert parse_spec(text) == spec
    assert str(spec) == text.strip()


@pytest.mark.parametrize("text", ["", ":install", "mod:", "my-setup", "mod:1fn", "mod::fn", "a..b", "mod:fn:x"])
def test_malformed_spec_is_refused_with_an_example(text: str) -> None:
    with pytest.raises(SetupError, match=r"--kernel-setup .*MODULE:CALLABLE"):
        parse_spec(text)


def test_no_option_given_means_no_setups() -> None:
    assert parse_specs(None) == () and parse_specs([]) == ()


def _logging_module(fakes: FakeModules, name: str, log: Path) -> str:
    """A module that logs its import and each call of setup(), so order and counts can be read back."""
    return fakes.write(
        name,
        f"""
        from pathlib import Path
        LOG = Path({str(log)!r})
        with LOG.open("a") as f:
            f.write("import {name}\\n")

        def setup():
            with LOG.open("a") as f:
                f.write("call {name}\\n")
        """,
    )


def test_setups_run_in_command_line_order(fakes: FakeModules, tmp_path: Path) -> None:
    log = tmp_path / "log"
    first = _logging_module(fakes, "setup_first", log)
    second = _logging_module(fakes, "pkg_two.setup_second", log)
    ran = run_setups(parse_specs([f"{second}:setup", first, f"{first}:setup"]))
    assert [str(s) for s in ran] == [f"{second}:setup", first, f"{first}:setup"]
    assert log.read_text().splitlines() == [
        f"import {second}",
        f"call {second}",
        f"import {first}",  # a bare module is imported for its side effects only ...
        f"call {first}",  # ... and setup() runs once, when named
    ]


def test_missing_module_names_the_module(fakes: FakeModules) -> None:
    with pytest.raises(SetupError, match=r"--kernel-setup no_such_setup:install: no module named 'no_such_setup'"):
        run_setup(parse_spec("no_such_setup:install"))


def test_missing_dependency_of_the_setup_reads_as_an_import_failure(fakes: FakeModules) -> None:
    name = fakes.write("needs_missing", "import no_such_dependency_xyz\n")
    with pytest.raises(SetupError) as err:
        run_setup(parse_spec(name))
    text = str(err.value)
    assert text.startswith(f"--kernel-setup {name}: importing {name} failed: ModuleNotFoundError")
    assert "no_such_dependency_xyz" in text and "needs_missing.py:" in text


def test_missing_callable_is_named(fakes: FakeModules) -> None:
    name = fakes.write("no_callable", "x = 1\n")
    with pytest.raises(SetupError, match=rf"--kernel-setup {name}:install: {name} has no attribute 'install'"):
        run_setup(parse_spec(f"{name}:install"))


def test_attribute_that_is_not_callable_is_refused(fakes: FakeModules) -> None:
    name = fakes.write("not_callable", "install = 3\n")
    with pytest.raises(SetupError, match=r"install is a int, not callable"):
        run_setup(parse_spec(f"{name}:install"))


@pytest.mark.parametrize(
    "body, cause",
    [
        ("raise ValueError('boom')", r"install\(\) failed: ValueError: boom \(.*raising_setup\.py:\d+\)"),
        ("raise SystemExit(3)", r"install\(\) failed: called sys.exit\(3\)"),
        ("import sys; sys.exit('no vllm here')", r"install\(\) failed: called sys.exit\('no vllm here'\)"),
        ("raise RuntimeError()", r"install\(\) failed: RuntimeError \("),
    ],
    ids=["ValueError", "SystemExit-code", "SystemExit-message", "RuntimeError-empty"],
)
def test_a_raising_setup_becomes_a_setup_error(fakes: FakeModules, body: str, cause: str) -> None:
    name = fakes.write("raising_setup", f"def install():\n    {body}\n")
    with pytest.raises(SetupError, match=rf"--kernel-setup {name}:install: {cause}"):
        run_setup(parse_spec(f"{name}:install"))


def test_a_setup_that_needs_arguments_is_a_setup_error(fakes: FakeModules) -> None:
    name = fakes.write("needs_args", "def install(device):\n    pass\n")
    with pytest.raises(SetupError, match=r"install\(\) failed: TypeError: .*device"):
        run_setup(parse_spec(f"{name}:install"))


def test_syntax_error_in_the_setup_module_is_a_setup_error(fakes: FakeModules) -> None:
    name = fakes.write("broken_syntax", "def install(:\n")
    with pytest.raises(SetupError, match=rf"importing {name} failed: SyntaxError.*broken_syntax\.py:1\)"):
        run_setup(parse_spec(f"{name}:install"))


def test_exit_at_import_is_a_setup_error(fakes: FakeModules) -> None:
    name = fakes.write("exits_on_import", "raise SystemExit(2)\n")
    with pytest.raises(SetupError, match=rf"importing {name} failed: called sys.exit\(2\)"):
        run_setup(parse_spec(name))


def test_first_failure_stops_the_rest(fakes: FakeModules, tmp_path: Path) -> None:
    log = tmp_path / "log"
    later = _logging_module(fakes, "runs_later", log)
    bad = fakes.write("fails_first", "def install():\n    raise ValueError('stop')\n")
    with pytest.raises(SetupError, match="stop"):
        run_setups(parse_specs([f"{bad}:install", f"{later}:setup"]))
    assert not log.exists()


def test_keyboard_interrupt_is_not_swallowed(fakes: FakeModules) -> None:
    name = fakes.write("interrupted", "def install():\n    raise KeyboardInterrupt\n")
    with pytest.raises(KeyboardInterrupt):
        run_setup(parse_spec(f"{name}:install"))


_KERNEL_SOURCE = """
import torch
import triton
import triton.language as tl
import {libdevice} as libdevice


@triton.jit
def _num_nans_kernel(logits_ptr, logits_stride, num_nans_ptr, vocab_size, BLOCK_SIZE: tl.constexpr):
    x = tl.load(logits_ptr + tl.arange(0, BLOCK_SIZE))
    tl.store(num_nans_ptr, tl.sum(libdevice.isnan(x).to(tl.int32)))


def get_num_nans(logits):
    return torch.zeros(logits.shape[0], dtype=torch.int32)
"""

_LIBDEVICE_SOURCE = """
import triton
import triton.language as tl


@triton.jit
def isnan(x):
    return x != x
"""


def _libdevice_kernel(fakes: FakeModules, prefix: str) -> tuple[str, str, str]:
    """A kernel module in the shape of upstream vLLM's (module-level libdevice), re-exported by a second module."""
    lib = fakes.write(f"{prefix}_libdevice", _LIBDEVICE_SOURCE)
    defining = fakes.write(f"{prefix}_logits", _KERNEL_SOURCE.format(libdevice=lib))
    reexport = fakes.write(f"{prefix}_reexport", f"from {defining} import _num_nans_kernel, get_num_nans\n")
    return lib, defining, reexport


def test_resolution_names_the_defining_module_and_libdevice(fakes: FakeModules) -> None:
    lib, defining, reexport = _libdevice_kernel(fakes, "res")
    found = describe_resolution(importlib.import_module(reexport))
    assert json.loads(json.dumps(found)) == found
    assert found["module"] == reexport
    assert found["get_num_nans"] == {
        "kind": "function",
        "qualname": "get_num_nans",
        "module": defining,
        "file": str(fakes.root / f"{defining}.py"),
    }
    kernel = found["_num_nans_kernel"]
    assert isinstance(kernel, dict) and kernel["kind"].startswith("triton ")
    assert (kernel["qualname"], kernel["module"]) == ("_num_nans_kernel", defining)
    assert kernel["file"] == str(fakes.root / f"{defining}.py")
    libdevice = found["libdevice"]
    assert isinstance(libdevice, dict)
    assert (libdevice["globals_of"], libdevice["name"]) == (defining, lib)
    assert libdevice["file"] == str(fakes.root / f"{lib}.py")
    assert isinstance(libdevice["isnan"], dict) and libdevice["isnan"]["module"] == lib


def test_resolution_sees_a_rebound_libdevice(fakes: FakeModules) -> None:
    """The planted patch: rebinding the defining module's libdevice must show up, even through a re-export."""
    _, defining, reexport = _libdevice_kernel(fakes, "rebind")
    other = fakes.write("rebind_other_libdevice", _LIBDEVICE_SOURCE)
    before = describe_resolution(importlib.import_module(reexport))["libdevice"]
    importlib.import_module(defining).libdevice = importlib.import_module(other)
    after = describe_resolution(reexport)["libdevice"]
    assert isinstance(before, dict) and isinstance(after, dict)
    assert (before["name"], after["name"]) == ("rebind_libdevice", other)


def test_resolution_sees_a_replaced_wrapper(fakes: FakeModules) -> None:
    _, defining, _ = _libdevice_kernel(fakes, "swap")
    replacement = fakes.write("swap_replacement", "def get_num_nans(logits):\n    return None\n")
    module = importlib.import_module(defining)
    module.get_num_nans = importlib.import_module(replacement).get_num_nans
    found = describe_resolution(module)["get_num_nans"]
    assert isinstance(found, dict) and found["module"] == replacement


def test_resolution_of_our_kernel_has_no_module_level_libdevice() -> None:
    import kernel

    found = describe_resolution(kernel)
    assert isinstance(found["get_num_nans"], dict) and found["get_num_nans"]["module"] == "kernel.num_nans"
    assert isinstance(found["_num_nans_kernel"], dict)
    assert found["_num_nans_kernel"]["file"].endswith("kernel/num_nans.py")  # type: ignore[union-attr]
    assert found["libdevice"] is None
    json.dumps(found)
