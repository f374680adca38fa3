"""Shared paths for the tests."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import matplotlib
import nbformat
import pytest

matplotlib.use("Agg")  # tests draw figures without a screen

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
sys.path.insert(0, str(ROOT / "tools"))  # the tests import the tools as modules


def notebook_paths() -> list[Path]:
    import nbcommon

    return nbcommon.notebook_paths()


def run_notebook(path: Path, **options):
    """Read ``path`` and run it in a fresh kernel with tools/run_notebooks.py's runner, the one the whole suite uses
    (``options`` go to ``run_in_fresh_kernel``: ``kernel_name``, ``cwd``, ``env``, ``timeout``).
    Returns the executed notebook; a failing cell fails the test, naming the cell."""
    from nbclient.exceptions import CellExecutionError
    from run_notebooks import run_in_fresh_kernel

    nb = nbformat.read(path, as_version=4)
    try:
        run_in_fresh_kernel(nb, **options)
    except CellExecutionError as err:
        code = [c for c in nb.cells if c.cell_type == "code"]
        failed = next((i for i, c in enumerate(code) if any(o.get("output_type") == "error" for o in c.outputs)), None)
        pytest.fail(f"{path.name}: code cell {failed} (0-based, counting code cells only) failed:\n{err}",
                    pytrace=False)
    return nb


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


# Marks that need more than this environment (a browser, a second Python); their tests run only when
# the -m expression names them: `make test-browser`, `make test-colab`.
ON_REQUEST = ("browser", "colab")


def pytest_collection_modifyitems(config, items):
    asked = config.getoption("markexpr") or ""
    keep, drop = [], []
    for item in items:
        (drop if any(m in item.keywords and m not in asked for m in ON_REQUEST) else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
