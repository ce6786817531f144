"""Per-test coverage of compiled launches: a kernel launched on a device ran its jit callees' lines too."""
from __future__ import annotations

import importlib
import sys
from pathlib import Path

from mutate.specs import as_jit_function
from mutate.coverage import Recorder

_HELPERS = '''
import triton
import triton.language as tl


@triton.jit
def is_nan_flags(x):
    bits = x.to(tl.int32, bitcast=True)
    return ((bits & 0x7FFFFFFF) > 0x7F800000).to(tl.int32)


@triton.jit
def never_called(x):
    return x + 1
'''

_KERNELS = '''
import triton
import triton.language as tl

import cov_pkg.helpers as helpers
from cov_pkg.helpers import is_nan_flags


@triton.jit
def count(x_ptr, out_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(out_ptr, tl.sum(is_nan_flags(x), axis=0) + tl.sum(helpers.is_nan_flags(x), axis=0))
'''


def test_a_compiled_launch_covers_the_kernel_and_its_callees(tmp_path: Path) -> None:
    """The lines of `count` and of `is_nan_flags` (named directly and as module.attr) are reached by a launch of
    `count`; `never_called` is not (a mutant there reaches no test)."""
    package = tmp_path / "cov_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "helpers.py").write_text(_HELPERS)
    (package / "kernels.py").write_text(_KERNELS)
    sys.path.insert(0, str(tmp_path))
    try:
        kernels = importlib.import_module("cov_pkg.kernels")
        files = {str(package / "helpers.py"), str(package / "kernels.py")}
        found = Recorder(files)._kernel_lines(as_jit_function(kernels.count))
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m.startswith("cov_pkg")]:
            del sys.modules[name]
    assert {11, 12} <= found[str(package / "kernels.py")], found  # count's body
    assert {8, 9} <= found[str(package / "helpers.py")], found  # is_nan_flags's body
    assert 14 not in found[str(package / "helpers.py")], "never_called was not launched"
