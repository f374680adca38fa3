"""Shared paths for the tests."""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # tests draw figures without a screen

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
sys.path.insert(0, str(ROOT / "tools"))  # the tests import tools/nbtool.py as a module


def notebook_paths() -> list[Path]:
    import nbtool

    return nbtool.notebook_paths()
