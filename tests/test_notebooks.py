"""Execute every notebook top to bottom in a fresh kernel, as a reader's "Restart and run all".

Nothing may reach stderr but tqdm's progress bar. `.ci/run` runs this file on the lowest
tested torch too (`make test-lower`)."""

from __future__ import annotations

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from conftest import NOTEBOOKS, notebook_paths, stray_stderr


@pytest.mark.parametrize("path", notebook_paths(), ids=lambda p: p.name)
def test_notebook_runs(path):
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=300, kernel_name="python3", record_timing=False,
                            resources={"metadata": {"path": str(NOTEBOOKS)}})
    try:
        client.execute()
    except CellExecutionError as err:
        code_cells = [c for c in nb.cells if c.cell_type == "code"]
        failed = next((i for i, c in enumerate(code_cells)
                       if any(o.get("output_type") == "error" for o in c.get("outputs", []))), None)
        pytest.fail(f"{path.name}: code cell {failed} (0-based, counting code cells only) failed:\n{err}",
                    pytrace=False)
    stray = stray_stderr(nb)
    assert not stray, f"{path.name} printed to stderr (a reader sees it in red): {stray}"
