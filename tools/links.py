#!/usr/bin/env python3
"""Check every relative link and image path in the notebooks, their student copies, README.md and the
workshop kit, and every ``#anchor`` into a notebook; exit 1 if one is broken.

    python tools/links.py
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

from nbcommon import KO_NOTEBOOKS, KO_STUDENT, ROOT, STUDENT, heading_slug, notebook_paths, read

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
    """The anchors of a notebook's headings, as the reading edition makes them."""
    return {heading_slug(line) for cell in read(path).cells if cell.cell_type == "markdown"
            for line in cell.source.splitlines() if re.match(r"#{1,3} ", line)}


def documents() -> list[tuple[Path, str]]:
    docs = []
    for path in notebook_paths() + notebook_paths(STUDENT) + notebook_paths(KO_NOTEBOOKS) + notebook_paths(KO_STUDENT):
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


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    sys.exit(links())
