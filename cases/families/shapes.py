"""Edge shapes: vocab sizes around the block, one and three rows, and a large batch sized per backend."""
from __future__ import annotations

from dataclasses import dataclass

from cases.anchor import ANCHOR_BLOCK_SIZE, ANCHOR_SEED, DTYPES
from cases.families import LAYOUTS
from cases.family import Built, Context, Family, params_of
from cases.formats import fmt_of
from cases.random_bits import generator, randn_with_nans
from reference import expected_counts
from verdict.record import CaseParams

EDGE_VOCABS: tuple[int, ...] = (1, 2, ANCHOR_BLOCK_SIZE - 1, ANCHOR_BLOCK_SIZE, ANCHOR_BLOCK_SIZE + 1,
                                 2 * ANCHOR_BLOCK_SIZE + 1)
BATCH_VOCAB = 33
NAN_FRACTION = 0.25


@dataclass(frozen=True)
class ShapeCase:
    """`rows` x `vocab` random values with about a quarter NaNs of random patterns."""

    dtype: str
    rows: int
    vocab: int
    seed: int = ANCHOR_SEED

    def __str__(self) -> str:
        return f"{self.dtype}-shape-{self.rows}x{self.vocab}"


def build(case: ShapeCase) -> Built:
    host = randn_with_nans(case.rows, case.vocab, fmt_of(case.dtype), generator(case.seed), NAN_FRACTION)
    return Built(host, expected_counts(host))


def params(case: ShapeCase) -> CaseParams:
    return params_of(case, (case.rows, case.vocab), f"{NAN_FRACTION}", layout="shape")


def cases(context: Context) -> tuple[ShapeCase, ...]:
    """Edge vocabs, then the large batch: more rows than a CUDA grid's y/z limit on accelerators."""
    edges = tuple(ShapeCase(d, rows, vocab) for d in DTYPES for rows in (1, 3) for vocab in EDGE_VOCABS)
    return edges + tuple(ShapeCase(d, context.batch_rows, BATCH_VOCAB) for d in DTYPES)


FAMILY = Family(
    "shapes", "nan_layout",
    "edge shapes: vocab sizes around the block, one and three rows, and a large batch",
    cases, build, params, marker_help=LAYOUTS, order=50,
)
