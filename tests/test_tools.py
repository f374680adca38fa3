"""tools/nbtool.py: idempotent stamping, student copies in sync, links that resolve."""

from __future__ import annotations

import shutil
import subprocess
import sys

import nbformat

import nbtool
from conftest import ROOT


def _copy_repo(tmp_path):
    for name in ["notebooks", "tools", "workshop"]:
        if (ROOT / name).exists():
            shutil.copytree(ROOT / name, tmp_path / name)
    for name in ["README.md", "pyproject.toml"]:
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "src" / "clonelab").mkdir(parents=True)
    shutil.copy(ROOT / "src" / "clonelab" / "__init__.py", tmp_path / "src" / "clonelab" / "__init__.py")
    return tmp_path


def _snapshot(root):
    return {p.relative_to(root): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _run(root, *args):
    return subprocess.run([sys.executable, str(root / "tools" / "nbtool.py"), *args],
                          cwd=root, capture_output=True, text=True, check=True).stdout


def test_committed_notebooks_are_stamped_and_stamping_is_idempotent(tmp_path):
    root = _copy_repo(tmp_path)
    before = _snapshot(root)
    assert "0 file(s) changed" in _run(root, "stamp"), "committed notebooks are not stamped: run `make stamp`"
    assert _snapshot(root) == before


def test_student_copies_are_in_sync(tmp_path):
    root = _copy_repo(tmp_path)
    before = _snapshot(root)
    out = _run(root, "student")
    assert "0 file(s) changed" in out, "workshop/student/ is out of date: run `make student`"
    assert _snapshot(root) == before


def test_student_copy_has_no_outputs_and_no_solutions():
    nb = nbformat.read(nbtool.notebook_paths()[0], as_version=4)
    solution = nbformat.v4.new_code_cell("answer = 42\nassert check('x', answer)", metadata={"tags": ["solution"]})
    nb.cells.append(solution)
    copy_ = nbtool.student_copy(nb, nbtool.notebook_paths()[0].name)
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in copy_.cells if c.cell_type == "code")
    assert not any("solution" in c.metadata.get("tags", []) for c in copy_.cells)
    assert len(copy_.cells) == len(nb.cells) - 1


def test_student_refuses_to_overwrite_a_hand_written_file(tmp_path):
    root = _copy_repo(tmp_path)
    student = root / "workshop" / "student"
    student.mkdir(parents=True, exist_ok=True)
    first = nbtool.notebook_paths()[0].name
    (student / first).write_text(nbformat.writes(nbformat.v4.new_notebook()))
    result = subprocess.run([sys.executable, str(root / "tools" / "nbtool.py"), "student"],
                            cwd=root, capture_output=True, text=True)
    assert result.returncode != 0 and "refusing to overwrite" in result.stderr


def test_every_relative_link_resolves():
    assert nbtool.broken_links() == []


def test_link_checker_finds_a_broken_link():
    assert nbtool.relative_targets("see [x](missing.ipynb) and ![p](../images/p.png) and [w](https://x.org)") == [
        "missing.ipynb", "../images/p.png"]


def test_repository_url_lives_in_pyproject_only():
    url = nbtool.repo_url()
    assert url.startswith("https://github.com/")
    for path in ROOT.glob("tools/*.py"):
        assert url not in path.read_text(), f"{path.name} repeats the repository URL"
