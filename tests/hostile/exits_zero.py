"""Ends its process with status 0 (as a native library calling exit(0) does): at import when NAN_HOSTILE=import,
else on the first bf16 input. A correct counter otherwise."""
import os

import torch

from tests.designs.independent import _num_nans_kernel, get_num_nans as _count  # noqa: F401

if os.environ.get("NAN_HOSTILE") == "import":
    os._exit(0)


def get_num_nans(logits):
    if logits.dtype == torch.bfloat16:
        os._exit(0)
    return _count(logits)
