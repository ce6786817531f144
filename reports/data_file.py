"""The user's data files (waivers, known flakes): TOML read in one place, each way it can fail a clear error."""
from __future__ import annotations

from pathlib import Path
from typing import Any

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]


def read_toml(path: Path, where: str, error: type[Exception]) -> dict[str, Any]:
    """The file's top-level tables; `error("WHERE: why")` when it cannot be read, is not UTF-8 or is not TOML."""
    try:
        return tomllib.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise error(f"{where}: not UTF-8 text: {exc}") from exc
    except OSError as exc:
        raise error(f"{where}: cannot read: {exc.strerror or exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{where}: not valid TOML: {exc}") from exc
