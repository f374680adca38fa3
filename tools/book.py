#!/usr/bin/env python3
"""The reading edition: the executed notebooks as a Sphinx site (MyST-NB, sphinx-book-theme), built offline.

    python tools/book.py [OUT]              # default: site/   (`make html`)
    python tools/book.py --student [OUT]    # without the solution cells: for students reading offline
    python tools/book.py --korean [OUT]     # the Korean edition, from notebooks-ko/ (default: site/ko/)

It needs the `site` extra (`pip install -e ".[site]"`). The notebooks are staged into build/book/ as they
are, but for two things: a link to a file of the repository that is not a page of the site (the README, the
facilitator guide) points at the repository online, and the setup cell's input is folded (tag hide-input).
Sphinx runs with -W, so a link between notebooks that does not resolve fails the build.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbcommon

STAGE = nbcommon.ROOT / "build" / "book"
STAGE_KO = nbcommon.ROOT / "build" / "book-ko"
# The index page's words (translated in translations/ko/series.po, like every stamped line)
TITLE = "Clone or alias?"
INDEX_TEXT = ("Tensor memory, mutability and residual connections in PyTorch, in {count} notebooks. This is the "
              "reading edition: each notebook with the outputs it printed when it was last run, so nothing needs to "
              "run here. To run the notebooks, in JupyterLab or on Colab, start from the [repository]({repository}).")
TOC_CAPTION = "The series"


def language_link(name: str, korean: bool) -> str:
    """The link at the top of a page to the same page in the other language (``name``: the page's path in the
    site, "" for the index). The Korean edition is built into ko/ inside the English site."""
    up = "../" if name else ""
    if korean:
        return f'<a class="clonelab-language" href="{up}../{name or "index.html"}" lang="en">English</a>'
    return f'<a class="clonelab-language" href="{up}ko/{name or "index.html"}" lang="ko">한국어</a>'


CONF = nbcommon.ROOT / "docs"
LINK = re.compile(r"(\]\()([^)\s]+)(\))")


def _online(target: str, folder: Path) -> str:
    """A relative link from ``folder``: kept if it is a page or an image of the site, else the repository URL."""
    if not target or re.match(r"^[a-z]+:", target) or target.startswith(("#", "/")):
        return target
    path, sep, anchor = target.partition("#")
    if re.fullmatch(r"\d\d_[a-z0-9_]+\.ipynb", path):
        return target
    where = (folder / path).resolve()
    try:
        relative = where.relative_to(nbcommon.ROOT).as_posix()
    except ValueError:
        return target
    if relative.startswith("images/"):
        return target
    kind = "tree" if where.is_dir() else "blob"
    return f"{nbcommon.repo_url()}/{kind}/main/{relative}" + sep + anchor


STUDENT_NOTE = ("This is the student edition: the exercises' solutions are left out, and its Colab badges open the "
                "student copies. It shows every output, so the answer to each **Predict** prompt is on the page: "
                "make your prediction before you scroll past it.")


def index_page(names: list[str], student: bool = False, korean: bool = False) -> str:
    toc = "\n".join(f"notebooks/{Path(n).stem}" for n in names)
    words = _words(korean)
    text = words(INDEX_TEXT).format(count=len(names), repository=nbcommon.repo_url())
    return (f"# {words(TITLE)}\n\n{language_link('', korean)}\n\n{text}\n\n"
            + (STUDENT_NOTE + "\n\n" if student else "")
            + f"```{{toctree}}\n:maxdepth: 1\n:caption: {words(TOC_CAPTION)}\n\n" + toc + "\n```\n")


def _words(korean: bool):
    """English as it is, or its translation from series.po (context "site")."""
    if not korean:
        return lambda text: text
    import translate
    tr = translate.Translator()
    return lambda text: tr.s("site", text)


def stage(where: Path = STAGE, solutions: bool = True, korean: bool = False) -> Path:
    if where.exists():
        shutil.rmtree(where)
    (where / "notebooks").mkdir(parents=True)
    if (nbcommon.ROOT / "images").is_dir():
        shutil.copytree(nbcommon.ROOT / "images", where / "images")
    paths = nbcommon.notebook_paths(nbcommon.KO_NOTEBOOKS if korean else nbcommon.NOTEBOOKS)
    for path in paths:
        nb = nbcommon.read(path)
        header = next((c for c in nb.cells if c.get("id") == "clonelab-header"), None)
        if header is not None and solutions:   # the same page in the other language
            header.source += "\n\n" + language_link(f"notebooks/{path.stem}.html", korean)
        if not solutions:
            nb.cells = [c for c in nb.cells if nbcommon.SOLUTION_TAG not in c.metadata.get("tags", [])]
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                cell.source = LINK.sub(lambda m: m.group(1) + _online(m.group(2), path.parent) + m.group(3),
                                       cell.source)
                if not solutions:
                    cell.source = nbcommon.to_student_copies(cell.source)
            tags = cell.metadata.get("tags", [])
            # the setup cell's and the folded cells' code is folded; a solution's code and output too (the answer it prints)
            fold = "hide-input" if cell.get("id") == "clonelab-setup" or nbcommon.is_folded(cell) else \
                "hide-cell" if nbcommon.SOLUTION_TAG in tags else None
            if fold and fold not in tags:
                cell.metadata["tags"] = [*tags, fold]
        nbcommon.write(nb, where / "notebooks" / path.name)
    (where / "index.md").write_text(index_page([p.name for p in paths], student=not solutions, korean=korean))
    return where


def build(out: Path | None = None, source: Path | None = None, korean: bool = False) -> int:
    out = nbcommon.SITE if out is None else Path(out)
    source = stage() if source is None else source
    language = ["-D", "language=ko", "-D", f"html_title={_words(True)(TITLE)}"] if korean else []
    command = [sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-q", "-c", str(CONF), *language,
               str(source), str(out)]
    done = subprocess.run(command)
    if done.returncode == 0:
        print(f"html: the reading edition is in {out}/ (open index.html)")
    return done.returncode


if __name__ == "__main__":
    args = sys.argv[1:]
    student, korean = "--student" in args, "--korean" in args
    args = [a for a in args if a not in ("--student", "--korean")]
    default = nbcommon.ROOT / "site-student" if student else nbcommon.SITE / "ko" if korean else None
    out = Path(args[0]) if args else default
    sys.exit(build(out, stage(STAGE_KO if korean else STAGE, solutions=not student, korean=korean), korean=korean))
