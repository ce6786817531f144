"""Random tensors with NaNs of every sign and payload, from a caller's generator (never torch's global state)."""
from __future__ import annotations

import torch

from cases.formats import FloatFormat, from_bits


def generator(seed: int) -> torch.Generator:
    """A private CPU generator: case data never depends on torch's global seed or default device."""
    return torch.Generator(device="cpu").manual_seed(seed)


def randn(rows: int, vocab: int, gen: torch.Generator) -> torch.Tensor:
    """Standard normal fp32 values on the CPU, whatever torch's default dtype and device are."""
    return torch.randn(rows, vocab, generator=gen, dtype=torch.float32, device="cpu")


def randperm(n: int, gen: torch.Generator) -> torch.Tensor:
    return torch.randperm(n, generator=gen, dtype=torch.int64, device="cpu")


def random_nan_bits(n: int, fmt: FloatFormat, gen: torch.Generator) -> torch.Tensor:
    """n NaN patterns with random sign and random non-zero payload (quiet and signaling alike), as int64 for 32-bit
    formats and int32 for 16-bit ones (the same draws either way: randint's stream does not depend on its dtype)."""
    work = torch.int32 if fmt.width <= 16 else torch.int64
    bits = torch.randint(1, fmt.mantissa_mask + 1, (n,), generator=gen, dtype=work, device="cpu")
    sign = torch.randint(0, 2, (n,), generator=gen, dtype=work, device="cpu")
    sign.mul_(fmt.sign_bit)
    return bits.bitwise_or_(sign).bitwise_or_(fmt.exponent_mask)


def randn_with_nans(rows: int, vocab: int, fmt: FloatFormat, gen: torch.Generator, frac: float) -> torch.Tensor:
    """Normal values cast to fmt, with about `frac` of the entries replaced by random NaN patterns."""
    x = randn(rows, vocab, gen).to(fmt.dtype)
    mask = torch.rand(rows, vocab, generator=gen, dtype=torch.float32, device="cpu") < frac
    x[mask] = from_bits(random_nan_bits(int(mask.sum()), fmt, gen), fmt)
    return x
