"""Kernels that try to decide their own verdict: skip or waive their cases, end the process, patch torch so the
reference agrees with them, or return tensors that lie. Each wraps the independent design (tests/designs), so
what is judged is the hostile behaviour, not a counting bug. tests/harness/test_gate_integrity.py runs them."""
