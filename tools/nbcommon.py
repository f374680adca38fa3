"""What the notebook tools share: the paths, the markers that stamped cells are found by, reading and writing
notebooks, and the repository URL, which comes from one place: [project.urls] in pyproject.toml."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlparse

import nbformat

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
STUDENT = ROOT / "workshop" / "student"
# The Korean edition (tools/translate.py): the notebooks and their student copies, each beside its English folder,
# so that every relative link (../images/, ../README.md, between notebooks) holds in both languages
KO_NOTEBOOKS = ROOT / "notebooks-ko"
KO_STUDENT = ROOT / "workshop" / "student-ko"
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
DEEPER_TAG = "deeper"   # the tag stamp.py gives every Deeper code cell
# A code cell of asserts only, which pin the claims of the cells above it: run like any other, folded for the reader
# (its title shows, its code does not), since the outputs and the prose carry the point.
CHECKS_TAG = "checks"
CHECKS_MARK = "#@title Checks: this section's claims, asserted"
# A long listing the prose already describes (the post's own code): run like any other cell, its code folded under
# its own "#@title ..." first line. Unlike a checks cell, the cells after it may use what it defines.
FOLDED_TAG = "folded"
# "Time to here" under each heading of a notebook's core path, as in Neuromatch's tutorials
TIME_MARK = re.compile(r"^<small>⏱ [^\n]*</small>\n?", re.M)
NB_NAME = re.compile(r"^\d\d_[a-z0-9_]+\.ipynb$")


def repo_url() -> str:
    """[project.urls] Repository in pyproject.toml (read with a regex: tomllib needs Python 3.11)."""
    text = (ROOT / "pyproject.toml").read_text()
    return re.search(r'^Repository = "([^"]+)"', text, re.M).group(1).rstrip("/")


def package_version() -> str:
    text = (ROOT / "src" / "clonelab" / "__init__.py").read_text()
    return re.search(r'^__version__ = "([^"]+)"', text, re.M).group(1)


def release_ref() -> str:
    """The one ref that the badges open and the setup cell installs: the release tag of the package version."""
    return f"v{package_version()}"


def colab_url(name: str, folder: str = "notebooks") -> str:
    path = urlparse(repo_url()).path.strip("/")
    return f"https://colab.research.google.com/github/{path}/blob/{release_ref()}/{folder}/{name}"


def to_student_copies(markdown: str, korean: bool = False) -> str:
    """Every Colab link to an instructor copy in ``markdown`` turned into a link to its student copy."""
    if korean:
        return markdown.replace(colab_url("", KO_NOTEBOOKS.name), colab_url("", f"workshop/{KO_STUDENT.name}"))
    return markdown.replace(colab_url(""), colab_url("", "workshop/student"))


def heading_slug(heading: str) -> str:
    """The anchor of a Markdown heading line ("## A heading" or "A heading"), as the reading edition makes it
    (MyST's slugs, and GitHub's for these pages: lower case, spaces as dashes, other punctuation dropped; Hangul
    kept)."""
    return re.sub(r"[^\w\- ]", "", heading.lstrip("#").strip().lower().replace(" ", "-"))


def notebook_paths(folder: Path = NOTEBOOKS) -> list[Path]:
    return sorted(p for p in folder.glob("*.ipynb") if NB_NAME.match(p.name))


def select(names: list[str], folder: Path = NOTEBOOKS) -> list[Path]:
    """The notebooks named like 01, 01_clone_or_assign or 01_clone_or_assign.ipynb (all if none)."""
    paths = [p for p in notebook_paths(folder)
             if not names or p.name in names or p.stem in names or p.name[:2] in names]
    if names and not paths:
        raise SystemExit(f"no notebook matches {names}")
    return paths


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


def objectives_of(nb) -> list[str]:
    """The bullets ("- ...") of the notebook's "## Learning objectives" cell."""
    cell = next((c for c in nb.cells if c.cell_type == "markdown" and "## Learning objectives" in c.source), None)
    return [line for line in (cell.source.splitlines() if cell else []) if line.startswith("- ")]


def replace_between_markers(text: str, block: str, start: str = CONTENTS_START, end: str = CONTENTS_END) -> str:
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.S)
    if not pattern.search(text):
        return text
    return pattern.sub(lambda _: block, text)


def is_stamped(cell) -> bool:
    """The badge, setup and navigation cells that stamp.py writes."""
    return cell.source.startswith((HEADER_MARK, NAV_MARK, SETUP_MARK))


def is_folded(cell) -> bool:
    """A core code cell whose code is folded for the reader: a checks cell, or a listing tagged ``folded``."""
    return cell.cell_type == "code" and bool({CHECKS_TAG, FOLDED_TAG} & set(cell.metadata.get("tags", [])))


def is_checks(cell) -> bool:
    """A folded cell of asserts on the core path (tagged ``checks``)."""
    return cell.cell_type == "code" and CHECKS_TAG in cell.metadata.get("tags", [])


def is_deeper(cell) -> bool:
    """A cell of an optional *Deeper* note: a folded <details> markdown cell, or a code cell marked for it."""
    if cell.cell_type == "markdown":
        return cell.source.lstrip().startswith("<details")
    return cell.source.startswith((DEEPER_MARK, PLAIN_DEEPER_MARK)) or DEEPER_TAG in cell.metadata.get("tags", [])
