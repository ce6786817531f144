"""`python -m harness`: the same as the `nan-harness` command (harness.cli)."""
from harness.cli import main

raise SystemExit(main())
