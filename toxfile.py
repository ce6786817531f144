"""tox's inline plugin: the node envs (`node_site = true` in tox.ini) see the packages of the Python that runs tox.

A node's torch, triton and torch_npu live in whatever Python its image built: a venv (uv's, `python -m venv`), a
conda env, the system Python, a `--user` site. tox builds each env with virtualenv, which resolves a venv's
interpreter to its base, so `system_site_packages = true` alone hands a node env the *base's* packages, never the
venv's: `tox -e cuda` on such a node stopped with "No module named 'torch'". Here each node env gets a `.pth` file
that adds the site folders of the Python running tox, after the env's own packages (which win) and before the
base's; it is rewritten before every install and every run, so the env follows the Python that calls it. A site
folder is added only where the env's Python is the same minor version (compiled packages of another version
would fail to load).
"""
from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

from tox.config.sets import EnvConfigSet
from tox.plugin import impl
from tox.session.state import State
from tox.tox_env.api import ToxEnv

KEY = "node_site"
PTH = "nan_harness_node_site.pth"


def site_folders() -> list[str]:
    """The package folders of the Python running tox, in its own search order (user site and system ones too)."""
    return [p for p in dict.fromkeys(sys.path) if Path(p).name in ("site-packages", "dist-packages")
            and Path(p).is_dir()]


def pth_text(folders: list[str]) -> str:
    """One `import` line (what a .pth runs; map, as a comprehension would not see the line's names): the folders as
    site dirs, their own .pth files processed, only on this Python's minor version."""
    version = tuple(sys.version_info[:2])
    return f"import sys, site; sys.version_info[:2] == {version!r} and list(map(site.addsitedir, {folders!r}))\n"


def bridge(tox_env: ToxEnv) -> None:
    """Write the env's .pth (a no-op for envs without `node_site` or without a site-packages folder)."""
    if not tox_env.conf[KEY] or not hasattr(tox_env, "env_site_package_dir"):
        return
    site = Path(tox_env.env_site_package_dir())
    if not site.is_dir():
        return
    folders, pth = site_folders(), site / PTH
    text = pth_text(folders)
    if not pth.is_file() or pth.read_text(encoding="utf-8") != text:  # said once, when it is made or changes
        pth.write_text(text, encoding="utf-8")
        logging.warning("node packages from %s (the Python running tox): %s", sys.executable,
                        ", ".join(folders) or "no site folder")


@impl
def tox_add_env_config(env_conf: EnvConfigSet, state: State) -> None:  # noqa: ARG001 - tox's signature
    env_conf.add_config(keys=[KEY], of_type=bool, default=False,
                        desc="add the site folders of the Python running tox to this env (a node's own packages)")


@impl
def tox_on_install(tox_env: ToxEnv, arguments: Any, section: str, of_type: str) -> None:  # noqa: ARG001
    bridge(tox_env)  # before deps: pip then sees what the node already holds and installs only the rest


@impl
def tox_before_run_commands(tox_env: ToxEnv) -> None:
    bridge(tox_env)  # again before the commands: a reused env follows the Python that calls it now
