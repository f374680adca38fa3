"""Shared paths for the tests."""

from __future__ import annotations

import re
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


# One line of a tqdm progress bar: "training:  40%|████      | 4/10 [...]".
_TQDM_LINE = re.compile(r"^.*\d+%\|.*\|.*$")


def stray_stderr(nb) -> list[tuple[int, str]]:
    """(cell index, text) of everything a reader would see in red: stderr that is not a tqdm bar."""
    found = []
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if out.output_type == "stream" and out.name == "stderr":
                lines = [line for line in re.split(r"[\r\n]+", out.text) if line.strip()]
                if not all(_TQDM_LINE.match(line) for line in lines):
                    found.append((i, out.text))
    return found
