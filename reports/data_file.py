"""The files the reports read (waivers, known flakes, results): read and decoded in one place, each way it can fail
a clear error; the [[table]] entries of a waiver or known-flaky file checked in one place too."""
from __future__ import annotations

from collections.abc import Iterator
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


ENTRY_KEYS = ("id", "reason", "link")


def entries(items: list[Any], where: str, error: type[Exception], label: str, example: str,
            node_id: str) -> Iterator[tuple[str, str, str]]:
    """Each entry's id, reason and link (stripped): every one a non-empty string, no other key, the id a pytest node
    id (file::test[params]); `error("WHERE: LABEL #n ...")` naming the first entry that is not."""
    for n, entry in enumerate(items, 1):
        fields = entry if isinstance(entry, dict) else {}
        missing = [k for k in ENTRY_KEYS if not isinstance(fields.get(k), str) or not fields[k].strip()]
        if missing:
            raise error(f"{where}: {label} #{n} lacks {', '.join(missing)}; expected:\n{example}")
        extra = set(fields) - set(ENTRY_KEYS)
        if extra:
            raise error(f"{where}: {label} #{n} has unknown keys {sorted(extra)}")
        if "::" not in fields["id"]:
            raise error(f"{where}: {label} #{n} id {fields['id'].strip()!r} is not {node_id} (file::test[params])")
        yield fields["id"].strip(), fields["reason"].strip(), fields["link"].strip()
