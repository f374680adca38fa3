#!/usr/bin/env python3
"""The series' size against its budgets: the figures a 20-minute core path allows.

    python tools/budget.py            # one row per notebook, then the series; exit 1 if a budget is broken
    python tools/budget.py 05 09      # only these notebooks (the series total is then not judged)

What is counted (tests/test_budget.py holds the same budgets):
- core prose: the words of the Markdown outside ``<details>`` blocks, without the stamped header, navigation and
  time markers (00's contents table counts);
- Deeper: the words inside ``<details>`` blocks;
- a paragraph: a block of prose between blank lines (a list item counts alone; tables and code are not prose);
- a caption: a Markdown cell that starts with ``*Figure``;
- core code: every line, blank ones included, of the code cells that are not a *Deeper* cell, a solution, the
  setup cell, or the post's own code (a cell whose first line starts with ``# The post's``, or
  ``#@title The post's`` where it is folded).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field

import nbcommon
import reading_time

POST_MARKS = ("# The post's", "#@title The post's")   # a folded listing of the post's code too
BUDGET = {"core_words": 1200, "deeper_words": 600, "paragraph_words": 120, "caption_words": 60, "core_code": 120}
CORE_WORDS = {"00": 700, "11": 1500}      # the two notebooks with their own core-prose budget
SERIES_WORDS = 20_000
DETAILS = re.compile(r"<details\b.*?</details>", re.S)
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
TAG = re.compile(r"</?[A-Za-z][^<>]*>")   # an HTML tag is no word (comments are left to reading_time._words)


def words(markdown: str) -> int:
    return reading_time._words(TAG.sub(" ", nbcommon.TIME_MARK.sub("", markdown)))


@dataclass
class Figures:
    name: str
    core_words: int = 0
    deeper_words: int = 0
    core_code: int = 0
    paragraphs: list[int] = field(default_factory=list)   # words of each paragraph, core and Deeper
    captions: list[int] = field(default_factory=list)

    @property
    def words(self) -> int:
        return self.core_words + self.deeper_words

    def broken(self) -> list[str]:
        """Each budget this notebook breaks, said in a few words."""
        limits = dict(BUDGET, core_words=CORE_WORDS.get(self.name[:2], BUDGET["core_words"]))
        found = [f"{what} {getattr(self, what)} > {limits[what]}"
                 for what in ("core_words", "deeper_words", "core_code") if getattr(self, what) > limits[what]]
        found += [f"a paragraph of {n} words > {limits['paragraph_words']}"
                  for n in self.paragraphs if n > limits["paragraph_words"]]
        found += [f"a caption of {n} words > {limits['caption_words']}"
                  for n in self.captions if n > limits["caption_words"]]
        return found


def paragraphs(markdown: str) -> list[str]:
    """The prose blocks of ``markdown``: split at blank lines and list items; code, tables and headings left out."""
    text = FENCE.sub("\n\n", markdown)
    blocks = re.split(r"\n\s*\n|\n(?=\s*(?:[-*+]|\d+\.) )", text)
    return [b for b in blocks if b.strip() and not b.lstrip().startswith(("|", "#", "<summary"))]


def measure(path) -> Figures:
    book = nbcommon.read(path)
    figures = Figures(path.name)
    for cell in book.cells:
        if nbcommon.is_stamped(cell):
            continue
        source = cell.source
        if cell.cell_type == "markdown":
            deeper = "\n\n".join(DETAILS.findall(source))
            core = DETAILS.sub("\n\n", source)
            figures.core_words += words(core)
            figures.deeper_words += words(deeper)
            figures.paragraphs += [words(p) for p in paragraphs(core) + paragraphs(deeper)]
            if core.lstrip().startswith("*Figure"):
                figures.captions.append(words(core))
        elif not (nbcommon.is_deeper(cell) or nbcommon.SOLUTION_TAG in cell.metadata.get("tags", [])
                  or source.startswith(POST_MARKS)):
            figures.core_code += len(source.splitlines())
    return figures


def report(rows: list[Figures]) -> str:
    lines = ["| notebook | core words | Deeper words | longest paragraph | longest caption | core code lines |",
             "|---|--:|--:|--:|--:|--:|"]
    for f in rows:
        lines.append(f"| {f.name[:2]} | {f.core_words} | {f.deeper_words} | {max(f.paragraphs, default=0)} "
                     f"| {max(f.captions, default=0)} | {f.core_code} |")
    lines.append(f"| series | {sum(f.core_words for f in rows)} | {sum(f.deeper_words for f in rows)} | "
                 f"{max((max(f.paragraphs, default=0) for f in rows), default=0)} | "
                 f"{max((max(f.captions, default=0) for f in rows), default=0)} | {sum(f.core_code for f in rows)} |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    rows = [measure(p) for p in nbcommon.select(argv)]
    print(report(rows))
    broken = [f"{f.name}: {what}" for f in rows for what in f.broken()]
    total = sum(f.words for f in rows)
    print(f"\nseries: {total} words of Markdown (budget {SERIES_WORDS})")
    if not argv and total > SERIES_WORDS:
        broken.append(f"series: {total} words > {SERIES_WORDS}")
    print("\n".join(["", *broken]) if broken else "every budget holds")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
