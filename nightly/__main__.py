"""`python -m nightly`: see nightly.cli."""
from __future__ import annotations

import sys

from nightly.cli import main

if __name__ == "__main__":
    sys.exit(main())
