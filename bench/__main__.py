"""`python -m bench`: parse arguments first, so the CPU backend can switch Triton to its interpreter."""
from __future__ import annotations

import sys

from bench.cli import main

if __name__ == "__main__":
    sys.exit(main())
