"""The notebook tools: idempotent stamping (stamp.py), student copies in sync (student.py), links that resolve
(links.py), the reading-time formula (reading_time.py) and the timings table (run_notebooks.py)."""

from __future__ import annotations

import shutil
import subprocess
import sys

import nbformat

import links
import nbcommon
import reading_time
import run_notebooks
import stamp
import student
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


def _run(root, tool, *args):
    return subprocess.run([sys.executable, str(root / "tools" / tool), *args],
                          cwd=root, capture_output=True, text=True, check=True).stdout


def test_committed_notebooks_are_stamped_and_stamping_is_idempotent(tmp_path):
    root = _copy_repo(tmp_path)
    before = _snapshot(root)
    assert "0 file(s) changed" in _run(root, "stamp.py"), "committed notebooks are not stamped: run `make stamp`"
    assert _snapshot(root) == before


def test_student_copies_are_in_sync(tmp_path):
    root = _copy_repo(tmp_path)
    before = _snapshot(root)
    out = _run(root, "student.py")
    assert "0 file(s) changed" in out, "workshop/student/ is out of date: run `make student`"
    assert _snapshot(root) == before


def test_student_copy_has_no_outputs_and_no_solutions():
    nb = nbformat.read(nbcommon.notebook_paths()[0], as_version=4)
    solution = nbformat.v4.new_code_cell("answer = 42\nassert check('x', answer)", metadata={"tags": ["solution"]})
    nb.cells.append(solution)
    copy_ = student.student_copy(nb, nbcommon.notebook_paths()[0].name)
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in copy_.cells if c.cell_type == "code")
    assert not any("solution" in c.metadata.get("tags", []) for c in copy_.cells)
    assert len(copy_.cells) == len(nb.cells) - 1


def test_student_refuses_to_overwrite_a_hand_written_file(tmp_path):
    root = _copy_repo(tmp_path)
    student = root / "workshop" / "student"
    student.mkdir(parents=True, exist_ok=True)
    first = nbcommon.notebook_paths()[0].name
    (student / first).write_text(nbformat.writes(nbformat.v4.new_notebook()))
    result = subprocess.run([sys.executable, str(root / "tools" / "student.py")],
                            cwd=root, capture_output=True, text=True)
    assert result.returncode != 0 and "refusing to overwrite" in result.stderr


def test_every_relative_link_resolves():
    assert links.broken_links() == []


def test_link_checker_finds_a_broken_link():
    assert links.relative_targets("see [x](missing.ipynb) and ![p](../images/p.png) and [w](https://x.org)") == [
        "missing.ipynb", "../images/p.png"]


def test_repository_url_lives_in_pyproject_only():
    url = nbcommon.repo_url()
    assert url.startswith("https://github.com/")
    for path in ROOT.glob("tools/*.py"):
        assert url not in path.read_text(), f"{path.name} repeats the repository URL"


def test_timings_counts_and_formula_on_a_notebook_object():
    """`run_notebooks.py timings`: what it counts in a notebook, and the formula it turns that into (no kernel)."""
    v4 = nbformat.v4
    nb = v4.new_notebook(cells=[
        v4.new_markdown_cell("# 99 · A title\n\nTwo sentences [with a link](elsewhere.ipynb) here."),
        v4.new_markdown_cell(f"{nbcommon.HEADER_MARK}\nbadge words are not read"),
        v4.new_code_cell(f"{nbcommon.SETUP_MARK}\nimport clonelab"),
        v4.new_markdown_cell("| a | b |\n|---|---|\n| `x = 1` | - |\n<!-- a comment -->"),
        v4.new_markdown_cell("**Predict:** it\n<small>⏱ About 9 min to here on the core path (an estimate).</small>"),
        v4.new_code_cell("x = 1"),
        v4.new_code_cell("   "),
        v4.new_code_cell("assert x == 1", metadata={"tags": ["checks"]}),   # folded: run, not read
        v4.new_code_cell("answer = ...\ncheck('09.1', answer)"),
        v4.new_code_cell("answer = 1\nassert check('09.1', answer)", metadata={"tags": ["solution"]}),
        v4.new_code_cell("answer = 2\nassert check(\"quiz.1\", answer)", metadata={"tags": ["solution"]}),
        v4.new_markdown_cell(f"{nbcommon.NAV_MARK}\n---\nnavigation words"),
    ])
    counts = reading_time.workshop_counts(nb)
    # "99", "A", "title", "Two", "sentences", "[with", "a", "link]", "here." + "a", "b", "`x", "1`" + "**Predict:**", "it"
    # (the stamped time marker is not read)
    assert counts == {"words": 15, "code_cells": 2, "predictions": 1, "exercises": 1, "quiz": 1}
    rt = reading_time   # the formula's constants are calibrated (tools/reading_time.py): the test reads them

    def rounded_up(minutes):
        return rt.ROUND_TO * -(-minutes // rt.ROUND_TO)

    once = (15 / rt.READ_WPM + 2 * rt.MIN_PER_CODE_CELL + rt.MIN_PER_PREDICTION + rt.MIN_PER_EXERCISE
            + rt.MIN_PER_QUIZ + rt.DISCUSSION_MIN)
    assert reading_time.suggested_minutes(counts, run_seconds=30.0) == rounded_up(once + rt.RUN_FACTOR * 30 / 60)
    zero = {"words": 0, "code_cells": 0, "predictions": 0, "exercises": 0, "quiz": 0}
    assert reading_time.suggested_minutes(zero, 0.0) == rounded_up(rt.DISCUSSION_MIN)
    assert reading_time.suggested_minutes({**zero, "predictions": 1}, 0.0) == \
        rounded_up(rt.DISCUSSION_MIN + rt.MIN_PER_PREDICTION)
    table = run_notebooks.timings_table([("99_a_title.ipynb", 30.0, counts), ("98_b.ipynb", 0.0, counts)])
    first, second = reading_time.suggested_minutes(counts, 30.0), reading_time.suggested_minutes(counts, 0.0)
    assert f"| 99_a_title | 30.0 | 15 | 2 | 1 | 1 | 1 | {first} |" in table
    total = first + second
    assert table.splitlines()[-1] == (f"| **total** | 30.0 | 30 | 4 | 2 | 2 | 2 | **{total}** "
                                      f"({total // 60} h {total % 60:02d} min) |")
    assert str(reading_time.READ_WPM) in reading_time.TIMINGS_FORMULA and "predictions" in reading_time.TIMINGS_FORMULA


def test_stamp_folds_a_checks_cell_in_jupyterlab_and_on_colab_and_leaves_its_output():
    cell = nbformat.v4.new_code_cell("assert 1 + 1 == 2", metadata={"tags": ["checks"]})
    stamp._fold(cell)
    assert cell.source == f"{nbcommon.CHECKS_MARK}\nassert 1 + 1 == 2"
    assert cell.metadata["jupyter"] == {"source_hidden": True} and cell.metadata["cellView"] == "form"
    stamp._fold(cell)
    assert cell.source.count(nbcommon.CHECKS_MARK) == 1                    # stamping again changes nothing
    assert reading_time.cell_minutes(cell) == 0                             # folded: not read
    listing = nbformat.v4.new_code_cell("#@title The post's code (folded)\nprint(1)", metadata={"tags": ["folded"]})
    stamp._fold(listing)
    assert listing.source.startswith("#@title The post's code") and nbcommon.CHECKS_MARK not in listing.source
    assert listing.metadata["jupyter"] == {"source_hidden": True} and nbcommon.is_folded(listing)
    assert not nbcommon.is_checks(listing)                                  # later cells may use what it defines


def test_time_markers_follow_the_core_path_and_restamping_changes_nothing():
    v4 = nbformat.v4
    rt = reading_time   # whatever the calibrated constants: 5 minutes of words, a prediction, an exercise
    words = "word " * (5 * rt.READ_WPM)
    deeper = v4.new_markdown_cell("<details><summary>Deeper: more</summary>\n\n" + words + "\n</details>")
    nb = v4.new_notebook(cells=[
        v4.new_markdown_cell("# 99 · A title"),
        v4.new_markdown_cell("## First\n\n" + words),            # 5 min
        deeper,                                                    # not on the core path
        v4.new_code_cell("# Deeper (optional): not counted\nx = 1"),
        v4.new_markdown_cell("## Second\n\n**Predict:** this."),    # one prediction, and 2 words
        v4.new_markdown_cell("## Exercises"),
        v4.new_code_cell("answer = 1\nassert check('09.1', answer)", metadata={"tags": ["solution"]}),
        v4.new_markdown_cell("## Summary"),
    ])
    # the words: the title 3 ("99", "A", "title"), First 1 + 5 minutes' worth, Second 3, Exercises 1, Summary 1
    at = [3, 4 + 5 * rt.READ_WPM, 7 + 5 * rt.READ_WPM, 8 + 5 * rt.READ_WPM, 9 + 5 * rt.READ_WPM]
    second = round(at[1] / rt.READ_WPM)
    exercises = round(at[2] / rt.READ_WPM + rt.MIN_PER_PREDICTION)
    summary = round(at[3] / rt.READ_WPM + rt.MIN_PER_PREDICTION + rt.MIN_PER_EXERCISE)
    marks, total = reading_time.core_timeline(nb)
    assert [(h, m) for _, h, m in marks] == [("First", round(at[0] / rt.READ_WPM)), ("Second", second),
                                             ("Exercises", exercises), ("Summary", summary)]
    assert total == round(at[4] / rt.READ_WPM + rt.MIN_PER_PREDICTION + rt.MIN_PER_EXERCISE)
    before, practice, after = reading_time.core_split(nb)         # before, for and after the exercises: as the markers add
    assert (before, before + practice, before + practice + after) == (exercises, summary, total)
    stamp.stamp_time_markers(nb)
    assert "⏱" not in nb.cells[1].source                  # under 3 minutes: no marker
    assert nb.cells[4].source.splitlines()[1] == stamp.time_marker(second)
    assert nb.cells[7].source.splitlines()[1] == stamp.time_marker(summary, "the exercises")
    assert "the exercises included" in nb.cells[7].source and "included" not in nb.cells[5].source
    again = nbformat.writes(nb)
    stamp.stamp_time_markers(nb)
    assert nbformat.writes(nb) == again


def test_sections_named_in_the_workshop_guide_exist():
    """workshop/README.md sends readers to '[notebook NN](../notebooks/...), section *Heading*': the heading must exist."""
    import re

    guide = ROOT / "workshop" / "README.md"
    reference = re.compile(r"\[notebook \d\d\]\(\.\./notebooks/([^)#]+)\), sections? ((?:\*[^*]+\*(?:,? and |, )?)+)")
    missing, found = [], 0
    for match in reference.finditer(guide.read_text()):
        nb = nbformat.read(ROOT / "notebooks" / match.group(1), as_version=4)
        headings = {line.lstrip("#").strip() for c in nb.cells if c.cell_type == "markdown"
                    for line in c.source.splitlines() if line.startswith("#")}
        for heading in re.findall(r"\*([^*]+)\*", match.group(2)):
            found += 1
            if heading not in headings:
                missing.append(f"{match.group(1)}: {heading}")
    assert found >= 10, "the guide should name the sections that take each misconception apart"
    assert missing == [], f"workshop/README.md names sections that do not exist: {missing}"


def test_student_copies_open_student_copies_on_colab():
    """A student who follows any Colab link in a student copy lands on a student copy, never on the solutions."""
    instructor = nbcommon.colab_url("")
    for path in nbcommon.notebook_paths(nbcommon.STUDENT):
        text = "".join(c.source for c in nbcommon.read(path).cells)
        assert instructor not in text, f"{path.name} links to an instructor copy on Colab"
        assert nbcommon.colab_url(path.name, "workshop/student") in text


def test_reading_edition_links_stay_in_the_site_or_go_to_the_repository():
    import book

    folder = ROOT / "notebooks"
    assert book._online("01_clone_or_assign.ipynb#leaves", folder) == "01_clone_or_assign.ipynb#leaves"
    assert book._online("../images/names_tensors_storage.png", folder) == "../images/names_tensors_storage.png"
    assert book._online("https://pytorch.org", folder) == "https://pytorch.org"
    assert book._online("../workshop/README.md#schedules", folder) == \
        f"{nbcommon.repo_url()}/blob/main/workshop/README.md#schedules"
    assert book._online("../workshop/student/", folder) == f"{nbcommon.repo_url()}/tree/main/workshop/student"
    index = book.index_page(["00_start_here.ipynb", "01_clone_or_assign.ipynb"])
    assert "```{toctree}" in index and "notebooks/00_start_here\nnotebooks/01_clone_or_assign\n```" in index


def test_the_student_edition_opens_only_student_copies_and_says_outputs_are_shown(tmp_path):
    """Every Colab link of the staged student edition opens a student copy; its index says the outputs show."""
    import book

    staged = book.stage(tmp_path / "book", solutions=False)
    for path in sorted((staged / "notebooks").glob("*.ipynb")):
        text = "".join(c.source for c in nbcommon.read(path).cells if c.cell_type == "markdown")
        assert "colab.research.google.com" in text and "/notebooks/" not in text.split("colab.research")[1][:200]
        assert nbcommon.colab_url("", "notebooks") not in text, f"{path.name} opens an instructor copy on Colab"
    assert book.STUDENT_NOTE in (staged / "index.md").read_text()
    assert book.STUDENT_NOTE not in book.index_page(["00_start_here.ipynb"])


# --- usb.py: the offline room's stick -----------------------------------------------------------------------


def test_usb_names_a_wheelhouse_for_its_kind_and_pins_this_torch():
    import re

    import torch
    import usb

    assert re.fullmatch(r"[a-z]+-[a-z0-9_]+-3\.\d+", usb.kind())
    assert usb.kind().endswith(f"-{sys.version_info[0]}.{sys.version_info[1]}")
    torch_pin, vision_pin = usb.pins()
    assert torch_pin == f"torch=={torch.__version__.split('+')[0]}" and vision_pin.startswith("torchvision==")
    assert "+" not in vision_pin


def test_usb_names_a_macs_wheelhouse_for_its_macos_release(monkeypatch):
    """pip takes a Mac's wheels for its own macOS release, which older releases refuse: the name says which."""
    import usb

    monkeypatch.setattr(usb.platform, "system", lambda: "Darwin")
    monkeypatch.setattr(usb.platform, "machine", lambda: "arm64")
    monkeypatch.setattr(usb.platform, "mac_ver", lambda: ("14.5", ("", "", ""), "arm64"))
    assert usb.kind() == f"darwin-arm64-{sys.version_info[0]}.{sys.version_info[1]}-macos14"


def test_usb_refuses_a_stick_that_is_not_a_folder_or_a_clone_without_the_tag(tmp_path, monkeypatch, capsys):
    import pytest
    import usb

    with pytest.raises(SystemExit):
        usb.main([str(tmp_path / "no-such-stick")])
    err = capsys.readouterr().err
    assert "stick:" in err and "is not a folder" in err
    with pytest.raises(SystemExit):                       # an empty name is not this folder
        usb.main([""])
    assert "is not a folder" in capsys.readouterr().err
    monkeypatch.setattr(usb.nbcommon, "release_ref", lambda: "v0.0.0-no-such-tag")
    with pytest.raises(SystemExit):
        usb.main([str(tmp_path)])
    err = capsys.readouterr().err
    assert "lacks the tag v0.0.0-no-such-tag" in err and "git clone --branch v0.0.0-no-such-tag" in err
    assert list(tmp_path.iterdir()) == [], "nothing is written before the checks pass"
    monkeypatch.undo()
    real = usb.importlib.metadata.version

    def without_torchvision(name):
        if name == "torchvision":
            raise usb.importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(usb.importlib.metadata, "version", without_torchvision)
    monkeypatch.setattr(usb.subprocess, "run", lambda *a, **k: usb.subprocess.CompletedProcess(a, 0))  # the tag is there
    with pytest.raises(SystemExit):
        usb.main([str(tmp_path)])
    err = capsys.readouterr().err
    assert "torchvision is not installed" in err and 'pip install -e ".[lab]" torchvision' in err
    assert list(tmp_path.iterdir()) == []
