"""Generated cases: shapes, row padding, storage offsets, views, dtypes and NaN bit patterns drawn, not listed.

Each case is one `GenCase` record holding every drawn parameter plus the seed of its data; its id
(`gen-s<seed>-<dtype>-<R>x<V>-stride<S>-off<O>-tail<T>-nan<frac>-<nan kind>-<background>`) is all `build` needs,
and `parse(id)` gives the record back, so any case, drawn here or shrunk by the hypothesis property test
(`tests/precision/test_generated_property.py`, strategies in `cases/strategies.py`), reruns from its id alone:
`pytest tests/precision/test_families.py --nan-gen-case <id> -k <id>`.

The family's own cases come from a seeded PRNG (`--nan-gen-seed`, default 8; `--nan-gen-cases`, default 10 on the
CPU, 100 on accelerators), within a cost budget: the Triton interpreter pays per block iteration
(rows x ceil(vocab / 8192)), so the CPU keeps each case to 96 of them; accelerators get rows into the thousands
and vocabularies past 262,144 together.

The input is a [R, V] view at row stride S = V + pad, starting O elements into one allocation that continues T
rows past the view (the vLLM pattern `logits[:num_reqs]` of a larger buffer). Everything outside the view holds
NaN patterns of any sign and payload; `Built.input_on` places the same view on a copy of the whole storage.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass

import torch

from cases.anchor import ANCHOR_BLOCK_SIZE, DTYPES
from cases.family import Built, Context, Family, params_of
from cases.formats import FloatFormat, fmt_of, from_bits
from cases.ieee import IEEE_CLASSES
from cases.random_bits import generator, randn, random_nan_bits
from cases.registry import FamilyError
from reference import bits_reference
from verdict.record import CaseParams

DEFAULT_SEED = 8
CPU_CASES, DEVICE_CASES = 10, 100
MAX_ROWS = 4096
MAX_VOCAB = 300_000
MAX_OFFSET = 64
MAX_TAIL = 2
MAX_SEED = (1 << 20) - 1

# vocabularies of production models: Llama 2, Phi-3, GPT-2, Llama 3, Qwen2 (raw and padded), Gemma, Gemma 3
PRODUCTION_VOCABS: tuple[int, ...] = (32000, 32064, 50257, 128256, 151936, 152064, 256000, 262144)
# block multiples +-1 for the block sizes ports use, 16- and 17-bit counter limits, production vocabs and past them
VOCAB_BOUNDARIES: tuple[int, ...] = tuple(sorted(
    {1, 2, 3, 15, 16, 17, 127, 128, 129}
    | {m * b + d for b in (1024, 2048, 4096, ANCHOR_BLOCK_SIZE, 2 * ANCHOR_BLOCK_SIZE)
       for m in (1, 2) for d in (-1, 0, 1)}
    | {65535, 65536, 65537, 131071, 131072, 131073, 262145, MAX_VOCAB}
    | set(PRODUCTION_VOCABS)
))
ROW_ALIGNMENTS: tuple[int, ...] = (16, 64, 128, 256, ANCHOR_BLOCK_SIZE)  # padded strides: vocab rounded up to these
FRACS: tuple[float, ...] = (1.0, 0.0, 0.5, 0.1, 0.01, 0.001)  # the first shrinks best: all NaN, then none
NAN_KINDS: tuple[str, ...] = ("any", "quiet", "signaling", "negative", "payload1", "payloadmax")
BACKGROUNDS: tuple[str, ...] = ("randn", "specials")  # non-NaN values: normal ones, or +-Inf/0/subnormals/max
ALIGNMENT = 16

ID_PATTERN = re.compile(
    r"gen-s(?P<seed>\d+)-(?P<dtype>fp32|bf16|fp16)-(?P<rows>\d+)x(?P<vocab>\d+)-stride(?P<stride>\d+)"
    r"-off(?P<offset>\d+)-tail(?P<tail>\d+)-nan(?P<frac>[0-9.]+)-(?P<nans>[a-z0-9]+)-(?P<background>[a-z]+)"
)


@dataclass(frozen=True)
class Budget:
    """What one case may cost: block iterations (rows x ceil(vocab / 8192)) and storage elements."""

    blocks: int
    elements: int


CPU_BUDGET = Budget(96, 1 << 21)  # under 1M lanes: well under a second per path on the interpreter
DEVICE_BUDGET = Budget(1 << 22, 1 << 26)  # 2^26 elements (256 MiB of fp32): each built on the host first


def budget_for(device: str) -> Budget:
    return CPU_BUDGET if device == "cpu" else DEVICE_BUDGET


@dataclass(frozen=True, repr=False)
class GenCase:
    """Every drawn parameter of one generated case; str() is its id, parse(str(case)) == case."""

    seed: int
    dtype: str
    rows: int
    vocab: int
    pad: int  # row stride = vocab + pad
    offset: int  # storage offset of the view, in elements
    tail: int  # whole rows of storage after the view
    frac: float  # chance of each element being a NaN
    nans: str  # NaN bit patterns, one of NAN_KINDS
    background: str  # the other values, one of BACKGROUNDS

    def __post_init__(self) -> None:
        problems = []
        if self.dtype not in DTYPES:
            problems.append(f"dtype {self.dtype!r} not one of {DTYPES}")
        if self.rows < 1 or self.vocab < 1 or self.pad < 0 or self.offset < 0 or self.tail < 0 or self.seed < 0:
            problems.append("rows and vocab must be >= 1; pad, offset, tail and seed >= 0")
        if self.frac not in FRACS:
            problems.append(f"nan fraction {self.frac} not one of {FRACS}")
        if self.nans not in NAN_KINDS:
            problems.append(f"NaN kind {self.nans!r} not one of {NAN_KINDS}")
        if self.background not in BACKGROUNDS:
            problems.append(f"background {self.background!r} not one of {BACKGROUNDS}")
        if problems:
            raise ValueError(f"not a generated case: {'; '.join(problems)}")

    @property
    def stride(self) -> int:
        return self.vocab + self.pad

    @property
    def blocks(self) -> int:
        """Block iterations of the anchor's launch: what the interpreter's time follows."""
        return self.rows * -(-self.vocab // ANCHOR_BLOCK_SIZE)

    @property
    def storage_elements(self) -> int:
        return self.offset + (self.rows + self.tail) * self.stride

    def __str__(self) -> str:
        return (f"gen-s{self.seed}-{self.dtype}-{self.rows}x{self.vocab}-stride{self.stride}-off{self.offset}"
                f"-tail{self.tail}-nan{self.frac}-{self.nans}-{self.background}")

    def __repr__(self) -> str:  # a failing example prints as its id: parse('gen-...')
        return f"parse({str(self)!r})"

    def _repr_pretty_(self, printer: object, cycle: bool) -> None:  # hypothesis's printer (else it lists fields)
        printer.text(repr(self))  # type: ignore[attr-defined]


def parse(case_id: str) -> GenCase:
    """The record a generated id names; ValueError when it is not one."""
    m = ID_PATTERN.fullmatch(case_id.strip())
    if m is None:
        raise ValueError(f"{case_id!r} is not a generated case id (gen-s<seed>-<dtype>-<R>x<V>-stride<S>-off<O>-"
                         "tail<T>-nan<frac>-<nan kind>-<background>)")
    g = m.groupdict()
    vocab, stride = int(g["vocab"]), int(g["stride"])
    if stride < vocab:
        raise ValueError(f"{case_id!r}: stride {stride} is below vocab {vocab}")
    case = GenCase(int(g["seed"]), g["dtype"], int(g["rows"]), vocab, stride - vocab, int(g["offset"]),
                   int(g["tail"]), float(g["frac"]), g["nans"], g["background"])
    if str(case) != case_id.strip():
        raise ValueError(f"{case_id!r} is not written the way the case prints ({case})")
    return case


def max_rows(vocab: int, pad: int, offset: int, tail: int, budget: Budget) -> int:
    """The most rows a case with these columns may have within the budget (at least 1)."""
    by_blocks = budget.blocks // -(-vocab // ANCHOR_BLOCK_SIZE)
    by_elements = (budget.elements - offset) // (vocab + pad) - tail
    return max(1, min(MAX_ROWS, by_blocks, by_elements))


def padding_for(vocab: int, alignment: int) -> int:
    """Padding that rounds a row up to a multiple of `alignment` elements."""
    return -vocab % alignment


# -- building --------------------------------------------------------------------------------------------------
def nan_bits(kind: str, n: int, fmt: FloatFormat, gen: torch.Generator) -> torch.Tensor:
    """n NaN patterns of one kind, with random sign (except `negative`) and random payload where the kind allows."""

    def ints(low: int, high: int) -> torch.Tensor:  # uniform in [low, high]
        return torch.randint(low, high + 1, (n,), generator=gen, dtype=torch.int64, device="cpu")

    sign = ints(0, 1) * fmt.sign_bit
    if kind == "any":
        return random_nan_bits(n, fmt, gen)
    if kind == "quiet":
        return sign | fmt.exponent_mask | fmt.quiet_bit | ints(0, fmt.quiet_bit - 1)
    if kind == "signaling":
        return sign | fmt.exponent_mask | ints(1, fmt.quiet_bit - 1)
    if kind == "negative":
        return fmt.sign_bit | fmt.exponent_mask | ints(1, fmt.mantissa_mask)
    if kind == "payload1":
        return sign | fmt.exponent_mask | 1
    if kind == "payloadmax":
        return sign | fmt.exponent_mask | fmt.mantissa_mask
    raise ValueError(f"unknown NaN kind {kind!r}")


def background(case: GenCase, fmt: FloatFormat, gen: torch.Generator) -> torch.Tensor:
    """The non-NaN values: normal ones, or every non-NaN IEEE class of either sign mixed with normal values."""
    values = randn(case.rows, case.vocab, gen).to(fmt.dtype)
    if case.background == "specials":
        table = from_bits([c.bits(fmt, neg) for c in IEEE_CLASSES if not c.is_nan for neg in (False, True)], fmt)
        picks = torch.randint(0, 2 * len(table), (case.rows, case.vocab), generator=gen, device="cpu")
        special = picks < len(table)  # about half the values are specials
        values = torch.where(special, table[picks.clamp_(max=len(table) - 1)], values)  # = values[special] = ...
    return values


def build(case: GenCase) -> Built:
    """NaN patterns over the whole allocation, then the drawn values written through the view."""
    fmt = fmt_of(case.dtype)
    gen = generator(case.seed)
    storage = from_bits(random_nan_bits(case.storage_elements, fmt, gen), fmt)
    view = storage.as_strided((case.rows, case.vocab), (case.stride, 1), case.offset)
    values = background(case, fmt, gen)
    mask = torch.rand(case.rows, case.vocab, generator=gen, dtype=torch.float32, device="cpu") < case.frac
    # row-major, as [mask]=
    values.masked_scatter_(mask, from_bits(nan_bits(case.nans, int(mask.sum()), fmt, gen), fmt))
    view.copy_(values)
    expected = bits_reference(view)
    size = storage.element_size()
    labels = []
    for r, n in enumerate(expected.tolist()):
        start = case.offset + r * case.stride
        labels.append(f"{n} {case.nans} NaNs among {case.vocab} ({case.background}); row starts at element "
                      f"{start} ({'' if start * size % ALIGNMENT == 0 else 'not '}{ALIGNMENT}-byte aligned)")
    return Built(view, expected, labels, storage=storage)


def params(case: GenCase) -> CaseParams:
    return params_of(case, (case.rows, case.vocab), f"nan{case.frac}", layout="generated")


# -- the seeded cases ------------------------------------------------------------------------------------------
def draw(rng: random.Random, budget: Budget) -> GenCase:
    """One case from a seeded PRNG: boundary-heavy vocabs, rows weighted small, then fitted to the budget."""
    dtype = rng.choice(DTYPES)
    pick = rng.random()
    if pick < 0.5:
        vocab = rng.choice(VOCAB_BOUNDARIES)
    elif pick < 0.75:
        vocab = rng.randint(1, 3 * ANCHOR_BLOCK_SIZE)
    else:
        vocab = rng.randint(1, MAX_VOCAB)
    pick = rng.random()
    pad = 0 if pick < 0.4 else rng.randint(1, 16) if pick < 0.6 else padding_for(vocab, rng.choice(ROW_ALIGNMENTS))
    offset = 0 if rng.random() < 0.4 else rng.randint(1, MAX_OFFSET)
    tail = rng.randint(0, MAX_TAIL)
    pick = rng.random()
    rows = rng.randint(1, 4) if pick < 0.4 else rng.randint(1, 64) if pick < 0.75 else rng.randint(1, MAX_ROWS)
    rows = min(rows, max_rows(vocab, pad, offset, tail, budget))
    return GenCase(rng.randint(0, MAX_SEED), dtype, rows, vocab, pad, offset, tail, rng.choice(FRACS),
                   rng.choice(NAN_KINDS), rng.choice(BACKGROUNDS))


def seeded(count: int, seed: int = DEFAULT_SEED, budget: Budget = CPU_BUDGET) -> tuple[GenCase, ...]:
    """`count` distinct cases drawn from one seed: the same list every run."""
    rng = random.Random(seed)
    out: dict[str, GenCase] = {}
    for _ in range(20 * count):
        if len(out) >= count:
            break
        case = draw(rng, budget)
        out.setdefault(str(case), case)
    return tuple(out.values())


def cases(context: Context) -> tuple[GenCase, ...]:
    """The seeded cases for this backend, then any named with --nan-gen-case (e.g. a shrunk failure)."""
    count = context.option("gen_cases")
    if count is None:
        count = CPU_CASES if context.device == "cpu" else DEVICE_CASES
    drawn = seeded(count, context.option("gen_seed", DEFAULT_SEED), budget_for(context.device))
    named = []
    for case_id in context.option("gen_case_ids", ()):
        try:
            named.append(parse(case_id))
        except ValueError as exc:
            raise FamilyError(f"--nan-gen-case: {exc}") from exc
    out: dict[str, GenCase] = {}
    for case in (*drawn, *named):
        out.setdefault(str(case), case)
    return tuple(out.values())


FAMILY = Family(
    "generated", "nan_generated",
    "generated cases: shapes, padding, offsets, views, dtypes and NaN bit patterns drawn from a fixed seed",
    cases, build, params, order=90,
)
