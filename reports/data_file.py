"""The files the reports read (waivers, known flakes, results): read and decoded in one place, each way it can fail
a clear error."""
from __future__ import annotations

from pathlib import Path
from typing import Any

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]


def decoded_text(path: Path, where: str, error: type[Exception]) -> str:
    """The file as UTF-8 text; `error("WHERE: why")` when it cannot be read or is not UTF-8."""
    try:
        return Path(path).read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{where}: not UTF-8 text: {exc}") from exc
    except OSError as exc:
        raise error(f"{where}: cannot read: {exc.strerror or exc}") from exc


def read_toml(path: Path, where: str, error: type[Exception]) -> dict[str, Any]:
    """The file's top-level tables; `error("WHERE: why")` when it cannot be read, is not UTF-8 or is not TOML."""
    text = decoded_text(path, where, error)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{where}: not valid TOML: {exc}") from exc
