"""Stands in for the interpreter that starts an xdist worker of the self-test (tests.support.forkworkers).

Run as `python -S worker_launch.py SOCKET ARGS...` with ARGS what the interpreter would have been given: it hands
its stdin, stdout and stderr to the worker server, which forks the worker from a process with torch imported, then
waits and leaves with the worker's exit status (a signal as the same signal). It forwards TERM, INT and HUP; if it
is killed outright, the server sees its socket close and kills the worker. When the server declines (another
interpreter, directory, start-up variables or interpreter options: tests.support.forkworkers) it becomes the real
interpreter. Standard library only and no site-packages, so that it starts in milliseconds.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import sys

STREAMS = (0, 1, 2)


def main(path: str, argv: list[str]) -> None:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        server.connect(path)
        job = json.dumps({"argv": argv, "env": dict(os.environ), "cwd": os.getcwd(),
                          "executable": sys.executable}).encode()
        socket.send_fds(server, [job], list(STREAMS))
        reply = json.loads(server.recv(4096) or b'{"declined": "the server closed"}')
    except OSError as exc:
        reply = {"declined": str(exc)}
    if "declined" in reply:
        server.close()
        os.execv(sys.executable, [sys.executable, *argv])
    pid = int(reply["pid"])
    null = os.open(os.devnull, os.O_RDWR)
    for fd in STREAMS:  # the worker alone holds the streams: its end is the end xdist sees
        os.dup2(null, fd)
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, lambda received, _frame: os.kill(pid, received))
    done = server.recv(4096)
    status = int(json.loads(done)["status"]) if done else -signal.SIGKILL
    if status < 0:
        signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    sys.exit(status)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
