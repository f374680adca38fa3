#!/usr/bin/env python3
"""A USB stick for a workshop room without network (workshop/README.md, section "No network"), on any system:

    python tools/usb.py STICK                 # Linux, macOS: also `make usb USB=STICK`
    .venv\\Scripts\\python tools\\usb.py E:\\       # Windows, after .venv\\Scripts\\pip install -e ".[site]"
    python tools/usb.py STICK --torch-index ""  # PyPI's torch instead of PyTorch's CPU index (Linux: CUDA, 3 GB)

Into STICK it puts (the clone and the reading edition only when not there yet):
- clonelab/, a fresh clone of the release tag (from this clone, which must have the tag: clone it with --branch);
- reading-edition/, the student copies as a book that a browser opens from the disk (needs the site extra);
- wheelhouse-<system>-<machine>-<python>/, every wheel the series needs for this machine's kind of laptop, torch
  and torchvision pinned to this Python's releases, then an offline install from it alone into a scratch venv,
  which says "wheelhouse: an offline install from it works".
Run it again on a machine of each other kind of laptop (operating system, CPU, Python).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbcommon

CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def kind() -> str:
    """This machine's kind of laptop, as a wheelhouse is named: "windows-amd64-3.13", "darwin-arm64-3.12-macos14".

    A Mac's name ends with its macOS release: pip takes the wheels built for it, which older releases refuse."""
    name = f"{platform.system().lower()}-{platform.machine().lower()}-{sys.version_info[0]}.{sys.version_info[1]}"
    return name + (f"-macos{platform.mac_ver()[0].split('.')[0]}" if platform.system() == "Darwin" else "")


def pins() -> list[str]:
    """torch and torchvision at the releases this Python has, without a local part ("2.14.1", not "+cu130")."""
    return [f"{name}=={importlib.metadata.version(name).split('+')[0]}" for name in ("torch", "torchvision")]


def _run(*command: str | Path, **kwargs) -> None:
    print("usb:", " ".join(map(str, command)), flush=True)
    subprocess.run([str(part) for part in command], check=True, **kwargs)


def wheelhouse(folder: Path, torch_index: str) -> None:
    index = ["--extra-index-url", torch_index] if torch_index else []
    _run(sys.executable, "-m", "pip", "wheel", "-q", "--wheel-dir", folder, *index, *pins(), f"{nbcommon.ROOT}[lab]")
    with tempfile.TemporaryDirectory() as scratch:             # the check: an install from the wheelhouse alone
        _run(sys.executable, "-m", "venv", scratch)
        python = Path(scratch) / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
        quiet = dict(os.environ, PIP_CONFIG_FILE=os.devnull)   # no index or find-links from a pip.conf
        _run(python, "-m", "pip", "install", "-q", "--no-index", "--find-links", folder, "clonelab[lab]",
             "torchvision", env=quiet)
        _run(python, "-c", "import clonelab, torch, torchvision, jupyterlab; print('wheelhouse: an offline install "
             "from it works: clonelab', clonelab.__version__, 'torch', torch.__version__)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("stick", help="the USB stick's folder")
    parser.add_argument("--torch-index", default=CPU_INDEX, help="where torch comes from ('' for PyPI's)")
    args = parser.parse_args(argv)
    if not args.stick or not Path(args.stick).is_dir():        # "" is no folder (Path("") would be this one)
        parser.error(f"stick: {args.stick!r} is not a folder")
    args.stick = Path(args.stick)
    tag = nbcommon.release_ref()
    known = subprocess.run(["git", "-C", str(nbcommon.ROOT), "rev-parse", "-q", "--verify", f"refs/tags/{tag}"],
                           capture_output=True)
    if known.returncode != 0:
        parser.error(f"this clone lacks the tag {tag}: clone it with `git clone --branch {tag} {nbcommon.repo_url()}`")
    try:
        pins()
    except importlib.metadata.PackageNotFoundError as missing:
        parser.error(f"the wheelhouse pins this Python's torch and torchvision, and {missing.name} is not installed: "
                     'pip install -e ".[lab]" torchvision, as workshop/SETUP.md does')
    try:
        import sphinx  # noqa: F401  (the reading edition's builder)
    except ImportError:
        parser.error('the reading edition needs the site extra: pip install -e ".[site]" (make usb installs it)')
    clone = args.stick / "clonelab"
    if not clone.exists():
        _run("git", "-c", "advice.detachedHead=false", "clone", "-q", "--branch", tag, nbcommon.ROOT, clone)
        _run("git", "-C", clone, "remote", "set-url", "origin", nbcommon.repo_url())   # not this laptop's folder
    edition = args.stick / "reading-edition"
    if not edition.exists():
        _run(sys.executable, nbcommon.ROOT / "tools" / "book.py", "--student", edition)
        shutil.rmtree(args.stick / "jupyter_execute", ignore_errors=True)    # MyST-NB's, written beside it
    houses = args.stick / f"wheelhouse-{kind()}"
    wheelhouse(houses, args.torch_index)
    print(f"usb: {args.stick} holds", ", ".join(sorted(p.name for p in args.stick.iterdir())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
