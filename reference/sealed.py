"""Reading tensors in a way the module under test cannot bend: torch's C-level methods and numpy, bound at import.

The kernel module (and any --kernel-setup) is imported into the process that computes expected counts and judges
results. A vendor plugin that patches `torch.Tensor.sum`, `torch.isnan` or `Tensor.__eq__` would otherwise bend
the reference and the comparison along with the kernel. `torch._C.TensorBase` and `numpy.ndarray` are immutable
types (their methods cannot be reassigned from Python), the module-level functions used here are bound when this
module is imported (before any kernel), and every read runs with torch-function overrides (subclasses, modes)
turned off. So expected counts and the values judged depend only on the tensor's bits.
"""
from __future__ import annotations

import numpy as np
import torch

_BASE = torch._C.TensorBase
_DETACH = _BASE.detach
_CPU = _BASE.cpu
_CONTIGUOUS = _BASE.contiguous
_VIEW = _BASE.view
_NUMPY = _BASE.numpy
_TO = _BASE.to
_NO_TORCH_FUNCTION = torch._C.DisableTorchFunction
_TENSOR = torch.tensor
_INT32 = torch.int32
_INT64 = torch.int64
_INT_VIEW = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
# per float dtype: (|bits| mask, exponent mask); |bits| above the exponent mask is a NaN (cases.formats derives the
# same masks for building cases; the reference keeps its own so that it imports nothing of ours)
_FLOAT_MASKS = {
    torch.float16: (0x7FFF, 0x7C00),
    torch.bfloat16: (0x7FFF, 0x7F80),
    torch.float32: (0x7FFFFFFF, 0x7F800000),
    torch.float64: (0x7FFFFFFFFFFFFFFF, 0x7FF0000000000000),
}
_ELEMENT_SIZE = _BASE.element_size
_INDEX_SELECT = _BASE.index_select
_RESHAPE = _BASE.reshape
_DTYPE = _BASE.dtype.__get__  # type: ignore[attr-defined]
_SHAPE = _BASE.shape.__get__  # type: ignore[attr-defined]
_DEVICE = _BASE.device.__get__  # type: ignore[attr-defined]


def dtype_of(x: torch.Tensor) -> torch.dtype:
    """x.dtype through the C-level descriptor (a subclass or a patched class cannot answer for it)."""
    return _DTYPE(x)


def shape_of(x: torch.Tensor) -> tuple[int, ...]:
    """x.shape through the C-level descriptor, as a tuple of ints."""
    return tuple(int(n) for n in _SHAPE(x))


def host_array(x: torch.Tensor) -> np.ndarray:
    """x's values on the host as a numpy array of x's shape (a copy), read through C-level methods only."""
    with _NO_TORCH_FUNCTION():
        plain = _CONTIGUOUS(_CPU(_DETACH(x)))
        if _DTYPE(plain) in (torch.bfloat16, torch.float16):  # numpy has no bfloat16: widen, exactly
            plain = _TO(plain, torch.float32)
        return np.array(_NUMPY(plain), copy=True)


def host_bits(x: torch.Tensor) -> np.ndarray:
    """x's raw bit patterns on the host as a signed integer numpy array of x's shape."""
    with _NO_TORCH_FUNCTION():
        plain = _CONTIGUOUS(_CPU(_DETACH(x)))
        return np.array(_NUMPY(_VIEW(plain, _INT_VIEW[_ELEMENT_SIZE(plain)])), copy=True)


def row_bits(x: torch.Tensor, rows: list[int]) -> np.ndarray:
    """The raw bit patterns of some rows of a 2-D tensor, on the host: [len(rows), columns], signed integers."""
    with _NO_TORCH_FUNCTION():
        picked = _INDEX_SELECT(x, 0, _TO(_TENSOR(rows, dtype=_INT64), _DEVICE(x)))
    return host_bits(picked)


def nan_counts(x: torch.Tensor) -> list[int]:
    """NaNs per row (last dimension) of a floating tensor, from its bits: any sign, any payload, quiet or not."""
    shape = shape_of(x)
    if dtype_of(x) not in _FLOAT_MASKS:  # integers and bools hold no NaN
        rows = int(np.prod(shape[:-1], dtype=np.int64)) if shape else 1
        return [0] * rows
    abs_mask, exponent = _FLOAT_MASKS[dtype_of(x)]
    bits = host_bits(x)
    unsigned = bits.view(np.dtype(f"u{bits.dtype.itemsize}"))  # the same bits, compared without sign extension
    flags = (unsigned & unsigned.dtype.type(abs_mask)) > unsigned.dtype.type(exponent)
    return [int(n) for n in np.asarray(flags.sum(axis=-1)).reshape(-1).tolist()]


def counts_tensor(values: list[int], rows_shape: tuple[int, ...]) -> torch.Tensor:
    """Counts as a plain int32 CPU tensor of shape rows_shape, made by functions bound before any kernel import."""
    with _NO_TORCH_FUNCTION():
        return _RESHAPE(_TENSOR(values, dtype=_INT32), rows_shape)


def expected(x: torch.Tensor) -> torch.Tensor:
    """isnan(x).sum(-1) as int32 on the CPU, computed from raw bits with nothing the kernel module can patch."""
    return counts_tensor(nan_counts(x), shape_of(x)[:-1])


def int_list(x: torch.Tensor) -> list[int]:
    """An integer tensor's values as Python ints (any subclass read as its plain data)."""
    return [int(v) for v in host_array(x).reshape(-1).tolist()]


def device_type(x: torch.Tensor) -> str:
    """The device type a tensor says it lives on, read without any torch-function override."""
    with _NO_TORCH_FUNCTION():
        return str(_DEVICE(x).type)
