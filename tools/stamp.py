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
    rows = [CONTENTS_START, "", "| Notebook | Open in Colab |", "|---|---|"]
    for p, t in zip(paths, titles):
        rows.append(f"| [{t}]({link_prefix}{p.name}) | "
                    f"[![Colab](https://colab.research.google.com/assets/colab-badge.svg)]({colab_url(p.name)}) |")
    rows += ["", CONTENTS_END]
    return "\n".join(rows)


def objectives_block(paths: list[Path], nbs: list, titles: list[str]) -> str:
    """workshop/README.md's list: each notebook's "## Learning objectives" bullets, under a link to it."""
    parts = [OBJECTIVES_START, ""]
    for path, nb, title in zip(paths, nbs, titles):
        parts += [f"**[{title}](../notebooks/{path.name})**", "", *objectives_of(nb), ""]
    return "\n".join(parts + [OBJECTIVES_END])


def time_marker(minutes: int, practice: str = "") -> str:
    """The "time to here" line; ``practice`` names the exercises or quiz when they lie before the heading."""
    included = f", {practice} included" if practice else ""
    return f"<small>⏱ About {minutes} min to here on the core path{included} (an estimate).</small>"


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
