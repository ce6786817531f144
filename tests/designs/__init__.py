"""Kernels in the designs users bring, written in our own words as fixtures, and what the suite says of each.

`upstream_vllm`: upstream vLLM's design (int1 flags, 32-bit row offset, no input checks; its libdevice isnan
replaced by a bit-pattern one returning int1, as under the interpreter). `vllm_ascend`: vllm-ascend's design
(int32 flags, 32-bit row offset, `assert` on the rank). `independent`: a correct kernel written apart from ours,
with its own exceptions, wording, block size and tile shape. `test_design_verdicts.py` runs the whole precision
suite on each and checks the verdicts and the diagnosis.
`vendor/` (a folder, as a kernel team's `--kernel-path`): vllm-ascend's module with its import lines as shipped
(CANN's libdevice, vLLM's triton_utils) and two planted copies; `test_vendor_module.py` judges them through
`setups.vendor_interpreter`.
"""
