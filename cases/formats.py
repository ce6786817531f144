"""Float formats keyed by dtype, and float<->bits helpers that never go through a float cast."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class FloatFormat:
    """Bit layout of one IEEE-style binary format, enough to build any class of value from raw bits."""

    name: str
    dtype: torch.dtype
    int_dtype: torch.dtype
    width: int
    exponent_bits: int
    mantissa_bits: int

    @property
    def sign_bit(self) -> int:
        return 1 << (self.width - 1)

    @property
    def abs_mask(self) -> int:
        return self.sign_bit - 1

    @property
    def exponent_mask(self) -> int:
        return ((1 << self.exponent_bits) - 1) << self.mantissa_bits

    @property
    def mantissa_mask(self) -> int:
        return (1 << self.mantissa_bits) - 1

    @property
    def quiet_bit(self) -> int:
        return 1 << (self.mantissa_bits - 1)

    @property
    def nan_count(self) -> int:
        """Number of NaN patterns: both signs times every non-zero mantissa under an all-ones exponent."""
        return 2 * self.mantissa_mask


FP32 = FloatFormat("fp32", torch.float32, torch.int32, 32, 8, 23)
BF16 = FloatFormat("bf16", torch.bfloat16, torch.int16, 16, 8, 7)
FP16 = FloatFormat("fp16", torch.float16, torch.int16, 16, 5, 10)

FP64 = FloatFormat("fp64", torch.float64, torch.int64, 64, 11, 52)  # outside the kernel's domain; contract inputs

FORMATS: dict[str, FloatFormat] = {f.name: f for f in (FP32, BF16, FP16, FP64)}
BY_DTYPE: dict[torch.dtype, FloatFormat] = {f.dtype: f for f in FORMATS.values()}


def fmt_of(dtype_or_name: torch.dtype | str) -> FloatFormat:
    """Look a format up by torch dtype or by its short name (fp32, bf16, fp16)."""
    if isinstance(dtype_or_name, str):
        return FORMATS[dtype_or_name]
    return BY_DTYPE[dtype_or_name]


def _to_signed(bits: int, width: int) -> int:
    bits &= (1 << width) - 1
    return bits - (1 << width) if bits >> (width - 1) else bits


def from_bits(bits: Iterable[int] | torch.Tensor, fmt: FloatFormat) -> torch.Tensor:
    """Reinterpret unsigned bit patterns as fmt's floats (a view of an int tensor, no float cast)."""
    if isinstance(bits, torch.Tensor):  # two's complement by arithmetic, in the narrowest type that holds it
        work = torch.int32 if fmt.width <= 16 else torch.int64
        wide = (bits & ((1 << fmt.width) - 1)).to(work)
        signed = wide - ((wide >> (fmt.width - 1)) << fmt.width)
        return signed.to(fmt.int_dtype).view(fmt.dtype)
    ints = [_to_signed(int(b), fmt.width) for b in bits]
    return torch.tensor(ints, dtype=fmt.int_dtype).view(fmt.dtype)


def to_bits(values: torch.Tensor) -> torch.Tensor:
    """Unsigned bit patterns of a float tensor as int64 (CPU), for messages and the bit reference."""
    fmt = fmt_of(values.dtype)
    ints = values.detach().cpu().contiguous().view(fmt.int_dtype).to(torch.int64)
    return ints & ((1 << fmt.width) - 1)


def hex_bits(bits: int, fmt: FloatFormat) -> str:
    """Zero-padded hex of one pattern, the way a kernel engineer reads it (0x7FC0, 0x7F800001)."""
    return f"0x{bits:0{fmt.width // 4}X}"
