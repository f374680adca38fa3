"""The workshop kit: the answer key, the exit ticket, the instructor notes and the QR code stay in step with
the notebooks (tools/workshop.py makes them), and every answer they write down is right."""

from __future__ import annotations

import re

import nbformat
import pytest

import workshop
from clonelab import check
from clonelab.exercises import exercise_ids
from conftest import ROOT, notebook_paths

SECTIONS = ["## Talking points", "## Where students get stuck", "## When the room is behind",
            "## Pair-programming prompt", "## Check your understanding"]


def test_the_answer_key_is_current():
    assert workshop.ANSWERS.read_text() == workshop.answer_key_markdown(), \
        "workshop/answers.md is out of date: run `make stamp` (after `make notebooks` if outputs changed)"


def test_the_key_answers_every_exercise_and_quiz_question():
    found = [s.exercise_id for s in workshop.solutions()]
    assert len(found) == len(set(found)), "an exercise has two solution cells"
    assert set(found) == {i for i in exercise_ids() if not i.startswith("demo.")}


@pytest.mark.parametrize("solution", [s for s in workshop.solutions() if s.kind == "value"],
                         ids=lambda s: s.exercise_id)
def test_every_answer_written_in_the_key_passes_its_check(solution, capsys):
    """The key writes the value out (from the cell's literal or what it printed); the check must accept it."""
    assert check(solution.exercise_id, solution.value), capsys.readouterr().out
    assert f"**Answer:** `{solution.shown}`" in workshop.ANSWERS.read_text()


def test_a_solution_that_hides_its_answer_is_refused():
    code = "answer = compute()\nassert check('07.1', answer)"
    with pytest.raises(SystemExit, match="does not show it"):
        workshop._answer_of(code, "answer", output="✓ 07.1: correct.", where="07.1")
    assert workshop._answer_of(code, "answer", output="answer = 200\n", where="07.1") == ("value", 200)
    assert workshop._answer_of("def f(t):\n    return t\nanswer = f", "answer", "", "x") == ("function", None)


def test_the_exit_ticket_is_current_and_its_answers_are_what_pytorch_does():
    assert workshop.EXIT.read_text() == workshop.exit_ticket_markdown()
    assert workshop.EXIT_HALF.read_text() == workshop.exit_ticket_markdown(half_day=True)
    assert workshop.EXIT_HALF.read_text().count("\n## ") == workshop.HALF_DAY_QUESTIONS
    assert len(workshop.EXIT_TICKET) == 5
    assert any("10" in q.notebooks for q in workshop.EXIT_TICKET), "notebook 10's objective is assessed too"
    for q in workshop.EXIT_TICKET:
        assert q.truth() == q.expected, q.title
        assert q.answer in workshop.ANSWERS.read_text()
        assert q.answer not in workshop.EXIT.read_text(), f"the ticket shows the answer to {q.title!r}"


def test_the_key_stays_out_of_the_student_copies():
    key_code = [s.code for s in workshop.solutions()]
    for path in (ROOT / "workshop" / "student").glob("*.ipynb"):
        text = path.read_text()
        assert "answers.md" not in text, f"{path.name} links to the answer key"
        assert not any(code in text for code in key_code), f"{path.name} holds a solution"


@pytest.mark.parametrize("path", notebook_paths(), ids=lambda p: p.stem)
def test_each_notebook_has_a_page_of_instructor_notes(path):
    page = workshop.NOTES / f"{path.stem}.md"
    assert page.exists(), f"workshop/notes/{page.name} is missing"
    text = page.read_text()
    nb = nbformat.read(path, as_version=4)
    found = workshop.solutions([path])
    block = workshop.notes_summary(path, nb, found)
    assert block in text, f"{page.name}: the summary block is out of date: run `make stamp`"
    positions = [text.find(s) for s in SECTIONS]
    assert -1 not in positions and positions == sorted(positions), f"{page.name}: sections missing or out of order"
    # every section a page names in italics is a heading of the series (or a Deeper note's title)
    headings = set()
    for other in notebook_paths():
        for cell in nbformat.read(other, as_version=4).cells:
            if cell.cell_type == "markdown":
                headings |= {line.lstrip("#").strip() for line in cell.source.splitlines() if line.startswith("#")}
                headings |= set(re.findall(r"<summary>(.*?)</summary>", cell.source))
    written = text.split(workshop.SUMMARY_END, 1)[1]
    named = re.findall(r"(?<![*\w])\*([^*\n]+)\*(?![*\w])", written)
    unknown = [n for n in named if n not in headings and n != "Deeper"]
    assert unknown == [], f"{page.name} names sections that do not exist: {unknown}"
    # a figure of a run that the hand-written part quotes (a percentage with a decimal, "10 of 450", "up to 1.58")
    # is one the executed notebook shows: a re-run with other numbers must update the page
    shown = " ".join(o.get("text", "") + "".join(map(str, o.get("data", {}).values()))
                     for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs)
    quoted = re.findall(r"\b\d+\.\d+%|\b\d+ of \d+(?= test)|(?<=up to )\d+\.\d+", written)
    stale = [figure for figure in quoted if figure not in shown]
    assert stale == [], f"{page.name} quotes figures that {path.name}'s outputs no longer show: {stale}"


def test_the_qr_code_encodes_the_student_copies_address():
    pytest.importorskip("segno")
    assert workshop.QR.read_text() == workshop.qr_svg()
    assert workshop.student_url().endswith("/workshop/student") and workshop.student_url() in workshop.QR.read_text()


def test_the_guide_sends_facilitators_to_every_part_of_the_kit():
    guide = (ROOT / "workshop" / "README.md").read_text()
    for target in ["SETUP.md", "answers.md", "exit_ticket.md", "notes/", "student_links.svg", "make wheelhouse",
                   "CLONELAB_SOURCE"]:
        assert target in guide, f"workshop/README.md does not mention {target}"


def test_the_core_path_minutes_quoted_in_the_guide_are_the_notes_own():
    """The full day's note on slot lengths quotes core paths ("03: 56 min, 04: 51, ..."): each is the notebook's."""
    import reading_time

    guide = (ROOT / "workshop" / "README.md").read_text()
    quoted = re.search(r"core path in \[`notes/`\]\(notes/\) \(([^)]*) by the formula", guide)
    assert quoted, "the guide no longer quotes the core paths of the full day's longest notebooks"
    pairs = re.findall(r"(\d\d): (\d+)", quoted.group(1))
    assert len(pairs) >= 4
    totals = {p.name[:2]: reading_time.core_timeline(nbformat.read(p, as_version=4))[1] for p in notebook_paths()}
    assert {n: int(m) for n, m in pairs} == {n: totals[n] for n, _ in pairs}, "run the formula again: make stamp"
