"""The series stays within the budgets of a 20-minute core path (tools/budget.py counts them)."""

from __future__ import annotations

import pytest
from nbformat import v4

import budget
from conftest import notebook_paths

PATHS = notebook_paths()


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.name)
def test_each_notebook_keeps_its_budgets(path):
    assert budget.measure(path).broken() == []


def test_the_series_keeps_its_word_budget():
    words = sum(budget.measure(p).words for p in PATHS)
    assert words <= budget.SERIES_WORDS, f"{words} words of Markdown in the series"


def test_what_counts_as_core_deeper_paragraph_caption_and_code(tmp_path):
    details = "<details><summary>Deeper: why</summary>\n\nfour words in here\n\n</details>"
    book = v4.new_notebook(cells=[
        v4.new_markdown_cell("# 99 · Title\n\none two three\n\n- item one\n- item two two\n\n| a | b |\n|--|--|"),
        v4.new_markdown_cell("<!-- clonelab:header -->\nstamped words are not counted"),
        v4.new_markdown_cell(f"five words of core prose\n\n{details}"),
        v4.new_markdown_cell("*Figure:* a caption of six words."),
        v4.new_markdown_cell("<!-- clonelab:contents -->\n| [01 · Two words](01_x.ipynb) |\n<!-- /clonelab:contents -->"),
        v4.new_code_cell("a = 1\n\nb = 2"),
        v4.new_code_cell("# The post's code\nprint(1)"),
        v4.new_code_cell("# Deeper (optional)\nc = 3"),
        v4.new_code_cell("check('x', 1)", metadata={"tags": ["solution"]}),
    ])
    path = tmp_path / "99_title.ipynb"
    path.write_text(v4.writes(book))
    figures = budget.measure(path)
    # "99 · Title" (2) + 3 + "item one" (2) + "item two two" (3) + the table (2) + 5 + 6 + the contents (3);
    # code: every line, the blank one too, but not the post's, a Deeper cell's or a solution's
    assert (figures.core_words, figures.deeper_words, figures.core_code) == (26, 6, 3)
    assert figures.captions == [6]
    assert 3 in figures.paragraphs and 4 in figures.paragraphs   # "one two three", "four words in here"


def test_a_broken_budget_is_named():
    figures = budget.Figures("05_x.ipynb", core_words=1300, deeper_words=10, core_code=121,
                             paragraphs=[121], captions=[61])
    assert figures.broken() == ["core_words 1300 > 1200", "core_code 121 > 120", "a paragraph of 121 words > 120",
                                "a caption of 61 words > 60"]
    assert budget.Figures("00_x.ipynb", core_words=701).broken() == ["core_words 701 > 700"]
