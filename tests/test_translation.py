"""The Korean edition cannot drift from the English one (tools/translate.py): every English block and comment has a
current translation, notebooks-ko/ is what the tool generates, its code is the English code, and check() speaks
Korean when asked."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given
from hypothesis import strategies as st

import nbcommon
import translate
from clonelab import i18n
from clonelab.exercises import check


def test_every_english_block_comment_and_message_has_a_current_translation():
    missing = translate.untranslated()
    assert missing == [], f"{len(missing)} without a current translation (tools/translate.py status):\n" + \
        "\n".join(missing[:20])


def test_korean_notebooks_are_what_the_tool_generates():
    generated, _ = translate.build()
    assert sorted(p.name for p in generated) == [p.name for p in nbcommon.notebook_paths(nbcommon.KO_NOTEBOOKS)]
    for path, nb in generated.items():
        assert translate.sources(nbcommon.read(path)) == translate.sources(nb), \
            f"{path.name} is stale: run `python tools/translate.py build`, then execute it (`make notebooks`)"


def test_the_compiled_catalog_is_what_the_po_compiles_to():
    assert not translate.stale_mo(), "run `python tools/translate.py build`"


@pytest.mark.parametrize("path", nbcommon.notebook_paths(), ids=lambda p: p.name)
def test_korean_code_is_the_english_code_comments_aside(path):
    english, korean = nbcommon.read(path), nbcommon.read(nbcommon.KO_NOTEBOOKS / path.name)
    code = [(c.get("id"), translate.code_without_comments(c.source)) for c in english.cells
            if c.cell_type == "code" and c.get("id") != "clonelab-setup"]
    code_ko = [(c.get("id"), translate.code_without_comments(c.source)) for c in korean.cells
               if c.cell_type == "code" and c.get("id") != "clonelab-setup"]
    assert code_ko == code
    # the setup cell: the same code, but for its messages and the one line that sets the language
    setup = next(c for c in korean.cells if c.get("id") == "clonelab-setup").source
    assert 'clonelab.set_language("ko")' in setup and "`make lab-ko`" in setup
    # every code cell ran, so what check() prints is in the notebook, in Korean
    assert all(c.execution_count for c in korean.cells if c.cell_type == "code")


def test_an_edited_english_paragraph_makes_its_translation_stale():
    """What `update` does when a translator's English changes: the entry turns fuzzy, keeps the old translation and
    the old English beside it, and counts as untranslated until someone updates it."""
    path = nbcommon.notebook_paths()[5]
    nb = nbcommon.read(path)
    po = translate.load(translate.po_path(path))
    cell = next(c for c in nb.cells if c.cell_type == "markdown" and not nbcommon.is_stamped(c)
                and len(translate.blocks(c.source)) > 1)
    old = translate.blocks(translate._strip_stamped(cell.source))[1]
    edited = copy.deepcopy(nb)
    next(c for c in edited.cells if c.get("id") == cell.get("id")).source = cell.source.replace(old, old + " More.")
    merged = translate.merge(po, translate.units(edited), memory={})
    entry = merged.find(old + " More.", msgctxt=cell.get("id"))
    assert entry is not None and "fuzzy" in entry.flags and entry.previous_msgid == old
    assert entry.msgstr == po.find(old, msgctxt=cell.get("id")).msgstr and not translate.translated(entry)
    assert (cell.get("id"), old + " More.") not in translate.catalog(merged)
    # a block that is gone is kept as an obsolete entry, not lost
    assert any(e.obsolete and e.msgid == old for e in merged)


@given(st.lists(st.text(alphabet="ab #\n\t", min_size=1, max_size=12), max_size=6))
def test_blocks_keep_every_line_and_split_only_at_blank_lines(parts):
    text = "\n".join(parts)
    found = translate.blocks(text)
    assert all(b.strip() for b in found)
    assert [line for b in found for line in b.split("\n")] == [line for line in text.split("\n") if line.strip()]


def test_a_fenced_block_stays_whole():
    assert translate.blocks("text\n\n```\na\n\nb\n```\n\nmore") == ["text", "```\na\n\nb\n```", "more"]


def test_code_without_comments_keeps_strings_that_look_like_comments():
    source = 'x = "# not a comment"  # a comment\n#@title A title\ny = 1'
    assert translate.code_without_comments(source) == 'x = "# not a comment"\n\ny = 1'


def test_check_speaks_korean_when_asked_and_english_again_after():
    try:
        i18n.set_language("ko")
        wrong, right = check("demo.1", 5), check("demo.1", 4)
        assert "힌트" in wrong.message and "정답" in right.message, (wrong.message, right.message)
        hinted = check("04.2", "A")   # a hint of its own, from the catalog
        assert any("\uac00" <= ch <= "\ud7a3" for ch in hinted.message), hinted.message
    finally:
        i18n.set_language("en")
    assert check("demo.1", 4).message == "✓ demo.1: correct."


def test_set_language_names_its_argument():
    with pytest.raises(ValueError, match="language must be one of 'en', 'ko'"):
        i18n.set_language("kr")


def test_korean_search_strips_a_trailing_particle_and_nothing_else():
    import sys
    sys.path.insert(0, str(nbcommon.ROOT / "docs"))
    pytest.importorskip("sphinx")
    from korean_search import stem

    assert [stem(w) for w in ("텐서는", "텐서를", "저장소에서는", "텐서", "clone", "x는")] == \
        ["텐서", "텐서", "저장소", "텐서", "clone", "x는"]
    assert stem("는") == "는"   # a particle alone is a word
