"""Planted bugs in the harness's own code, and the checks that must catch each (one runner for every such list).

One bug at a time is written into the source file (restored after), the named test file runs (-n 1), and each line
says caught (the tests failed) or NOT CAUGHT. Edits the tree in place for a few seconds per plant: run it when
nobody else is editing those files. Not collected by pytest (no test_ prefix).
"""
from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
Plant = tuple[str, str, str, str, str]  # (what the bug is, file, text replaced, replacement, test file that catches it)


def run_plants(plants: Sequence[Plant], only: Sequence[str] = ()) -> int:
    """Plant each bug (or those whose index is in `only`) and run its tests; the number NOT CAUGHT."""
    tmp = Path(tempfile.mkdtemp(prefix="plants-"))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a kill still puts the planted file back (finally)
    missed = 0
    for i, (name, path, old, new, tests) in enumerate(plants):
        if only and str(i) not in only:
            continue
        source = ROOT / path
        text = source.read_text()
        assert text.count(old) >= 1, (name, old)
        backup = tmp / f"{source.name}.bak"
        shutil.copyfile(source, backup)
        try:
            source.write_text(text.replace(old, new))
            done = subprocess.run([sys.executable, "-m", "pytest", "-c", "pyproject.toml", "-p", "no:cacheprovider",
                                   "--device", "cpu", "-n", "1", "-q", tests, f"--html={tmp}/p.html",
                                   f"--junitxml={tmp}/j.xml", f"--nan-json={tmp}/r.json"],
                                  cwd=ROOT, capture_output=True, text=True)
            failed = [line.split()[1] for line in done.stdout.splitlines() if line.startswith("FAILED")]
            caught = done.returncode == 1 and bool(failed)
            missed += not caught
            print(f"{'caught' if caught else 'NOT CAUGHT'}: {name}: {failed[:3]}", flush=True)
        finally:
            shutil.copyfile(backup, source)
    return missed
