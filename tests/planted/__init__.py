"""Planted-bug variants of the kernel package, and the registry the self-test (tests/selftest) runs them from.

Each module here exposes `get_num_nans` and `_num_nans_kernel` (the anchor's signature) with one bug, so
`pytest --kernel tests.planted.<name>` puts it under test through both paths. Its docstring says the bug and
the port mistake it models. The shared correct pieces are in `_wrapper.py`.

A registry entry says which tests are meant to catch the variant (`caught_by`: regexes searched in the node ids
of failed tests, `tests/precision/test_x.py::test_y[params]`) and which cases the self-test runs (`select`: a
`-k` expression, kept narrow so one sub-run costs about the start-up of pytest).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Planted:
    """One planted bug: its module, its class, the tests meant to catch it and where it must be caught."""

    name: str
    bug_class: str
    select: str
    caught_by: tuple[str, ...]
    # "triton-ascend" or "triton": must be caught only under that Triton distribution (under the other it is a
    # documented blind spot: that Triton counts right, or refuses the input)
    flavour: str | None = None
    # run it under one pytest-xdist worker, as a user's run does: the kernel may kill the process (the case is reported
    # and the run goes on), or only a worker's allocator hands the wrapper the harness's poisoned block (prepoison)
    isolate: bool = False
    # the bug is that the kernel cannot be built for some input: a compile error is the catch, not a broken plant
    build_error_is_the_bug: bool = False
    # suite options the sub-run needs to reach the cases that catch it (e.g. --nan-large-batches on the CPU)
    options: tuple[str, ...] = ()
    # the block per failing path its first diagnosis item must name (results.json's `blocks`), where its bug is one
    blocks: tuple[tuple[str, int], ...] = ()
    # minutes through the interpreter (a 70,001-row batch): run by `tox -e selftest-slow` (and the CPU nightly), not
    # by `tox`, where a twin of the same class with a small input stands in for it
    slow: bool = False

    @property
    def module(self) -> str:
        return f"{__name__}.{self.name}"

    def __str__(self) -> str:
        return self.name


_ALL_NAN = "fp32-prefix-2x5000-nan1.0 or fp32-prefix-8x10000-nan1.0"

PLANTED: tuple[Planted, ...] = (
    # -- the NaN predicate -------------------------------------------------------------------------------------
    Planted("pred_inf", "predicate", "special or ieee-rows",
            (r"test_case\[\w+-special", r"ieee-rows")),
    Planted("pred_subnormal", "predicate", "fp32-special or fp32-ieee-rows or bf16-ieee-rows",
            (r"test_case\[fp32-special", r"(fp32|bf16)-ieee-rows")),
    Planted("pred_negative", "predicate", "ieee or bf16-prefix-1x128",
            (r"ieee-(rows|mixed)", r"test_case\[bf16")),
    Planted("pred_quiet_only", "predicate", "ieee", (r"ieee-(rows|mixed)",)),
    Planted("pred_canonical_only", "predicate", "ieee", (r"ieee-(rows|mixed)",)),
    Planted("pred_half_mask", "predicate", "bf16-special or bf16-ieee",
            (r"test_case\[bf16-special", r"bf16-ieee")),
    # each class again in another style (float compares, raw 16-bit fields, shifts, unsigned ranges), with a wrapper
    # of its own or another block (1,000 to 4,096): the diagnosis must read the values, not the shapes, first
    Planted("pred_inf_float_compare", "predicate", "fp32-special or fp32-ieee-rows",
            (r"test_case\[fp32-special", r"fp32-ieee-rows")),
    Planted("pred_inf_exponent", "predicate", "fp16-special or fp16-ieee-rows",
            (r"test_case\[fp16-special", r"fp16-ieee-rows")),
    Planted("pred_subnormal_block1000", "predicate", "fp16-special or fp16-ieee-rows",
            (r"test_case\[fp16-special", r"fp16-ieee-rows")),
    Planted("pred_quiet_only_shift", "predicate", "fp32-ieee", (r"fp32-ieee-(rows|mixed)",)),
    Planted("pred_canonical_only_float", "predicate", "bf16-ieee", (r"bf16-ieee-(rows|mixed)",)),
    Planted("pred_negative_range", "predicate", "fp32-ieee or bf16-prefix-1x128",
            (r"fp32-ieee-(rows|mixed)", r"test_case\[bf16-prefix")),
    Planted("pred_half_mask_fields", "predicate", "bf16-special or bf16-ieee",
            (r"test_case\[bf16-special", r"bf16-ieee")),
    # triton-ascend cannot load float64 at all: there the kernel refuses it, which the contract allows
    Planted("float64_low_word", "predicate", "outside_domain and float64",
            (r"test_outside_domain_refused_or_counted\[dtype-float64\]",), flavour="triton"),
    # -- traversal ---------------------------------------------------------------------------------------------
    Planted("tail_dropped", "traversal",
            "fp32-prefix-2x5000-nan0.1 or fp32-shape-1x8193 or fp32-prefix-4x8192-nan0.5",
            (r"test_case\[fp32-prefix-2x5000", r"shape-1x8193"), blocks=(("direct", 8192), ("wrapper", 8192))),
    # blocks other than the anchor's 8,192, read from the shapes: all-NaN rows of 5000 and 10000 name the block by
    # what they lose; for chunks_floor the 3000-wide padded rows tell 2,048 from 4,096
    Planted("tail_dropped_1024", "traversal", f"{_ALL_NAN} or fp32-prefix-4x8192-nan0.5",
            (r"test_case\[fp32-prefix-(2x5000|8x10000)-nan1\.0-wrapper",),
            blocks=(("direct", 8192), ("wrapper", 1024))),
    Planted("chunks_floor", "traversal", f"{_ALL_NAN} or fp32-prefix-4x8192-nan0.5 or fp32-padded-5x3000",
            (r"test_case\[fp32-prefix-(2x5000|8x10000)-nan1\.0-wrapper",), blocks=(("wrapper", 2048),)),
    Planted("mask_off_by_one", "traversal", "fp32-prefix-8x10000-nan0.5 or fp32-padded or test_padded_rows",
            (r"test_case\[fp32-prefix-8x10000", r"padded")),
    Planted("other_nan", "traversal", "fp32-prefix-2x5000-nan0.0 or fp32-shape-1x8191",
            (r"test_case\[fp32-prefix-2x5000", r"shape-1x8191"), blocks=(("direct", 8192), ("wrapper", 8192))),
    Planted("stride_kernel", "traversal", "fp32-padded or test_padded_rows", (r"padded",)),
    Planted("stride_wrapper", "traversal", "fp32-padded or test_padded_rows", (r"padded.*wrapper|test_padded_rows",)),
    Planted("tile_vs_step", "traversal", "fp32-prefix-2x5000-nan1.0 or fp32-shape-1x8191",
            (r"test_case\[fp32-prefix-2x5000", r"shape-1x8191")),
    Planted("block_overwritten", "traversal",
            "fp32-prefix-2x16384-nan0.5 or fp32-shape-1x16385 or fp32-prefix-2x5000-nan0.5",
            (r"test_case\[fp32-prefix-2x16384", r"shape-1x16385")),
    Planted("transposes_square", "traversal", "fp32-square or fp32-prefix-2x5000-nan0.5-wrapper", (r"square",)),
    # -- offsets -----------------------------------------------------------------------------------------------
    Planted("int32_offset", "offsets", "fp32-bigoffset and direct", (r"bigoffset",), isolate=True),
    Planted("offset_dropped", "offsets", "test_offset_views or fp32-prefix-2x5000-nan0.5-wrapper",
            (r"test_offset_views\[\w+-\d+-wrapper\]",)),
    # -- flag width and accumulation ---------------------------------------------------------------------------
    Planted("int1_flags", "accumulation", "fp32-prefix-1x128-nan0.5 or fp32-special",
            (r"test_case\[fp32-prefix-1x128", r"test_case\[fp32-special"), flavour="triton-ascend"),
    Planted("fp16_accum", "accumulation", "fp32-magnitudes or fp32-shape-1x8192",
            (r"magnitudes", r"shape-1x8192")),
    Planted("int16_accum", "accumulation", "fp32-magnitudes", (r"magnitudes",)),
    Planted("max_not_sum", "accumulation", "fp32-prefix-1x128-nan0.5", (r"test_case\[fp32-prefix-1x128",)),
    # -- output ------------------------------------------------------------------------------------------------
    Planted("last_row_skipped", "output", "fp32-prefix-2x5000-nan0.5", (r"test_case\[fp32-prefix-2x5000.*direct",)),
    Planted("store_if_nonzero", "output", "fp32-prefix-2x5000-nan0.0",
            (r"test_case\[fp32-prefix-2x5000-nan0\.0-direct",)),
    Planted("store_shifted", "output", "fp32-prefix-2x5000-nan0.5-direct or test_direct_launch_writes_only",
            (r"test_case\[.*-direct", r"test_direct_launch_writes_only_its_outputs")),
    Planted("batch_total_slot", "output", "fp32-prefix-2x5000-nan0.5-direct or test_direct_launch_writes_only",
            (r"test_direct_launch_writes_only_its_outputs", r"test_case\[.*-direct")),
    Planted("atomic_into_output", "output", "fp32-prefix-2x5000-nan0.5",
            (r"test_case\[fp32-prefix-2x5000-nan0\.5-direct",)),
    Planted("out_int64", "output", "fp32-prefix-1x128-nan0.5-wrapper or test_output_and_input_untouched",
            (r"test_case\[.*-wrapper", r"test_output_and_input_untouched")),
    Planted("cached_output", "output", "test_aliasing", (r"test_aliasing",)),
    Planted("cache_by_address", "output", "test_aliasing", (r"test_refilled_logits_buffer",)),
    # the wrapper's grid one short: its last row is never written; on the wrapper path only the pre-poisoned output
    # block (harness/prepoison.py) shows it as the poison, where stale memory would often read as a right count
    # (in a sub-run's own process glibc handed that block back in 1 of 2 whole self-test runs, its row read 0)
    Planted("grid_one_short", "output", "batch-5000", (r"test_large_batch\[fp32-batch-5000",),
            options=("--nan-large-batches",), isolate=True),
    Planted("stray_write", "output", "fp32-prefix-2x5000-nan0.5-direct or test_direct_launch_writes_only",
            (r"test_direct_launch_writes_only_its_outputs", r"test_case\[.*-direct")),
    # -- side effects ------------------------------------------------------------------------------------------
    Planted("kernel_writes_input", "side effects", "test_output_and_input_untouched or fp32-prefix-2x5000-nan0.1",
            (r"test_output_and_input_untouched", r"test_case\[fp32-prefix-2x5000")),
    Planted("wrapper_writes_input", "side effects",
            "test_output_and_input_untouched or fp32-prefix-2x5000-nan0.1-wrapper",
            (r"test_output_and_input_untouched", r"test_case\[fp32-prefix-2x5000.*wrapper")),
    Planted("padding_zeroed", "side effects", "fp32-padded or test_padded_rows", (r"padded",)),
    # -- the wrapper's launch: rows it never reaches (large batches; the CPU runs them only on request) ----------
    Planted("batch_split", "launch", "batch-5000", (r"test_large_batch\[fp32-batch-5000",),
            options=("--nan-large-batches",)),
    # slow: its small twin in `tox` is batch_split (the same class, a launch bound short of the batch, at 5,000 rows)
    Planted("grid_capped", "launch", "batch-70001", (r"test_large_batch\[fp32-batch-70001",),
            options=("--nan-large-batches",), slow=True),
    # -- the wrapper's contract --------------------------------------------------------------------------------
    Planted("accepts_any_rank", "contract", "outside_domain and rank", (r"test_outside_domain_refused_or_counted\[rank",)),
    Planted("copies_padded", "contract", "test_padded_rows_read_in_place", (r"test_padded_rows_read_in_place",)),
    Planted("clones_padded", "contract", "test_padded_rows_read_in_place", (r"test_padded_rows_read_in_place",)),
    Planted("empty_float", "contract", "test_empty_batch or test_zero_vocab",
            (r"test_empty_batch", r"test_zero_vocab")),
    Planted("zero_vocab_block", "contract", "test_zero_vocab or test_empty_batch", (r"test_zero_vocab",),
            build_error_is_the_bug=True),
)

BY_NAME: dict[str, Planted] = {p.name: p for p in PLANTED}

# not a port bug: the kernel of the crash-survival self-test, which faults on every launch
CRASHER = Planted("wild_address", "crash", "fp32-special-2x1024-direct or (outside_domain and rank)",
                  (r"test_case\[fp32-special-2x1024-direct\]",), isolate=True)

# not plantable on the CPU: an output on the wrong device (every tensor of an interpreter run is a CPU tensor)
NOT_PLANTED: dict[str, str] = {
    "output on the wrong device": "on --device cpu input and output are both CPU tensors; the harness checks "
    "the output's device on accelerators (compare_counts), where a wrapper returning .cpu() fails every case",
}
