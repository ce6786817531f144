"""The roofline readers read every logical element once: their result is each row's (or item's) max of the bits."""
from __future__ import annotations

import pytest
import torch

from bench.roofline import INT_VIEW, torch_read, triton_read
from bench.shapes import DTYPES


@pytest.mark.parametrize("rows, vocab, stride, cores", [(9, 3000, 3000, 4), (5, 20000, 20001, 4), (2, 5000, 5008, 4), (3, 777, 800, 64)])
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_triton_reader_sees_every_element(rows: int, vocab: int, stride: int, cores: int, dtype: str,
                                          device: str) -> None:
    """Whole rows (rows >= cores) and split rows: the largest bits of each row are found wherever they sit, and
    the padding (all-ones bits, larger than any element) is never read."""
    bits = INT_VIEW[DTYPES[dtype].itemsize]
    host = torch.randint(-1000, 1000, (rows, stride), generator=torch.Generator().manual_seed(rows), dtype=bits)
    for r in range(rows):
        host[r, (r * 997) % vocab] = 20_000 + r  # each row's max in a different place, the last column included
    host[-1, vocab - 1] = 30_000
    host[:, vocab:] = torch.iinfo(bits).max
    x = host.to(device).view(DTYPES[dtype])[:, :vocab]
    got = triton_read(x, cores).cpu()
    expected = host[:, :vocab].amax(-1).to(torch.int32)
    if rows >= cores:
        assert torch.equal(got, expected)
    else:  # one max per (row, chunk) item: the row's max is the max of its items
        assert torch.equal(got.view(rows, -1).amax(-1), expected)
    assert torch.equal(torch_read(x).cpu().to(torch.int32), expected)
