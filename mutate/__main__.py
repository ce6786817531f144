"""Entry point: python -m mutate."""
import sys

from mutate.cli import main

sys.exit(main())
