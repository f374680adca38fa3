"""Execute every notebook, English and Korean, top to bottom in a fresh kernel, as a reader's "Restart and run all".

Nothing may reach stderr but tqdm's progress bar. `.ci/run` runs this file on the lowest
tested torch too (`make test-lower`)."""

from __future__ import annotations

import pytest

from conftest import ROOT, notebook_paths, run_notebook, stray_stderr


KOREAN = ROOT / "notebooks-ko"


@pytest.mark.notebooks
@pytest.mark.parametrize("path", notebook_paths() + sorted(KOREAN.glob("[0-9][0-9]_*.ipynb")),
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_notebook_runs(path):
    nb = run_notebook(path, cwd=path.parent)
    stray = stray_stderr(nb)
    assert not stray, f"{path.name} printed to stderr (a reader sees it in red): {stray}"
