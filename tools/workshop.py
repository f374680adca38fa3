#!/usr/bin/env python3
"""The workshop kit's generated parts, made from the notebooks so that they cannot drift from them.

    python tools/workshop.py      # (also run by `make stamp`) writes, when changed:

- the summary block at the top of each page of workshop/notes/ (the pages' other sections are written by hand);
- the generated block of workshop/answers.md, the answer key: every exercise and quiz question, its solution code,
  and the answer written out, taken from the executed instructor notebooks (the exit tickets' answers below the
  block are written by hand, like the tickets, and tests/test_workshop.py checks each by running PyTorch);
- workshop/student_links.svg, a QR code of the student copies' address at the release tag (only when segno is
  installed), and workshop/first_slide.html, the room's first slide: that code and the student links;
- workshop/shared_document.md, the room's shared notes document, ready to paste: the links and both schedules,
  taken from the guide's run sheets;
- workshop/print/, the pages to print, laid out for paper: each exit ticket with room to write, and the
  facilitator's sheet for each day (its run sheet and the minute card) and the helpers' sheet (what to check
  first, the USB stick) (only when markdown-it-py is installed);
- the repository's address in README.md and the kit's pages (workshop/*.md): the one in pyproject.toml, so that a
  fork's `make stamp` points every link there.

Run `python tools/stamp.py` and `python tools/run_notebooks.py execute` first: the key reads the notebooks' committed outputs.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import nbcommon
import reading_time

WORKSHOP = nbcommon.ROOT / "workshop"
NOTES = WORKSHOP / "notes"
ANSWERS = WORKSHOP / "answers.md"
EXIT = WORKSHOP / "exit_ticket.md"                    # the tickets are written by hand
EXIT_HALF = WORKSHOP / "exit_ticket_half_day.md"
QR = WORKSHOP / "student_links.svg"
SLIDE = WORKSHOP / "first_slide.html"
SHARED = WORKSHOP / "shared_document.md"
GUIDE = WORKSHOP / "README.md"
PRINT = WORKSHOP / "print"
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


def qr_svg(scalable: bool = False) -> str | None:
    """The QR code of student_url() as SVG: of a fixed size, or ``scalable`` (a viewBox, no size) for the slide."""
    try:
        import segno
    except ImportError:
        return None
    import io

    buffer = io.BytesIO()
    segno.make(student_url(), error="m").save(buffer, kind="svg", scale=8, border=4, xmldecl=False,
                                               omitsize=scalable, title=f"QR code: {student_url()}")
    return buffer.getvalue().decode() + "\n"


# --- the room's links, slide and shared document ---------------------------------------------------------------


def setup_url() -> str:
    return f"{nbcommon.repo_url()}/blob/{nbcommon.release_ref()}/workshop/SETUP.md"


def student_links() -> list[tuple[str, str]]:
    """(what, address) of the three links a student needs, each at the release tag."""
    return [("the student copies, each with its Open in Colab badge", student_url()),
            ("notebook 00 on Colab", nbcommon.colab_url("00_start_here.ipynb", "workshop/student")),
            ("setting up at home", setup_url())]


# an address into the repository (followed by /, .git or @ref); a bare one, such as where to ask its maintainers,
# is left alone
REPO_IN_TEXT = re.compile(r"((?<=github\.com/)|(?<=colab\.research\.google\.com/github/))[\w.-]+/clonelab(?=/|\.git|@)")


def point_at_repository(text: str) -> str:
    """Every address of the repository in ``text`` (GitHub, Colab, pip's git+https) made the one in pyproject.toml:
    in a fork, `make stamp` turns the kit's and the README's links to the fork."""
    path = urlparse(nbcommon.repo_url()).path.strip("/")
    return REPO_IN_TEXT.sub(path, text)


def run_sheet(ticket: Path) -> list[list[str]]:
    """The cells of each row of the guide's run sheet that ends with ``ticket``."""
    table = next(t for t in re.split(r"\n\n", GUIDE.read_text()) if t.startswith("| time |") and ticket.name in t)
    return [re.split(r"\s*\|\s*", row.strip().strip("|").strip()) for row in table.splitlines()[2:]]


def _schedule(ticket: Path, titles: dict[str, str]) -> list[str]:
    lines = ["| time | what |" if ticket == EXIT else "| from the start | what |", "|---|---|"]
    for row in run_sheet(ticket):
        time, what = row[0], row[2]
        notebook = re.search(r"\]\(\.\./notebooks/((\d\d)_[^)]+)\)", what)
        if notebook:
            copy = nbcommon.colab_url(notebook.group(1), "workshop/student")
            lines.append(f"| {time} | [{titles[notebook.group(2)]}]({copy}) |")
        elif "exit ticket" in what:
            lines.append(f"| {time} | exit ticket, on paper |")
        elif what != "slack":
            lines.append(f"| {time} | {what} |")
    return lines


def shared_document() -> str:
    titles = {p.name[:2]: nbcommon.title_of(nbcommon.read(p)) for p in nbcommon.notebook_paths()}
    links = [f"- {what}: {url}" for what, url in student_links()]
    return "\n".join([
        "<!-- Made by tools/workshop.py from the guide's run sheets: paste it into a new HackMD, or a Google document",
        "     with Paste from Markdown; fill in the first two lines, delete the day you do not teach, share its link. -->",
        "# Clone or alias? (date, room)",
        "",
        "Wi-Fi: (name) / (password)",
        "",
        "## Your links",
        "",
        *links,
        "",
        "On Colab: **File → Save a copy in Drive** before you type, in every notebook.",
        "Stuck: red sticky note on your lid. Done: green.",
        "",
        "## Half day", "", *_schedule(EXIT_HALF, titles), "",
        "## Full day", "", *_schedule(EXIT, titles), "",
        "## Questions",
        "",
        "Write your question here, with the notebook and the cell; a helper answers below it.",
        "",
        "- ",
        "",
        "## Helpers' log",
        "",
        "| time | notebook | where students got stuck | how many |",
        "|---|---|---|---|",
        "| | | | |",
        "",
    ])


STYLE = """<style>
body { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; max-width: 48em; margin: 2em auto; line-height: 1.4; }
code, pre { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 0.92em; }
pre { background: #f4f4f4; padding: 0.5em 0.8em; white-space: pre-wrap; }
table { border-collapse: collapse; } th, td { border: 1px solid #999; padding: 0.2em 0.5em; text-align: left; }
.answer { height: 10em; background: repeating-linear-gradient(transparent 0 1.9em, #ccc 1.9em 2em); }
@page { size: A4; margin: 15mm; }
@media print { body { margin: 0; max-width: none; font-size: 11pt; } h2 { break-after: avoid; }
  pre, table, .answer { break-inside: avoid; } }
</style>"""


def _html(title: str, body: str, extra_style: str = "") -> str:
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{title}</title>\n'
            f"{STYLE}{extra_style}\n</head>\n<body>\n{body}</body>\n</html>\n")


def first_slide(svg: str) -> str:
    links = "\n".join(f'<li>{what}:<br><a href="{url}">{url}</a></li>' for what, url in student_links())
    svg = re.sub(r"<svg ", '<svg class="qr" ', svg, count=1)
    style = ("<style>body { max-width: none; margin: 0; padding: 4vh 4vw; font-size: 2vw; } h1 { margin: 0 0 0.5em; }\n"
             ".slide { display: grid; grid-template-columns: 1fr 38vh; gap: 3vw; align-items: start; }\n"
             ".qr { width: 38vh; height: 38vh; } a { word-break: break-all; font-size: 0.75em; }</style>")
    body = (f'<h1>Clone or alias?</h1>\n<div class="slide"><div>\n<p>Does <code>identity = x</code> need '
            f"<code>.clone()</code>?</p>\n<ul>\n{links}\n</ul>\n</div>\n{svg}</div>\n"
            "<p>The code opens the first link. The shared notes document and the Wi-Fi: on the board.<br>\n"
            "Stuck: a red sticky note on your lid. Done: a green one.</p>\n")
    return _html("Clone or alias? First slide", body, style)


def _markdown_to_html(text: str) -> str:
    from markdown_it import MarkdownIt

    html = MarkdownIt("commonmark").enable("table").render(text)
    # a ticket's blank paragraphs are where students write: a ruled box each, not an empty line
    html = re.sub(r"(<p>(?:&nbsp;|\xa0)</p>\n)+", '<div class="answer"></div>\n', html)
    # the pages' relative links, followed from workshop/print/ (an anchor alone is one of the guide's headings)
    html = re.sub(r'<a href="#', '<a href="README.md#', html)
    return re.sub(r'<a href="(?!https?:)', '<a href="../', html)


def _section(markdown: str, heading: str) -> str:
    """The part of ``markdown`` under ``heading`` (a whole heading line), up to the next heading of its level."""
    level = heading.split(" ")[0]
    start = markdown.index(heading + "\n")
    end = re.search(rf"^#{{1,{len(level)}}} ", markdown[start + len(heading):], re.M)
    return markdown[start: start + len(heading) + end.start()] if end else markdown[start:]


def printouts() -> dict[Path, str] | None:
    """Each page to print, as HTML laid out for A4 paper, made from the kit's Markdown (None without markdown-it-py)."""
    try:
        import markdown_it  # noqa: F401
    except ImportError:
        return None
    guide = GUIDE.read_text()
    pages = {PRINT / ticket.with_suffix(".html").name: _html(ticket.stem.replace("_", " "),
                                                             _markdown_to_html(ticket.read_text()))
             for ticket in (EXIT, EXIT_HALF)}
    for name, day in (("half_day", "## Half day (3 hours): the residual question, answered"),
                      ("full_day", "## Full day (9:00–17:00)")):
        sheet = "\n\n".join([_section(guide, day), _section(guide, "### Minute card")])
        pages[PRINT / f"facilitator_{name}.html"] = _html(f"Facilitator's sheet, {name.replace('_', ' ')}",
                                                          _markdown_to_html(sheet))
    fixes = "\n\n".join([_section(guide, "## What to check first"), _section(guide, "## No network")])
    pages[PRINT / "helpers.html"] = _html("Helpers' sheet", _markdown_to_html(fixes))
    return pages


# --- writing ------------------------------------------------------------------------------------------------


def _write(path: Path, text: str) -> bool:
    if path.exists() and path.read_text() == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return True


def _write_block(path: Path, block: str, start: str, end: str) -> bool:
    """Put ``block`` between the markers of ``path``; the hand-written rest of the file stays as it is."""
    text = path.read_text()
    if start not in text or end not in text:
        raise SystemExit(f"{path.relative_to(nbcommon.ROOT)} lacks the markers {start!r} and {end!r}")
    return _write(path, nbcommon.replace_between_markers(text, block, start, end))


def generate() -> int:
    changed = 0
    for page in [nbcommon.ROOT / "README.md", *sorted(WORKSHOP.glob("*.md"))]:
        changed += _write(page, point_at_repository(page.read_text()))
    found = solutions()
    changed += _write_block(ANSWERS, answer_key_markdown(found), KEY_START, KEY_END)
    for path in nbcommon.notebook_paths():
        page = NOTES / f"{path.stem}.md"
        if page.exists():
            changed += _write_block(page, notes_summary(path, nbcommon.read(path), found), SUMMARY_START, SUMMARY_END)
    changed += _write(SHARED, shared_document())
    svg = qr_svg()
    if svg is not None:
        changed += _write(QR, svg) + _write(SLIDE, first_slide(qr_svg(scalable=True)))
    else:
        print("workshop: segno is not installed, so the QR code and the first slide were not redrawn", file=sys.stderr)
    pages = printouts()
    if pages is not None:
        changed += sum(_write(path, text) for path, text in pages.items())
    else:
        print("workshop: markdown-it-py is not installed, so workshop/print/ was not redrawn", file=sys.stderr)
    print(f"workshop: {changed} file(s) changed")
    return 0


if __name__ == "__main__":
    sys.exit(generate())
