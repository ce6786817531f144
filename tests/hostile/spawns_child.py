"""A correct counter that starts a helper process on its first call and never stops it (its pid goes to the
file named by NAN_HOSTILE_PIDFILE). With NAN_HOSTILE=exit it then ends its own process with status 0."""
import os
import subprocess
import sys

from tests.designs.independent import _num_nans_kernel, get_num_nans as _count  # noqa: F401

_started = []


def get_num_nans(logits):
    if not _started:
        helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        _started.append(helper)
        with open(os.environ["NAN_HOSTILE_PIDFILE"], "a", encoding="utf-8") as f:
            f.write(f"{helper.pid}\n")
        if os.environ.get("NAN_HOSTILE") == "exit":
            os._exit(0)
    return _count(logits)
