"""The committed notebooks, as a reader meets them: structure, fresh outputs, no leaks."""

from __future__ import annotations

import json
import re

import nbformat
import pytest

import nbcommon
import stamp
from conftest import notebook_paths, stray_stderr

PATHS = notebook_paths()
MACHINE_PATH = re.compile(r"(/root/|/home/\w|/tmp/|/work/|/Users/|[A-Z]:\\\\Users\\\\|site-packages)")


def test_series_is_numbered_from_00_without_gaps():
    numbers = [int(p.name[:2]) for p in PATHS]
    assert numbers == list(range(len(numbers))), numbers
    assert len(numbers) >= 1


@pytest.fixture(params=PATHS, ids=lambda p: p.name)
def nb(request):
    return request.param, nbformat.read(request.param, as_version=4)


def test_opens_with_title_badge_setup_and_objectives(nb):
    path, book = nb
    cells = book.cells
    assert cells[0].cell_type == "markdown" and cells[0].source.startswith("# "), "first cell: an H1 title"
    assert cells[1].source.startswith(nbcommon.HEADER_MARK), "second cell: the stamped header"
    assert "colab.research.google.com/github/" in cells[1].source and path.name in cells[1].source
    assert cells[2].cell_type == "code" and cells[2].source == stamp.setup_source(), "third cell: the setup cell, as stamped"
    objectives = next((c for c in cells[3:6] if c.cell_type == "markdown" and "## Learning objectives" in c.source), None)
    assert objectives is not None, "a '## Learning objectives' cell right after the setup cell"
    bullets = [line for line in objectives.source.splitlines() if line.startswith("- ")]
    assert 2 <= len(bullets) <= 4, f"2-4 learning objectives, found {len(bullets)}"


def test_ends_with_summary_and_navigation(nb):
    path, book = nb
    assert book.cells[-1].source.startswith(nbcommon.NAV_MARK)
    assert any(c.cell_type == "markdown" and c.source.startswith("## Summary") for c in book.cells[-3:]), \
        "a '## Summary' cell just before the navigation"


def test_executed_top_to_bottom_in_one_kernel(nb):
    path, book = nb
    code = [c for c in book.cells if c.cell_type == "code" and c.source.strip()]
    counts = [c.execution_count for c in code]
    assert counts == list(range(1, len(code) + 1)), f"execution counts {counts}: run `make notebooks`"


def test_no_errors_leaks_or_eval(nb):
    path, book = nb
    for i, cell in enumerate(book.cells):
        if cell.cell_type != "code":
            continue
        assert not re.search(r"(?<![.\w])(eval|exec)\(", cell.source), f"cell {i} uses eval/exec"
        for out in cell.outputs:
            assert out.output_type != "error", f"cell {i} has an error output"
            text = json.dumps(out)
            assert not MACHINE_PATH.search(text), f"cell {i} output shows a machine path: {MACHINE_PATH.search(text).group(0)}"
    stray = stray_stderr(book)
    assert not stray, f"stderr that a reader sees in red (only tqdm's bar is allowed): {stray}"


def test_code_cells_have_outputs_where_they_print(nb):
    """A committed notebook shows its results: most code cells have output."""
    path, book = nb
    code = [c for c in book.cells if c.cell_type == "code"]
    with_output = [c for c in code if c.outputs]
    assert len(with_output) >= len(code) // 3, "outputs look stripped: run `make notebooks`"


def test_solution_cells_follow_an_exercise(nb):
    path, book = nb
    for i, cell in enumerate(book.cells):
        if nbcommon.SOLUTION_TAG in cell.metadata.get("tags", []):
            assert cell.cell_type == "code"
            assert "check(" in cell.source, f"solution cell {i} must assert its check(...)"
            earlier = "\n".join(c.source for c in book.cells[max(0, i - 3):i])
            assert "check(" in earlier, f"solution cell {i}: the exercise cell before it must call check(...)"
            assert cell.metadata.get("jupyter", {}).get("outputs_hidden") and cell.metadata["jupyter"]["source_hidden"], \
                f"solution cell {i}: its code and the answer it prints must be collapsed (run `make stamp`)"
            assert cell.source.startswith("#@title") and cell.metadata.get("cellView") == "form", \
                f"solution cell {i}: folded on Colab too, by a #@title line and cellView form (run `make stamp`)"


def test_kernelspec_is_set_so_jupyterlab_does_not_ask(nb):
    path, book = nb
    assert book.metadata.get("kernelspec") == stamp.KERNELSPEC
    assert "jupytext" not in book.metadata


def test_stray_stderr_allows_only_a_tqdm_bar():
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    def stderr(text):
        return new_code_cell("x", outputs=[new_output("stream", name="stderr", text=text)])

    book = new_notebook(cells=[
        stderr("training:  40%|████      | 4/10 [00:01<00:01,  3.5epoch/s]\rtraining: 100%|██████████| 10/10\n"),
        stderr("ERROR:2026 DeviceProperties.cpp:56] gpuGetDeviceCount failed with code 35\n"),
        stderr("training: 100%|██████████| 10/10\nUserWarning: something\n"),
    ])
    assert [i for i, _ in stray_stderr(book)] == [1, 2]


def test_figures_fit_a_jupyterlab_column(nb):
    """Every picture a notebook shows is at most 1000 px wide, so its labels stay readable."""
    import base64

    path, book = nb
    for i, cell in enumerate(book.cells):
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            png = out.get("data", {}).get("image/png")
            if png:
                width = int.from_bytes(base64.b64decode(png)[16:20], "big")
                assert width <= 1000, f"cell {i}: a {width} px wide picture"


def test_deeper_and_checks_cells_are_collapsed_and_the_core_never_needs_them(nb):
    """A reader may skip the optional cells and the folded checks: they are collapsed, and no later visible core
    cell uses a name they define. A checks cell asserts something."""
    import ast

    path, book = nb
    deeper_names: set[str] = set()
    for i, cell in enumerate(book.cells):
        if cell.cell_type != "code" or not cell.source.strip():
            continue
        try:
            tree = ast.parse("\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!"))))
        except SyntaxError:
            continue
        defined = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        defined |= {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
        defined |= {n.arg for n in ast.walk(tree) if isinstance(n, ast.arg)}          # parameters
        defined |= {(a.asname or a.name).split(".")[0] for n in ast.walk(tree)
                    if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
        if cell.source.startswith(nbcommon.DEEPER_MARK):
            assert cell.metadata.get("jupyter") == {"source_hidden": True, "outputs_hidden": True}, \
                f"cell {i}: a Deeper cell must be collapsed (run `make stamp`)"
            assert cell.metadata.get("cellView") == "form", f"cell {i}: a Deeper cell is folded on Colab too"
            deeper_names |= defined
            continue
        if nbcommon.is_folded(cell):     # a checks cell or a folded listing: code folded under its title, output not
            assert cell.source.startswith("#@title") and cell.metadata.get("cellView") == "form", \
                f"cell {i}: a folded cell is folded, in JupyterLab and on Colab, under a #@title (run `make stamp`)"
            assert cell.metadata.get("jupyter") == {"source_hidden": True}, f"cell {i}: its code folded, its output not"
        if nbcommon.is_checks(cell):
            assert cell.source.startswith(nbcommon.CHECKS_MARK), f"cell {i}: a checks cell has the checks title"
            assert any(isinstance(n, ast.Assert) for n in ast.walk(tree)), f"cell {i}: a checks cell asserts"
            deeper_names |= defined
            continue
        used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        needed = (used - defined) & deeper_names
        assert not needed, f"cell {i} uses {sorted(needed)}, defined only in an optional Deeper cell"
        deeper_names -= defined          # redefined on the core path: no longer owed to a Deeper cell


def test_code_cells_are_short_and_content_notebooks_have_a_picture():
    """At most 3 code cells in the series over 30 lines (the blog post's own code); a figure in 01-10."""
    long = []
    for path in PATHS:
        book = nbformat.read(path, as_version=4)
        code = [c for c in book.cells if c.cell_type == "code"]
        long += [f"{path.name} cell {book.cells.index(c)}" for c in code if len(c.source.splitlines()) > 30]
        if 1 <= int(path.name[:2]) <= 10:
            assert any("image/png" in o.get("data", {}) for c in code for o in c.outputs), f"{path.name}: no figure"
    assert len(long) <= 3, long


def test_notebooks_import_only_from_clonelab_itself():
    """One import surface: code cells use `from clonelab import ...` or `clonelab.<name>`, never a submodule."""
    submodule = re.compile(r"\bfrom clonelab\.\w+ import|\bimport clonelab\.\w+|\bclonelab\.(?!__version__)[a-z_]+\.\w")
    found = [(p.name, line) for p in notebook_paths() for c in nbformat.read(p, as_version=4).cells
             if c.cell_type == "code" for line in c.source.splitlines() if submodule.search(line)]
    assert found == [], found
