#!/usr/bin/env python3
"""The workshop kit's generated parts, made from the notebooks so that they cannot drift from them.

    python tools/workshop.py      # (also run by `make stamp`) writes, when changed:

- the summary block at the top of each page of workshop/notes/ (the pages' other sections are written by hand);
- the generated block of workshop/answers.md, the answer key: every exercise and quiz question, its solution code,
  and the answer written out, taken from the executed instructor notebooks (the exit tickets' answers below the
  block are written by hand, like the tickets, and tests/test_workshop.py checks each by running PyTorch);
- workshop/student_links.svg, a QR code of the student copies' address at the release tag (only when segno is
  installed).

Run `python tools/stamp.py` and `python tools/run_notebooks.py execute` first: the key reads the notebooks' committed outputs.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbcommon
import reading_time

WORKSHOP = nbcommon.ROOT / "workshop"
NOTES = WORKSHOP / "notes"
ANSWERS = WORKSHOP / "answers.md"
EXIT = WORKSHOP / "exit_ticket.md"                    # the tickets are written by hand
EXIT_HALF = WORKSHOP / "exit_ticket_half_day.md"
QR = WORKSHOP / "student_links.svg"
SUMMARY_START = "<!-- clonelab:notes-summary (made by tools/workshop.py from the notebook: do not edit by hand) -->"
SUMMARY_END = "<!-- /clonelab:notes-summary -->"
KEY_START = "<!-- clonelab:answer-key (made by tools/workshop.py from the notebooks: do not edit by hand) -->"
KEY_END = "<!-- /clonelab:answer-key -->"
CHECK_CALL = re.compile(r"""\bcheck\(\s*["']([^"']+)["']\s*,\s*(\w+)\s*\)""")
TASK_START = re.compile(r"^(###? (Exercise|Question) |\*\*Exercise )", re.M)
ANSWER_LINE = re.compile(r"^answer = (.+)$", re.M)


# --- the exercises and quiz questions, read from the notebooks ------------------------------------------------


@dataclass
class Solution:
    exercise_id: str
    notebook: str     # file name in notebooks/
    task: str         # the task as the notebook states it (markdown)
    code: str         # the solution cell
    output: str       # what the solution cell printed
    kind: str         # "value" (a literal answer) or "function" (the answer is the code)
    value: Any = None

    @property
    def shown(self) -> str:
        return _show(self.value) if self.kind == "value" else "the function in the solution code"


def _show(value: Any) -> str:
    """repr, with sets sorted, so that the key is the same on every run (string hashes are salted)."""
    if isinstance(value, (set, frozenset)):
        return "{" + ", ".join(sorted(_show(v) for v in value)) + "}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_show(k)}: {_show(v)}" for k, v in value.items()) + "}"
    if isinstance(value, tuple):
        return "(" + ", ".join(_show(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, list):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    return repr(value)


def _literal(text: str) -> tuple[bool, Any]:
    try:
        return True, ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return False, None


def _answer_of(code: str, name: str, output: str, where: str) -> tuple[str, Any]:
    """("value", v) for a literal answer or one the cell printed as ``answer = <repr>``; ("function", None)."""
    tree = ast.parse(code)
    functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    if name in functions:
        return "function", None
    assigned = [n.value for n in tree.body if isinstance(n, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)]
    if assigned:
        last = assigned[-1]
        if isinstance(last, ast.Name) and last.id in functions:
            return "function", None
        ok, value = _literal(ast.unparse(last))
        if ok:
            return "value", value
    printed = ANSWER_LINE.findall(output)
    if printed:
        ok, value = _literal(printed[-1])
        if ok:
            return "value", value
    raise SystemExit(f"{where}: the solution computes its answer but does not show it; "
                     "add print(f\"answer = {answer!r}\") so that the answer key can write it out")


def _task_before(cells: list, index: int) -> str:
    for cell in reversed(cells[:index]):
        if cell.cell_type == "markdown":
            match = TASK_START.search(cell.source)
            if match:
                return nbcommon.TIME_MARK.sub("", cell.source[match.start():]).strip()
    return ""


def solutions(paths: list[Path] | None = None) -> list[Solution]:
    """Every solution cell of the notebooks, in order, with its answer."""
    found = []
    for path in paths if paths is not None else nbcommon.notebook_paths():
        nb = nbcommon.read(path)
        for i, cell in enumerate(nb.cells):
            if nbcommon.SOLUTION_TAG not in cell.metadata.get("tags", []):
                continue
            call = CHECK_CALL.search(cell.source)
            if call is None:
                raise SystemExit(f"{path.name}: a solution cell without check(\"<id>\", <answer>)")
            output = "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")
            kind, value = _answer_of(cell.source, call.group(2), output, f"{path.name}, {call.group(1)}")
            found.append(Solution(call.group(1), path.name, _task_before(nb.cells, i), cell.source.strip(),
                                  output.strip(), kind, value))
    return found


def _in_workshop(markdown: str) -> str:
    """Links between notebooks, written relative to notebooks/, made relative to workshop/."""
    return re.sub(r"\]\((\d\d_[a-z0-9_]+\.ipynb)", r"](../notebooks/\1", markdown)


def _demote(markdown: str) -> str:
    return re.sub(r"^#{2,3} (.+)$", r"**\1**", markdown, flags=re.M)


# --- the answer key -----------------------------------------------------------------------------------------


def answer_key_markdown(found: list[Solution] | None = None) -> str:
    found = solutions() if found is None else found
    titles = {p.name: nbcommon.title_of(nbcommon.read(p)) for p in nbcommon.notebook_paths()}
    lines = [KEY_START, "", "# Answer key", "",
             "For facilitators: every exercise and quiz question of the series with its answer written out, then "
             "the answers of the [exit tickets](#exit-tickets). It is not in the student copies; do not hand it "
             "out before the session ends.", "",
             "Made by `python tools/workshop.py` (run by `make stamp`) from the solution cells of the executed "
             "notebooks in [`notebooks/`](../notebooks/): their code, and what they printed. A test checks that "
             "this part is current and that every answer written here passes its `check`. Where the answer is a "
             "function, the solution code is the answer; any function that behaves the same passes.", ""]
    current = None
    for s in found:
        if s.notebook != current:
            current = s.notebook
            lines += [f"## [{titles[s.notebook]}](../notebooks/{s.notebook})", ""]
        first, _, rest = s.task.partition("\n")
        bold = re.match(r"^\*\*(Exercise [\d.]+?)\.?\*\*\s*(.*)$", first)
        if bold:  # "**Exercise 05.1.** The task ..." has no title of its own
            title, rest = bold.group(1), bold.group(2) + "\n" + rest
        else:
            title = re.sub(r"^#+ ", "", first).strip()
        lines += [f"### {title}", "", _in_workshop(_demote(rest.strip())), "",
                  f"**Answer:** `{s.shown}`" if s.kind == "value" else f"**Answer:** {s.shown}:", "",
                  "```python", s.code, "```", ""]
        extra = [line for line in s.output.splitlines()
                 if not line.startswith((f"✓ {s.exercise_id}: correct", "answer = "))]
        if extra:
            lines += ["It prints:", "", "```text", *extra, "```", ""]
    return "\n".join(lines + [KEY_END])


# --- the instructor notes' summary blocks ---------------------------------------------------------------------


def notes_summary(path: Path, nb, found: list[Solution]) -> str:
    marks, total = reading_time.core_timeline(nb)
    before, practice, after = reading_time.core_split(nb)
    ids = [s for s in found if s.notebook == path.name]
    predictions = sum(len(reading_time.PREDICTION.findall(c.source)) for c in nb.cells
                      if c.cell_type == "markdown" and not nbcommon.is_deeper(c))
    quiz = any(s.exercise_id.startswith("quiz.") for s in ids)
    lines = [SUMMARY_START, "",
             f"**Notebook:** [{nbcommon.title_of(nb)}](../../notebooks/{path.name}) (instructor copy, with the "
             f"solutions) · [student copy](../student/{path.name})", "",
             f"**Core path:** about {before if practice else before + after} min of reading and running"
             + (f", then about {practice} min for the {'quiz' if quiz else 'exercises'}" if practice else "")
             + (f", and {after} min after {'it' if quiz else 'them'}" if practice and after else "")
             + f": {total} min by the guide's formula, with {predictions} prediction "
             f"prompt{'s' if predictions != 1 else ''}. The *Deeper* notes are not counted.", ""]
    if objectives := nbcommon.objectives_of(nb):
        lines += ["**Objectives:** after this notebook, students can:", "", *objectives, ""]
    lines += ["| time to here | section |", "|--:|---|"]
    lines += [f"| {minutes} min | {heading} |" for _, heading, minutes in marks if heading != "Learning objectives"]
    lines += [f"| {total} min | end |", ""]
    if ids:
        lines += [("**Quiz:** " if quiz else "**Exercises:** ") + ", ".join(s.exercise_id for s in ids)
                  + " (answers: [answer key](../answers.md))", ""]
    return "\n".join(lines + [SUMMARY_END])


# --- the QR code ----------------------------------------------------------------------------------------------


def student_url() -> str:
    """The student copies on GitHub at the release tag: the ref that the badges open and the setup cell installs."""
    return f"{nbcommon.repo_url()}/tree/{nbcommon.release_ref()}/workshop/student"


def qr_svg() -> str | None:
    try:
        import segno
    except ImportError:
        return None
    import io

    buffer = io.BytesIO()
    segno.make(student_url(), error="m").save(buffer, kind="svg", scale=8, border=4, xmldecl=False,
                                               title=f"QR code: {student_url()}")
    return buffer.getvalue().decode() + "\n"


# --- writing ------------------------------------------------------------------------------------------------


def _write(path: Path, text: str) -> bool:
    if path.exists() and path.read_text() == text:
        return False
    path.write_text(text)
    return True


def _write_block(path: Path, block: str, start: str, end: str) -> bool:
    """Put ``block`` between the markers of ``path``; the hand-written rest of the file stays as it is."""
    text = path.read_text()
    if start not in text or end not in text:
        raise SystemExit(f"{path.relative_to(nbcommon.ROOT)} lacks the markers {start!r} and {end!r}")
    return _write(path, nbcommon.replace_between_markers(text, block, start, end))


def generate() -> int:
    found = solutions()
    changed = _write_block(ANSWERS, answer_key_markdown(found), KEY_START, KEY_END)
    for path in nbcommon.notebook_paths():
        page = NOTES / f"{path.stem}.md"
        if page.exists():
            changed += _write_block(page, notes_summary(path, nbcommon.read(path), found), SUMMARY_START, SUMMARY_END)
    svg = qr_svg()
    if svg is not None:
        changed += _write(QR, svg)
    else:
        print("workshop: segno is not installed, so the QR code was not redrawn", file=sys.stderr)
    print(f"workshop: {changed} file(s) changed")
    return 0


if __name__ == "__main__":
    sys.exit(generate())
