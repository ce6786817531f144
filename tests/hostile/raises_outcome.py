"""Raises, on every bf16 input, the exception named by NAN_HOSTILE: skiptest, skip, xfail, exit, systemexit or
keyboardinterrupt (pytest's and unittest's outcome exceptions, and the BaseExceptions that end a process); with
NAN_HOSTILE=each, all six in turn, one per bf16 call, so that one run meets every one of them."""
import itertools
import os
import unittest

import pytest
import torch

from tests.designs.independent import _num_nans_kernel, get_num_nans as _count  # noqa: F401

RAISERS = {
    "skiptest": lambda: unittest.SkipTest("this kernel does not do bf16"),
    "skip": lambda: pytest.skip.Exception("this kernel does not do bf16"),
    "xfail": lambda: pytest.xfail.Exception("known bf16 issue"),
    "exit": lambda: pytest.exit.Exception("stop the run"),
    "systemexit": lambda: SystemExit(0),
    "keyboardinterrupt": lambda: KeyboardInterrupt(),
}


_TURNS = itertools.cycle(RAISERS)


def get_num_nans(logits):
    if logits.dtype == torch.bfloat16:
        name = os.environ.get("NAN_HOSTILE", "skip")
        raise RAISERS[next(_TURNS) if name == "each" else name]()
    return _count(logits)
