#!/usr/bin/env python3
"""Stamp every notebook, again and again without drift: the Colab badge, the setup cell, the navigation, the
contents tables (here and in README.md), the time markers, the learning objectives in workshop/README.md, and
the folding of solution and Deeper cells (JupyterLab and Colab).

    python tools/stamp.py

The stamped cells are found by markers (like PythonDataScienceHandbook's tools/add_navigation.py), so
re-stamping replaces them instead of adding more.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat

from nbcommon import (CHECKS_MARK, CONTENTS_END, CONTENTS_START, DEEPER_MARK, DEEPER_TAG, HEADER_MARK, NAV_MARK,
                      PLAIN_DEEPER_MARK, ROOT, SETUP_MARK, SOLUTION_TAG, TIME_MARK, colab_url, is_checks, is_folded,
                      notebook_paths, objectives_of, package_version, read, release_ref, replace_between_markers,
                      repo_url, title_of, write)
from reading_time import PRACTICE_HEADINGS, core_split, core_timeline

SOLUTION_TITLE = "#@title Solution (folded: try the exercise first)"
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
OBJECTIVES_START = "<!-- clonelab:objectives (stamped from each notebook's Learning objectives cell) -->"
OBJECTIVES_END = "<!-- /clonelab:objectives -->"
STAMPED_BY = "tools/stamp.py"   # named on the setup cell's first line


def git_source() -> str:
    """What the setup cell installs on Colab: the release tag that matches the package version, so that a
    class is not moved by commits to the default branch mid-session (tag each release `v<version>`)."""
    return f"git+{repo_url()}@{release_ref()}"


def setup_source() -> str:
    return f'''{SETUP_MARK} (stamped by {STAMPED_BY}: edit the template there, not here)
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


# The words of the stamped lines, as str.format templates: the Korean edition translates these very strings
# (tools/translate.py, translations/ko/series.po), so a change of wording here shows there as an untranslated entry.
HEADER_LINE = "Notebook {index} of the series 00–{last} · [Contents](00_start_here.ipynb)"
NAV_PREVIOUS = "← Previous: [{title}]({name})"
NAV_CONTENTS = "[Contents](00_start_here.ipynb)"
NAV_NEXT = "Next: [{title}]({name}) →"
CONTENTS_HEADER = "| Notebook | Open in Colab |"
EXERCISES, QUIZ = "the exercises", "the quiz"
TIME_TO_HERE = "About {minutes} min to here on the core path (an estimate)."
TIME_TO_HERE_WITH = "About {minutes} min to here on the core path, {practice} included (an estimate)."
CORE_ONLY = "Estimated: about {minutes} min of reading and running."
CORE_THEN = "Estimated: about {minutes} min of reading and running, then about {practice} min for {what}."
CORE_THEN_AFTER_THEM = ("Estimated: about {minutes} min of reading and running, then about {practice} min for {what}, "
                        "and {after} min after them.")
CORE_THEN_AFTER_IT = ("Estimated: about {minutes} min of reading and running, then about {practice} min for {what}, "
                      "and {after} min after it.")
TEMPLATES = {   # each template, and the context its translation has in series.po
    HEADER_LINE: "header", NAV_PREVIOUS: "nav", NAV_CONTENTS: "nav", NAV_NEXT: "nav",
    TIME_TO_HERE: "time marker", TIME_TO_HERE_WITH: "time marker", EXERCISES: "time marker", QUIZ: "time marker",
    CORE_ONLY: "core marker", CORE_THEN: "core marker", CORE_THEN_AFTER_THEM: "core marker",
    CORE_THEN_AFTER_IT: "core marker", CONTENTS_HEADER: "contents table",
}


def english(template: str) -> str:
    """The ``words`` of the English edition: each template as it is."""
    return template


def header_source(index: int, total: int, name: str, folder: str = "notebooks", words=english) -> str:
    badge = f"[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]({colab_url(name, folder)})"
    return f"{HEADER_MARK}\n{badge}\n\n" + words(HEADER_LINE).format(index=f"{index:02d}", last=f"{total - 1:02d}")


def nav_source(paths: list[Path], titles: list[str], i: int, words=english) -> str:
    parts = []
    if i > 0:
        parts.append(words(NAV_PREVIOUS).format(title=titles[i - 1], name=paths[i - 1].name))
    parts.append(words(NAV_CONTENTS))
    if i < len(paths) - 1:
        parts.append(words(NAV_NEXT).format(title=titles[i + 1], name=paths[i + 1].name))
    return f"{NAV_MARK}\n---\n" + " · ".join(parts)


def contents_table(paths: list[Path], titles: list[str], link_prefix: str = "", folder: str = "notebooks",
                   words=english) -> str:
    rows = [CONTENTS_START, "", words(CONTENTS_HEADER), "|---|---|"]
    for p, t in zip(paths, titles):
        rows.append(f"| [{t}]({link_prefix}{p.name}) | "
                    f"[![Colab](https://colab.research.google.com/assets/colab-badge.svg)]({colab_url(p.name, folder)}) |")
    rows += ["", CONTENTS_END]
    return "\n".join(rows)


def objectives_block(paths: list[Path], nbs: list, titles: list[str]) -> str:
    """workshop/README.md's list: each notebook's "## Learning objectives" bullets, under a link to it."""
    parts = [OBJECTIVES_START, ""]
    for path, nb, title in zip(paths, nbs, titles):
        parts += [f"**[{title}](../notebooks/{path.name})**", "", *objectives_of(nb), ""]
    return "\n".join(parts + [OBJECTIVES_END])


def time_marker(minutes: int, practice: str = "", words=english) -> str:
    """The "time to here" line; ``practice`` names the exercises or quiz when they lie before the heading."""
    text = (words(TIME_TO_HERE_WITH).format(minutes=minutes, practice=words(practice)) if practice else
            words(TIME_TO_HERE).format(minutes=minutes))
    return f"<small>⏱ {text}</small>"


def core_marker(nb, words=english) -> str:
    before, practice, after = core_split(nb)
    quiz = any(c.cell_type == "markdown" and c.source.startswith("## Quiz") for c in nb.cells)
    if not practice:
        text = words(CORE_ONLY).format(minutes=before + after)
    else:
        template = CORE_THEN if not after else CORE_THEN_AFTER_IT if quiz else CORE_THEN_AFTER_THEM
        text = words(template).format(minutes=before, practice=practice, after=after,
                                      what=words(QUIZ if quiz else EXERCISES))
    return f"<small>⏱ {text}</small>"


def time_markers(nb, words=english) -> list[tuple[int, bool, str]]:
    """(cell index, under its heading? (else: at the end of the cell), marker) of each marker ``nb`` gets: the
    estimate at the end of the cell that states the core path, and a "time to here" line under each core-path
    heading from the third minute on. Computed from the English notebook; ``words`` translates the lines."""
    found = []
    core = next((i for i, c in enumerate(nb.cells) if c.cell_type == "markdown" and "Core path" in c.source), None)
    if core is not None:
        found.append((core, False, core_marker(nb, words)))
    marks, _ = core_timeline(nb)
    practice = ""   # after the Exercises (or Quiz) section, the minutes include them: the marker says so
    for index, heading, minutes in marks:
        if minutes >= 3:  # not under Learning objectives, or the first section: nothing to say yet
            found.append((index, True, time_marker(minutes, practice, words)))
        if heading in PRACTICE_HEADINGS:
            practice = EXERCISES if heading == "Exercises" else QUIZ
    return found


def put_time_markers(cells, markers: list[tuple[int, bool, str]]) -> None:
    """Remove every marker line from ``cells``, then put ``markers`` (from :func:`time_markers`) in."""
    for cell in cells:
        if cell.cell_type == "markdown" and TIME_MARK.search(cell.source):
            cell.source = TIME_MARK.sub("", cell.source)
    for index, under_heading, marker in markers:
        cell = cells[index]
        if under_heading:
            first, _, rest = cell.source.partition("\n")
            cell.source = f"{first}\n{marker}\n{rest}" if rest else f"{first}\n{marker}"
        else:
            cell.source = cell.source.rstrip("\n") + "\n\n" + marker


def stamp_time_markers(nb) -> None:
    """Put a "time to here" line under each core-path heading from the third minute on, and the estimate (the
    formula counts no marker, so the old ones do not change the new)."""
    put_time_markers(nb.cells, time_markers(nb))


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


def _fold(cell) -> None:
    """Solution and Deeper cells: collapsed in JupyterLab, folded on Colab (a #@title line, cellView form)."""
    if SOLUTION_TAG in cell.metadata.get("tags", []):
        # JupyterLab shows a collapsed input and output until the reader clicks them, so the answer
        # (the code, or the value it prints) is not read by accident right below the exercise
        cell.metadata.setdefault("jupyter", {}).update(source_hidden=True, outputs_hidden=True)
        if not cell.source.startswith("#@title"):
            cell.source = f"{SOLUTION_TITLE}\n{cell.source}"
        cell.metadata["cellView"] = "form"
    if is_folded(cell):
        # the code is folded, its output (for checks: none, unless an assert fails) is not; folded on Colab too
        if is_checks(cell) and not cell.source.startswith("#@title"):
            cell.source = f"{CHECKS_MARK}\n{cell.source}"
        cell.metadata["jupyter"] = {"source_hidden": True}
        cell.metadata["cellView"] = "form"
    if cell.cell_type == "code" and cell.source.startswith(PLAIN_DEEPER_MARK):
        cell.source = DEEPER_MARK + cell.source[len(PLAIN_DEEPER_MARK):]
    if cell.cell_type == "code" and cell.source.startswith(DEEPER_MARK):
        # collapsed, input and output, like the <details> note it belongs to; folded on Colab too
        cell.metadata["jupyter"] = {"source_hidden": True, "outputs_hidden": True}
        cell.metadata["cellView"] = "form"
        # and tagged, as a solution is: a tool that reads tags, not our first line, can leave it off the core path
        if DEEPER_TAG not in cell.metadata.get("tags", []):
            cell.metadata["tags"] = [*cell.metadata.get("tags", []), DEEPER_TAG]


def _replace_in(path: Path, block: str, *markers: str) -> int:
    """Put ``block`` between the markers in the text file ``path``, if it has them; 1 if that changed it."""
    if not path.exists():
        return 0
    text = path.read_text()
    new = replace_between_markers(text, block, *markers)
    if new != text:
        path.write_text(new)
    return int(new != text)


def stamp() -> int:
    paths = notebook_paths()
    nbs = [read(p) for p in paths]
    titles = [title_of(nb) for nb in nbs]
    changed = 0
    for i, (path, nb) in enumerate(zip(paths, nbs)):
        # drop stray marked cells (moved or duplicated by hand) before placing ours
        for mark, cid in ((HEADER_MARK, "clonelab-header"), (SETUP_MARK, "clonelab-setup"), (NAV_MARK, "clonelab-nav")):
            nb.cells = [c for c in nb.cells if not c.source.startswith(mark) or c.get("id") == cid]
        # a kernelspec, so JupyterLab starts Python without asking; no editor leftovers
        nb.metadata["kernelspec"] = dict(KERNELSPEC)
        nb.metadata.pop("jupytext", None)
        _put(nb, 1, "clonelab-header", "markdown", header_source(i, len(paths), path.name))
        _put(nb, 2, "clonelab-setup", "code", setup_source())
        _put(nb, -1, "clonelab-nav", "markdown", nav_source(paths, titles, i))
        stamp_time_markers(nb)
        for cell in nb.cells:
            _fold(cell)
            if cell.cell_type == "markdown" and CONTENTS_START in cell.source:
                cell.source = replace_between_markers(cell.source, contents_table(paths, titles))
        changed += write(nb, path)
    changed += _replace_in(ROOT / "README.md", contents_table(paths, titles, "notebooks/"))
    changed += _replace_in(ROOT / "workshop" / "README.md", objectives_block(paths, nbs, titles),
                           OBJECTIVES_START, OBJECTIVES_END)
    print(f"stamp: {changed} file(s) changed")
    return 0


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    sys.exit(stamp())
