"""`python -m bench`: verify, then time, every shape; write bench.json and bench.png; print the table."""
from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

from harness import backends, needs
from harness.needs import ENVIRONMENT_EXIT

DEVICES = ("auto", "cpu", "cuda", "npu")
EXIT_USAGE = 2  # argparse's own


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0].replace("`", ""))
    parser.add_argument("--device", choices=DEVICES, default="auto",
                        help="auto: npu, then cuda, then cpu (the interpreter: smoke run, numbers mean nothing)")
    parser.add_argument("--kernel", default="kernel", metavar="MODULE",
                        help="module exposing get_num_nans (same convention as the precision suite)")
    parser.add_argument("--kernel-path", action="append", default=[], type=kernel_folder, metavar="DIR",
                        help="folder to import --kernel from (put first on sys.path; as the suite's option); "
                             "repeatable")
    parser.add_argument("--quick", action="store_true", help="a few shapes, shorter timing (under a minute on a GPU)")
    parser.add_argument("--out", default="out/bench.json", help="bench.json path (default out/bench.json)")
    parser.add_argument("--plot", default=None, help="PNG path (default: bench.png beside --out; '' for none)")
    parser.add_argument("-k", dest="select", default="", help="only shapes whose key contains this text")
    return parser.parse_args(argv)


def kernel_folder(text: str) -> str:
    """--kernel-path: an existing folder, resolved against the working folder as the suite resolves it."""
    path = Path(text).resolve()
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: not a folder")
    return str(path)


def resolve_device(requested: str) -> str:
    """The backend harness.backends resolves for `requested`, prepared (the CPU switches Triton to its interpreter
    before it is imported; an explicit backend this machine lacks is refused), by name."""
    backend = backends.resolve(requested)
    backend.prepare()
    return backend.name


def main(argv: list[str] | None = None) -> int:
    """The backend, prepared (one this machine lacks is the machine's failure: ENVIRONMENT, exit 6, as in the suite),
    then --kernel imported with the --kernel-path folders first on sys.path (one that does not import: 2)."""
    args = parse(argv)
    needs.require("python -m bench", args.device)
    try:
        device = resolve_device(args.device)
    except RuntimeError as exc:
        print(f"python -m bench: ENVIRONMENT: {exc} (exit {ENVIRONMENT_EXIT}, nothing timed)", file=sys.stderr)
        return ENVIRONMENT_EXIT
    sys.path[:0] = args.kernel_path
    try:
        module = importlib.import_module(args.kernel)
    except ImportError as exc:
        print(f"python -m bench: --kernel {args.kernel}: does not import here: {exc}", file=sys.stderr)
        return EXIT_USAGE
    from bench import run  # imports the kernels: only once the backend chose how Triton runs

    return run.run(args, argv, device, module)
