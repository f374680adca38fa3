#!/usr/bin/env python3
"""Maintenance for the notebook series. Every subcommand can be run again and again.

    python tools/nbtool.py stamp            # badge, setup cell, navigation, contents
    python tools/nbtool.py execute [NB...]  # run notebooks in place, each in a fresh kernel
    python tools/nbtool.py links            # check relative links and image paths
    python tools/nbtool.py student          # workshop/student/ copies: no outputs, no solutions
    python tools/nbtool.py timings [NB...]  # run time, exercises, words: suggested workshop minutes

The stamped cells are found by markers (like PythonDataScienceHandbook's
tools/add_navigation.py), so re-stamping replaces them instead of adding more.
The repository URL comes from one place: [project.urls] in pyproject.toml.
"""

from __future__ import annotations

import argparse
import copy
import re
import sys
import time
from pathlib import Path
from urllib.parse import unquote, urlparse

import nbformat

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
STUDENT = ROOT / "workshop" / "student"
SITE = ROOT / "site"

HEADER_MARK = "<!-- clonelab:header -->"
NAV_MARK = "<!-- clonelab:nav -->"
SETUP_MARK = "# clonelab:setup"
CONTENTS_START = "<!-- clonelab:contents -->"
CONTENTS_END = "<!-- /clonelab:contents -->"
SOLUTION_TAG = "solution"
# First line of a code cell that belongs to a "Deeper" note. "#@title" with metadata cellView "form" is how Colab
# folds a code cell (it ignores JupyterLab's source_hidden); stamp turns a plain "# Deeper (optional)" into it.
DEEPER_MARK = "#@title Deeper (optional)"
PLAIN_DEEPER_MARK = "# Deeper (optional)"
SOLUTION_TITLE = "#@title Solution (folded: try the exercise first)"
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
NB_NAME = re.compile(r"^\d\d_[a-z0-9_]+\.ipynb$")


def repo_url() -> str:
    """[project.urls] Repository in pyproject.toml (read with a regex: tomllib needs Python 3.11)."""
    text = (ROOT / "pyproject.toml").read_text()
    return re.search(r'^Repository = "([^"]+)"', text, re.M).group(1).rstrip("/")


def package_version() -> str:
    text = (ROOT / "src" / "clonelab" / "__init__.py").read_text()
    return re.search(r'^__version__ = "([^"]+)"', text, re.M).group(1)


def notebook_paths(folder: Path = NOTEBOOKS) -> list[Path]:
    return sorted(p for p in folder.glob("*.ipynb") if NB_NAME.match(p.name))


def read(path: Path):
    return nbformat.read(path, as_version=4)


def write(nb, path: Path) -> bool:
    """Write only when the content changed, so a second run touches nothing."""
    text = nbformat.writes(nb) + "\n"
    if path.exists() and path.read_text() == text:
        return False
    path.write_text(text)
    return True


def title_of(nb) -> str:
    first = nb.cells[0] if nb.cells else None
    if first is None or first.cell_type != "markdown" or not first.source.startswith("# "):
        raise SystemExit("every notebook must start with a markdown cell whose first line is '# Title'")
    return first.source.splitlines()[0][2:].strip()


def release_ref() -> str:
    """The one ref that the badges open and the setup cell installs: the release tag of the package version."""
    return f"v{package_version()}"


def colab_url(name: str, folder: str = "notebooks") -> str:
    path = urlparse(repo_url()).path.strip("/")
    return f"https://colab.research.google.com/github/{path}/blob/{release_ref()}/{folder}/{name}"


def git_source() -> str:
    """What the setup cell installs on Colab: the release tag that matches the package version, so that a
    class is not moved by commits to the default branch mid-session (tag each release `v<version>`)."""
    return f"git+{repo_url()}@{release_ref()}"


def setup_source() -> str:
    return f'''{SETUP_MARK} (stamped by tools/nbtool.py: edit the template there, not here)
import os, subprocess, sys
try:  # only on Google Colab: install the helper package (with torchviz) first
    import google.colab  # noqa: F401
    source = os.environ.get("CLONELAB_SOURCE", "{git_source()}")
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", source], capture_output=True, text=True)
    if pip.returncode:  # pip's notes and warnings are shown only when the install failed
        raise RuntimeError(f"pip could not install {{source}}:\\n{{pip.stdout}}{{pip.stderr}}")
except ImportError:
    pass  # elsewhere it is installed already (see the README)
try:
    import clonelab
except ModuleNotFoundError:
    raise ModuleNotFoundError("clonelab is not installed in this kernel: in the repository, run `make lab` "
                              "(or `pip install -e .`), then restart the kernel") from None
clonelab.show_versions(written_for="{package_version()}")'''


def header_source(index: int, total: int, name: str, folder: str = "notebooks") -> str:
    badge = f"[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]({colab_url(name, folder)})"
    return (f"{HEADER_MARK}\n{badge}\n\nNotebook {index:02d} of the series 00–{total - 1:02d} · "
            f"[Contents](00_start_here.ipynb)")


def nav_source(paths: list[Path], titles: list[str], i: int) -> str:
    parts = []
    if i > 0:
        parts.append(f"← Previous: [{titles[i - 1]}]({paths[i - 1].name})")
    parts.append("[Contents](00_start_here.ipynb)")
    if i < len(paths) - 1:
        parts.append(f"Next: [{titles[i + 1]}]({paths[i + 1].name}) →")
    return f"{NAV_MARK}\n---\n" + " · ".join(parts)


def contents_table(paths: list[Path], titles: list[str], link_prefix: str = "") -> str:
    rows = [CONTENTS_START, "", "| # | Notebook | Open in Colab |", "|---|---|---|"]
    for p, t in zip(paths, titles):
        rows.append(f"| {p.name[:2]} | [{t}]({link_prefix}{p.name}) | "
                    f"[![Colab](https://colab.research.google.com/assets/colab-badge.svg)]({colab_url(p.name)}) |")
    rows += ["", CONTENTS_END]
    return "\n".join(rows)


OBJECTIVES_START = "<!-- clonelab:objectives (stamped from each notebook's Learning objectives cell) -->"
OBJECTIVES_END = "<!-- /clonelab:objectives -->"


def objectives_of(nb) -> list[str]:
    """The bullets ("- ...") of the notebook's "## Learning objectives" cell."""
    cell = next((c for c in nb.cells if c.cell_type == "markdown" and "## Learning objectives" in c.source), None)
    return [line for line in (cell.source.splitlines() if cell else []) if line.startswith("- ")]


def objectives_block(paths: list[Path], nbs: list, titles: list[str]) -> str:
    """workshop/README.md's list: each notebook's "## Learning objectives" bullets, under a link to it."""
    parts = [OBJECTIVES_START, ""]
    for path, nb, title in zip(paths, nbs, titles):
        parts += [f"**[{title}](../notebooks/{path.name})**", "", *objectives_of(nb), ""]
    return "\n".join(parts + [OBJECTIVES_END])


def replace_between_markers(text: str, block: str, start: str = CONTENTS_START, end: str = CONTENTS_END) -> str:
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.S)
    if not pattern.search(text):
        return text
    return pattern.sub(lambda _: block, text)


def _is_marked(cell, mark: str) -> bool:
    return cell.source.startswith(mark)


def _put(nb, index: int, cell_id: str, kind: str, source: str) -> None:
    """Place a stamped cell at ``index``: keep the existing one (and its outputs) if unchanged."""
    existing = next((c for c in nb.cells if c.get("id") == cell_id), None)
    if existing is not None:
        nb.cells.remove(existing)
        if existing.source == source and existing.cell_type == kind:
            nb.cells.insert(index if index >= 0 else len(nb.cells), existing)
            return
    cell = (nbformat.v4.new_code_cell if kind == "code" else nbformat.v4.new_markdown_cell)(source)
    cell["id"] = cell_id
    if index < 0:
        nb.cells.append(cell)
    else:
        nb.cells.insert(index, cell)


def stamp() -> int:
    paths = notebook_paths()
    nbs = [read(p) for p in paths]
    titles = [title_of(nb) for nb in nbs]
    changed = 0
    for i, (path, nb) in enumerate(zip(paths, nbs)):
        # drop stray marked cells (moved or duplicated by hand) before placing ours
        for mark, cid in ((HEADER_MARK, "clonelab-header"), (SETUP_MARK, "clonelab-setup"), (NAV_MARK, "clonelab-nav")):
            nb.cells = [c for c in nb.cells if not _is_marked(c, mark) or c.get("id") == cid]
        # a kernelspec, so JupyterLab starts Python without asking; no editor leftovers
        nb.metadata["kernelspec"] = dict(KERNELSPEC)
        nb.metadata.pop("jupytext", None)
        _put(nb, 1, "clonelab-header", "markdown", header_source(i, len(paths), path.name))
        _put(nb, 2, "clonelab-setup", "code", setup_source())
        _put(nb, -1, "clonelab-nav", "markdown", nav_source(paths, titles, i))
        stamp_time_markers(nb)
        for cell in nb.cells:
            if SOLUTION_TAG in cell.metadata.get("tags", []):
                # JupyterLab shows a collapsed input and output until the reader clicks them, so the answer
                # (the code, or the value it prints) is not read by accident right below the exercise
                cell.metadata.setdefault("jupyter", {}).update(source_hidden=True, outputs_hidden=True)
                if not cell.source.startswith("#@title"):
                    cell.source = f"{SOLUTION_TITLE}\n{cell.source}"
                cell.metadata["cellView"] = "form"
            if cell.cell_type == "code" and cell.source.startswith(PLAIN_DEEPER_MARK):
                cell.source = DEEPER_MARK + cell.source[len(PLAIN_DEEPER_MARK):]
            if cell.cell_type == "code" and cell.source.startswith(DEEPER_MARK):
                # collapsed, input and output, like the <details> note it belongs to; folded on Colab too
                cell.metadata["jupyter"] = {"source_hidden": True, "outputs_hidden": True}
                cell.metadata["cellView"] = "form"
            if cell.cell_type == "markdown" and CONTENTS_START in cell.source:
                cell.source = replace_between_markers(cell.source, contents_table(paths, titles))
        changed += write(nb, path)
    readme = ROOT / "README.md"
    if readme.exists():
        text = readme.read_text()
        new = replace_between_markers(text, contents_table(paths, titles, "notebooks/"))
        if new != text:
            readme.write_text(new)
            changed += 1
    guide = ROOT / "workshop" / "README.md"
    if guide.exists():
        text = guide.read_text()
        new = replace_between_markers(text, objectives_block(paths, nbs, titles), OBJECTIVES_START, OBJECTIVES_END)
        if new != text:
            guide.write_text(new)
            changed += 1
    print(f"stamp: {changed} file(s) changed")
    return 0


def select(names: list[str]) -> list[Path]:
    """The notebooks named like 01, 01_clone_or_assign or 01_clone_or_assign.ipynb (all if none)."""
    paths = [p for p in notebook_paths() if not names or p.name in names or p.stem in names or p.name[:2] in names]
    if names and not paths:
        raise SystemExit(f"no notebook matches {names}")
    return paths


def run_in_fresh_kernel(nb, timeout: int = 300, *, kernel_name: str = "python3", cwd: Path = NOTEBOOKS,
                        env: dict[str, str] | None = None) -> float:
    """Run every cell of ``nb`` (in memory: nothing is written) in a new kernel; return the seconds taken.

    The one notebook runner of the project: ``execute``, ``timings`` and the tests all call it. ``cwd`` is the
    kernel's working directory; ``env``, if given, is the kernel's whole environment. A failing cell raises
    nbclient's ``CellExecutionError``, and the error is kept in ``nb``'s outputs.
    """
    from nbclient import NotebookClient

    start = time.perf_counter()
    # "immediate": once the last cell has replied, the kernel is stopped, not asked to exit: about 0.1 s instead
    # of 0.8 to 1 s for a kernel that holds torch and matplotlib
    NotebookClient(nb, timeout=timeout, kernel_name=kernel_name, record_timing=False, coalesce_streams=True,
                   shutdown_kernel="immediate",
                   resources={"metadata": {"path": str(cwd)}}).execute(**({"env": env} if env else {}))
    return time.perf_counter() - start


def execute(names: list[str], timeout: int = 300) -> int:
    total = 0.0
    for path in select(names):
        nb = read(path)
        seconds = run_in_fresh_kernel(nb, timeout)
        total += seconds
        nb.metadata.pop("widgets", None)
        write(nb, path)
        print(f"{path.name}: {seconds:.1f} s")
    print(f"total: {total:.1f} s")
    return 0


# Workshop minutes for one notebook. workshop/README.md states this formula and pastes the table.
READ_WPM = 120            # markdown words a minute: technical prose, read with the predictions it asks for
MIN_PER_CODE_CELL = 0.25  # read a code cell, run it, look at its output
RUN_FACTOR = 2            # each second of computing counts twice: people wait, then read what came out
MIN_PER_EXERCISE = 6      # an exercise: try, check, read the hint, try again
MIN_PER_QUIZ = 3          # a quiz question: recall and check; no new code to write
MIN_PER_PREDICTION = 1    # a **Predict** prompt: think, or a show of hands, before the cell runs
DISCUSSION_MIN = 5        # per notebook: questions, and the summary together
ROUND_TO = 5              # a schedule is made of 5-minute blocks
TIMINGS_FORMULA = (f"suggested minutes = markdown words / {READ_WPM} + {MIN_PER_CODE_CELL} × code cells "
                   f"+ {RUN_FACTOR} × run time (s) / 60 + {MIN_PER_PREDICTION} × predictions + {MIN_PER_EXERCISE} × exercises "
                   f"+ {MIN_PER_QUIZ} × quiz questions + {DISCUSSION_MIN} (discussion), rounded up to a multiple of "
                   f"{ROUND_TO}")
QUIZ_CHECK = re.compile(r"""\bcheck\(\s*["']quiz\.""")
PREDICTION = re.compile(r"\*\*Predict\b")
# "Time to here" under each heading of a notebook's core path, as in Neuromatch's tutorials
TIME_MARK = re.compile(r"^<small>⏱ [^\n]*</small>\n?", re.M)


def _words(markdown: str) -> int:
    """Words a reader reads: HTML comments, link targets and stamped time markers left out."""
    prose = re.sub(r"\]\([^)]*\)", "]", re.sub(r"<!--.*?-->", " ", TIME_MARK.sub("", markdown), flags=re.S))
    return sum(1 for w in prose.split() if re.search(r"\w", w))


def _is_stamped(cell) -> bool:
    return cell.source.startswith((HEADER_MARK, NAV_MARK, SETUP_MARK))


def is_deeper(cell) -> bool:
    """A cell of an optional *Deeper* note: a folded <details> markdown cell, or a code cell marked for it."""
    if cell.cell_type == "markdown":
        return cell.source.lstrip().startswith("<details")
    return cell.source.startswith((DEEPER_MARK, PLAIN_DEEPER_MARK))


def cell_minutes(cell) -> float:
    """The formula's minutes for one cell (no run time: that is measured per notebook)."""
    if SOLUTION_TAG in cell.metadata.get("tags", []):
        return MIN_PER_QUIZ if QUIZ_CHECK.search(cell.source) else MIN_PER_EXERCISE
    if cell.cell_type == "markdown":
        return _words(cell.source) / READ_WPM + MIN_PER_PREDICTION * len(PREDICTION.findall(cell.source))
    return MIN_PER_CODE_CELL if cell.source.strip() else 0.0


def _core_path(nb):
    """(cell index, the "## " heading it is under, cell) for every cell on the core path, in order.

    The core path is every cell but the stamped ones and the *Deeper* notes; an exercise counts as
    its solution cell does in the timings formula (a student copy has the exercise, not the solution).
    """
    heading = None
    for i, cell in enumerate(nb.cells):
        if _is_stamped(cell) or is_deeper(cell):
            continue
        if cell.cell_type == "markdown" and cell.source.startswith("## "):
            heading = cell.source.splitlines()[0][3:].strip()
        yield i, heading, cell


def core_timeline(nb) -> tuple[list[tuple[int, str, int]], int]:
    """(cell index, "## " heading, estimated minutes before it) along the core path, and the core path's minutes."""
    marks, minutes = [], 0.0
    for i, heading, cell in _core_path(nb):
        if cell.cell_type == "markdown" and cell.source.startswith("## "):
            marks.append((i, heading, round(minutes)))
        minutes += cell_minutes(cell)
    return marks, round(minutes)


def time_marker(minutes: int, practice: str = "") -> str:
    """The "time to here" line; ``practice`` names the exercises or quiz when they lie before the heading."""
    included = f", {practice} included" if practice else ""
    return f"<small>⏱ About {minutes} min to here on the core path{included} (an estimate).</small>"


PRACTICE_HEADINGS = ("Exercises", "Quiz")


def core_split(nb) -> tuple[int, int, int]:
    """The core path's estimated minutes in three parts: before the exercises (or quiz), for them, and after them
    (the Summary). The first and the first two add up as the "to here" markers at those headings do."""
    parts, at = [0.0, 0.0, 0.0], 0
    for _, heading, cell in _core_path(nb):
        at = 1 if heading in PRACTICE_HEADINGS else 2 if at else 0
        parts[at] += cell_minutes(cell)
    ends = [round(sum(parts[:k])) for k in (1, 2, 3)]   # rounded where the markers round: the parts add up to them
    return ends[0], ends[1] - ends[0], ends[2] - ends[1]


def core_marker(nb) -> str:
    before, practice, after = core_split(nb)
    what = "the quiz" if any(c.cell_type == "markdown" and c.source.startswith("## Quiz") for c in nb.cells) \
        else "the exercises"
    rest = f", then about {practice} min for {what}" + (f", and {after} min after {'it' if what == 'the quiz' else 'them'}"
                                                        if after else "") if practice else ""
    return f"<small>⏱ Estimated: about {before + (0 if practice else after)} min of reading and running{rest}.</small>"


def stamp_time_markers(nb) -> None:
    """Put a "time to here" line under each core-path heading from the third minute on."""
    for cell in nb.cells:
        if cell.cell_type == "markdown" and TIME_MARK.search(cell.source):
            cell.source = TIME_MARK.sub("", cell.source)
    core = next((c for c in nb.cells if c.cell_type == "markdown" and "Core path" in c.source), None)
    if core is not None:  # the estimate, at the end of the cell that states the core path
        core.source = core.source.rstrip("\n") + "\n\n" + core_marker(nb)
    marks, _ = core_timeline(nb)
    practice = ""   # after the Exercises (or Quiz) section, the minutes include them: the marker says so
    for index, heading, minutes in marks:
        if minutes >= 3:  # not under Learning objectives, or the first section: nothing to say yet
            cell = nb.cells[index]
            first, _, rest = cell.source.partition("\n")
            marker = time_marker(minutes, practice)
            cell.source = f"{first}\n{marker}\n{rest}" if rest else f"{first}\n{marker}"
        if heading in PRACTICE_HEADINGS:
            practice = f"the {heading.lower()}"


def workshop_counts(nb) -> dict[str, int]:
    """What takes workshop time in ``nb``: markdown words, code cells, predictions, exercises and quiz questions.

    The stamped cells (badge, setup, navigation) are left out, and so are HTML comments, link targets and
    time markers. Exercises and quiz questions are the cells tagged ``solution`` (a quiz question's
    solution checks a ``quiz.`` id); code cells are the other non-empty ones, as a student copy has them;
    predictions are the **Predict** prompts in markdown.
    """
    cells = [c for c in nb.cells if not _is_stamped(c)]
    solutions = [c for c in cells if SOLUTION_TAG in c.metadata.get("tags", [])]
    markdown = [c.source for c in cells if c.cell_type == "markdown"]
    quiz = sum(1 for c in solutions if QUIZ_CHECK.search(c.source))
    code = sum(1 for c in cells if c.cell_type == "code" and c.source.strip() and c not in solutions)
    return {"words": sum(_words(m) for m in markdown), "code_cells": code,
            "predictions": sum(len(PREDICTION.findall(m)) for m in markdown),
            "exercises": len(solutions) - quiz, "quiz": quiz}


def suggested_minutes(counts: dict[str, int], run_seconds: float) -> int:
    """TIMINGS_FORMULA applied to ``workshop_counts(nb)`` and the measured run time."""
    minutes = (counts["words"] / READ_WPM + MIN_PER_CODE_CELL * counts["code_cells"]
               + RUN_FACTOR * run_seconds / 60 + MIN_PER_PREDICTION * counts.get("predictions", 0)
               + MIN_PER_EXERCISE * counts["exercises"]
               + MIN_PER_QUIZ * counts["quiz"] + DISCUSSION_MIN)
    return ROUND_TO * int(-(-minutes // ROUND_TO))  # round up


def timings_table(rows: list[tuple[str, float, dict[str, int]]]) -> str:
    """A markdown table: one row per (notebook file name, run seconds, counts), then the totals."""
    lines = ["| notebook | run time (s) | markdown words | code cells | predictions | exercises | quiz questions "
             "| suggested minutes |",
             "|---|--:|--:|--:|--:|--:|--:|--:|"]
    for name, seconds, c in rows:
        lines.append(f"| {Path(name).stem} | {seconds:.1f} | {c['words']} | {c['code_cells']} | {c['predictions']} "
                     f"| {c['exercises']} | {c['quiz']} | {suggested_minutes(c, seconds)} |")
    total = sum(suggested_minutes(c, s) for _, s, c in rows)
    sums = {k: sum(c[k] for _, _, c in rows) for k in ("words", "code_cells", "predictions", "exercises", "quiz")}
    lines.append(f"| **total** | {sum(round(s, 1) for _, s, _ in rows):.1f} | {sums['words']} | {sums['code_cells']} "
                 f"| {sums['predictions']} | {sums['exercises']} | {sums['quiz']} "
                 f"| **{total}** ({total // 60} h {total % 60:02d} min) |")
    return "\n".join(lines)


def machine() -> str:
    """A one-line description of this machine and its Python and torch, for the timings' caption."""
    import os
    import platform
    from importlib.metadata import PackageNotFoundError, version

    try:
        torch_version = version("torch")
    except PackageNotFoundError:
        torch_version = "not installed"
    return (f"{platform.system()} {platform.machine()}, {os.cpu_count()}-core CPU, "
            f"Python {platform.python_version()}, torch {torch_version}")


TIMINGS_START = "<!-- timings: paste the output of `python tools/nbtool.py timings` here -->"
TIMINGS_END = "<!-- /timings -->"
GUIDE = ROOT / "workshop" / "README.md"


def timings(names: list[str], timeout: int = 300, write: bool = False) -> int:
    """Run each notebook in a fresh kernel (writing nothing) and print the markdown timings table.

    With ``write``, also put the table into the facilitator guide, between its timings markers.
    """
    rows = []
    for path in select(names):
        nb = read(path)
        counts = workshop_counts(nb)
        seconds = run_in_fresh_kernel(nb, timeout)
        rows.append((path.name, seconds, counts))
        print(f"{path.name}: {seconds:.1f} s", file=sys.stderr)  # progress; stdout is the table
    text = (f"Measured on {time.strftime('%Y-%m-%d')}, {machine()}, with `python tools/nbtool.py timings` "
            "(run time: a fresh kernel, start-up included).\n\n"
            f"{TIMINGS_FORMULA}.\n\n{timings_table(rows)}")
    print(text)
    if write:
        guide = GUIDE.read_text()
        start, end = guide.index(TIMINGS_START) + len(TIMINGS_START), guide.index(TIMINGS_END)
        GUIDE.write_text(guide[:start] + "\n\n" + text.rstrip() + "\n\n" + guide[end:])
        print(f"timings: written to {GUIDE.relative_to(ROOT)}", file=sys.stderr)
    return 0


LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|<img[^>]*\bsrc=\"([^\"]+)\"")


def relative_targets(text: str, anchors: bool = False) -> list[str]:
    """The relative link targets in ``text``, without their ``#anchor`` unless ``anchors``."""
    found = []
    for m in LINK.finditer(text):
        target = m.group(1) or m.group(2)
        if urlparse(target).scheme or target.startswith(("#", "mailto:")):
            continue
        found.append(unquote(target if anchors else target.split("#")[0]))
    return [t for t in found if t]


def heading_anchors(path: Path) -> set[str]:
    """The anchors of a notebook's headings, as the reading edition makes them (MyST's slugs: lower case,
    spaces as dashes, other punctuation dropped)."""
    headings = [line.lstrip("#").strip() for cell in read(path).cells if cell.cell_type == "markdown"
                for line in cell.source.splitlines() if re.match(r"#{1,3} ", line)]
    return {re.sub(r"[^\w\- ]", "", h.lower().replace(" ", "-")) for h in headings}


def documents() -> list[tuple[Path, str]]:
    docs = []
    for path in notebook_paths() + notebook_paths(STUDENT):
        nb = read(path)
        docs.append((path, "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")))
    workshop = ROOT / "workshop"
    for md in [ROOT / "README.md", *sorted(workshop.glob("*.md")), *sorted(workshop.glob("notes/*.md"))]:
        if md.exists():
            docs.append((md, md.read_text()))
    return docs


def broken_links() -> list[str]:
    """Relative links to a missing file, or to a heading that a notebook does not have."""
    problems, anchors = [], {}
    for path, text in documents():
        for target in relative_targets(text, anchors=True):
            file, _, anchor = target.partition("#")
            full = (path.parent / file).resolve()
            if not full.exists():
                problems.append(f"{path.relative_to(ROOT)}: {target}")
            elif anchor and full.suffix == ".ipynb" and \
                    anchor not in anchors.setdefault(full, heading_anchors(full)):
                problems.append(f"{path.relative_to(ROOT)}: {target} (no such heading)")
    return problems


def links() -> int:
    problems = broken_links()
    for p in problems:
        print("broken link:", p)
    print(f"links: {len(problems)} broken")
    return 1 if problems else 0


def student_copy(nb, name: str):
    """Outputs cleared, solution cells removed, everything else kept."""
    copy_ = copy.deepcopy(nb)
    copy_.cells = [c for c in copy_.cells if SOLUTION_TAG not in c.metadata.get("tags", [])]
    for cell in copy_.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        # every Colab link opens the student copy (the header badge, and the Contents table in 00)
        cell.source = cell.source.replace(colab_url(""), colab_url("", "workshop/student"))
    copy_.metadata["clonelab"] = {"generated_from": f"notebooks/{name}",
                                  "note": "generated by tools/nbtool.py student; edit the notebook, not this copy"}
    return copy_


def _is_generated(path: Path) -> bool:
    try:
        return "generated_from" in read(path).metadata.get("clonelab", {})
    except Exception:
        return False


def student() -> int:
    STUDENT.mkdir(parents=True, exist_ok=True)
    wanted = {}
    for path in notebook_paths():
        wanted[path.name] = student_copy(read(path), path.name)
    changed = 0
    for name, nb in wanted.items():
        target = STUDENT / name
        if target.exists() and not _is_generated(target):
            raise SystemExit(f"refusing to overwrite {target.relative_to(ROOT)}: it was not generated by this tool")
        changed += write(nb, target)
    for path in STUDENT.glob("*.ipynb"):  # copies of notebooks that no longer exist
        if path.name not in wanted and _is_generated(path):
            path.unlink()
            changed += 1
    print(f"student: {changed} file(s) changed")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("stamp", help="stamp badges, setup cells, navigation and contents")
    ex = sub.add_parser("execute", help="execute notebooks in place in fresh kernels")
    ex.add_argument("notebooks", nargs="*", help="names like 01 or 01_clone_or_assign (default: all)")
    ex.add_argument("--timeout", type=int, default=300, help="seconds per cell")
    sub.add_parser("links", help="check relative links and image paths")
    sub.add_parser("student", help="generate workshop/student/ copies")
    tm = sub.add_parser("timings", help="run notebooks (writing nothing) and print a workshop timings table")
    tm.add_argument("notebooks", nargs="*", help="names like 01 or 01_clone_or_assign (default: all)")
    tm.add_argument("--timeout", type=int, default=300, help="seconds per cell")
    tm.add_argument("--write", action="store_true", help="also put the table into workshop/README.md")
    args = parser.parse_args(argv)
    if args.command == "stamp":
        return stamp()
    if args.command == "execute":
        return execute(args.notebooks, args.timeout)
    if args.command == "links":
        return links()
    if args.command == "student":
        return student()
    return timings(args.notebooks, args.timeout, args.write)


if __name__ == "__main__":
    sys.exit(main())
