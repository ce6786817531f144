"""The Pythons node images are built with, made in a folder from the running interpreter (nothing downloaded,
nothing big copied):

- `base_python`: a system-site node (a CI runner, a `pip install --system` image): not a virtual environment,
  torch, triton and pytest in its own site-packages (its binary, its standard library linked in, and a
  site-packages whose one `.pth` adds this environment's packages);
- `venv_node`: a plain venv holding torch, triton, pytest and tox in its site-packages (each package linked in),
  as uv- and venv-built images and workstations lay Python out; `with_torch=False` leaves torch and triton out
  (an image whose torch lives elsewhere, CI's own python3).

tox's `system_site_packages = true` over a venv node sees the *base* interpreter's packages, never the venv's:
only the node envs' site bridge (toxfile.py) reaches them.
"""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import sysconfig
from pathlib import Path

from tests.support.subrun import clean_env

# the base's own site folders and its "do not pip install here" marker stay out: the node's site-packages is ours
NOT_LINKED = ("site-packages", "dist-packages", "EXTERNALLY-MANAGED")


def packages() -> list[str]:
    """This environment's package folders (purelib and platlib; one folder in a venv)."""
    return list(dict.fromkeys(sysconfig.get_path(kind) for kind in ("purelib", "platlib")))


def _link_or_copy(source: Path, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def base_python(folder: Path) -> Path:
    """A non-venv Python in folder whose site-packages holds this environment's packages and tox; returns its
    binary."""
    binary = Path(getattr(sys, "_base_executable", sys.executable)).resolve()
    stdlib = Path(sysconfig.get_path("stdlib"))
    where = Path(os.path.relpath(stdlib, sys.base_prefix))  # lib/python3.11 (lib64/... on some systems)
    lib = folder / (Path("lib", stdlib.name) if where.parts[0] == ".." else where)
    lib.mkdir(parents=True)
    for entry in stdlib.iterdir():  # prefix found from the binary's place: lib/pythonX.Y/os.py marks it
        if entry.name not in NOT_LINKED:
            (lib / entry.name).symlink_to(entry)
    shared = Path(str(sysconfig.get_config_var("LIBDIR")), str(sysconfig.get_config_var("INSTSONAME")))
    if ".so" in shared.name and shared.is_file():  # a libpython the binary may find through a relative runpath
        (lib.parent / shared.name).symlink_to(shared)
    (folder / "bin").mkdir()
    python = folder / "bin" / binary.name
    _link_or_copy(binary, python)
    for alias in ("python", "python3"):
        if alias != binary.name:
            (folder / "bin" / alias).symlink_to(binary.name)
    site = subprocess.run([str(python), "-I", "-c", "import site; print(site.getsitepackages()[0])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site).mkdir(parents=True, exist_ok=True)
    Path(site, "node-packages.pth").write_text(
        "".join(f"import site; site.addsitedir({path!r})\n" for path in [*packages(), str(_tox_site())]))
    return python


TORCH_PACKAGES = ("torch", "functorch", "torchgen", "triton")  # what `with_torch=False` leaves out


def _tox_site() -> Path:
    """The site folder that holds tox (and its own requirements): the base interpreter's, where CI installs tox."""
    base = getattr(sys, "_base_executable", sys.executable)
    where = subprocess.run([base, "-c", "import os, tox; print(os.path.dirname(os.path.dirname(tox.__file__)))"],
                           capture_output=True, text=True, check=True).stdout.strip()
    return Path(where)


def venv_node(folder: Path, *, with_torch: bool = True) -> Path:
    """A venv (over this environment's base interpreter) whose site-packages links in this environment's packages
    and tox's, with a `bin/tox` script as pip writes one; returns its python."""
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(folder)], check=True)
    python = folder / "bin" / "python"
    site = Path(subprocess.run([str(python), "-I", "-c", "import site; print(site.getsitepackages()[0])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    for source in [*map(Path, packages()), _tox_site()]:
        for entry in source.iterdir():
            name = entry.name.split("-")[0].split(".")[0].lower()
            if not (site / entry.name).exists() and (with_torch or name not in TORCH_PACKAGES):
                (site / entry.name).symlink_to(entry)
    tox = folder / "bin" / "tox"
    tox.write_text(f"#!{python}\nimport sys\nfrom tox.run import run\nsys.exit(run())\n")
    tox.chmod(tox.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return python


def activated(env: dict[str, str], venv: Path) -> dict[str, str]:
    """A shell in which `venv` is activated, as its bin/activate leaves it: VIRTUAL_ENV set, its bin first."""
    return {**env, "VIRTUAL_ENV": str(venv), "PATH": os.pathsep.join([str(venv / "bin"), env.get("PATH", "")])}


def shell_env(python: Path) -> dict[str, str]:
    """A node's (or CI runner's) shell: its Python first on PATH, none of this process's venv, tox, pytest or
    PYTHONPATH variables, and pip without an index (everything but this project is installed already)."""
    env = {k: v for k, v in clean_env().items() if not k.startswith("TOX_")
           and k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    ours = os.path.dirname(sys.executable)
    path = [str(python.parent), *(p for p in env.get("PATH", "").split(os.pathsep) if p and p != ours)]
    return {**env, "PATH": os.pathsep.join(path), "PIP_NO_INDEX": "1", "PIP_ROOT_USER_ACTION": "ignore"}


def checkout_copy(root: Path, dest: Path) -> Path:
    """The checkout as a clone of it holds it: the working tree less what .gitignore leaves out (and .git)."""
    ignored = [line.strip().strip("/") for line in (root / ".gitignore").read_text(encoding="utf-8").splitlines()
               if line.strip() and not line.startswith("#")]
    shutil.copytree(root, dest, ignore=shutil.ignore_patterns(".git", *ignored), symlinks=True)
    return dest
