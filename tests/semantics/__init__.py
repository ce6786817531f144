"""Kernels that count right but break what a caller on an accelerator relies on (stream order, graph capture),
and a correct torch-only fallback; test_semantics_designs.py runs tests/precision/test_execution_semantics.py on
each (accelerators only: the interpreter has no streams)."""
