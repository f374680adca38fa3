"""Without Graphviz's `dot` the series still runs: 00 says what is missing, 06 draws fallback figures.

The notebooks run with nbclient in a kernel whose PATH holds only the virtual environment's
executables (minus any `dot`), so `shutil.which("dot")` in the kernel finds nothing.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

import nbformat
import pytest

from conftest import notebook_paths, run_notebook

pytestmark = pytest.mark.notebooks  # runs notebooks 00 and 06 in a kernel without `dot`

GRAPH_CALL = re.compile(r"\b(draw_graph|side_by_side)\(")


def by_number(number: str) -> Path | None:
    return next((p for p in notebook_paths() if p.name.startswith(f"{number}_")), None)


@pytest.fixture(scope="module")
def no_dot_env(tmp_path_factory):
    """os.environ with PATH = a folder of links to this environment's executables, `dot` left out."""
    bin_dir = Path(sys.executable).parent
    path_dir = tmp_path_factory.mktemp("path-without-dot")
    for entry in bin_dir.iterdir():
        if entry.name not in ("dot", "dot.exe"):
            (path_dir / entry.name).symlink_to(entry)
    assert shutil.which("dot", path=str(path_dir)) is None
    env = dict(os.environ, PATH=str(path_dir))
    env.pop("MPLBACKEND", None)  # the kernel's own inline backend, as for a reader
    return env


def run_without_dot(path: Path, env: dict[str, str]):
    return run_notebook(path, env=env)  # the kernel gets this environment: PATH without `dot`


def stream_text(cell, name: str = "stdout") -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", [])
                   if o.output_type == "stream" and o.name == name)


def mimes(cell) -> set[str]:
    return {m for o in cell.get("outputs", []) for m in o.get("data", {})}


def test_start_here_reports_missing_dot_with_a_hint(no_dot_env):
    path = by_number("00")
    assert path is not None, "notebook 00 is missing"
    nb = run_without_dot(path, no_dot_env)
    printed = "\n".join(stream_text(c) for c in nb.cells if c.cell_type == "code")
    line = next((ln for ln in printed.splitlines() if re.match(r"\[FAIL\]\s+graphviz dot\b", ln)), None)
    assert line is not None, f"no '[FAIL] graphviz dot' line in 00's output:\n{printed}"
    assert "install" in line.lower() and "graphviz" in line.lower(), f"no install hint: {line!r}"


def test_graphs_notebook_falls_back_to_png_figures(no_dot_env):
    path = by_number("06")
    committed = [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    code = [c for c in run_without_dot(path, no_dot_env).cells if c.cell_type == "code"]
    assert len(code) == len(committed)
    # where the committed notebook (run with `dot`) shows a graph as SVG; if it was committed
    # without outputs, the cells that call the drawing functions and display a picture
    graph_cells = [i for i, c in enumerate(committed) if "image/svg+xml" in mimes(c)] or \
                  [i for i, c in enumerate(code) if GRAPH_CALL.search(c.source) and mimes(c) & {"image/png", "image/svg+xml"}]
    assert graph_cells, f"{path.name}: no graphs found"
    missing = [i for i in graph_cells if "image/png" not in mimes(code[i])]
    assert not missing, f"{path.name}: no fallback PNG figure in code cells {missing} (0-based, code cells only)"
    still_svg = [i for i in graph_cells if "image/svg+xml" in mimes(code[i])]
    assert not still_svg, f"{path.name}: code cells {still_svg} still show Graphviz SVG without `dot`"
    printed = "\n".join(stream_text(c) for c in code)
    assert "falling back to a matplotlib drawing" in printed
