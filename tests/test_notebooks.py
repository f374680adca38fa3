"""Execute every notebook top to bottom in a fresh kernel, as a reader's "Restart and run all".

Nothing may reach stderr but tqdm's progress bar. `.ci/run` runs this file on the lowest
tested torch too (`make test-lower`)."""

from __future__ import annotations

import pytest

from conftest import notebook_paths, run_notebook, stray_stderr


@pytest.mark.notebooks
@pytest.mark.parametrize("path", notebook_paths(), ids=lambda p: p.name)
def test_notebook_runs(path):
    nb = run_notebook(path)
    stray = stray_stderr(nb)
    assert not stray, f"{path.name} printed to stderr (a reader sees it in red): {stray}"
