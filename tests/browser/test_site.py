"""The reading edition (`make html`): built offline by Sphinx with MyST-NB and sphinx-book-theme, then read in
chromium like a reader would: the index, a sidebar link, prev/next, a figure, the folded setup and solution
cells, search."""

from __future__ import annotations

import pytest

import book
import nbcommon

pytestmark = pytest.mark.browser
pytest.importorskip("myst_nb", reason="pip install -e '.[site]'")

NAMES = [p.stem for p in nbcommon.notebook_paths()]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    assert book.build(out, book.stage(tmp_path_factory.mktemp("stage"))) == 0, "the site did not build"
    return out


def test_a_broken_link_between_notebooks_fails_the_build(tmp_path):
    source = book.stage(tmp_path / "stage")
    page = source / "notebooks" / f"{NAMES[1]}.ipynb"
    nb = nbcommon.read(page)
    nb.cells.append(nbformat_markdown("See [a notebook that does not exist](99_missing.ipynb)."))
    nbcommon.write(nb, page)
    assert book.build(tmp_path / "site", source) != 0


def nbformat_markdown(text: str):
    import nbformat

    return nbformat.v4.new_markdown_cell(text)


def test_index_sidebar_prev_next_figure_and_search(site, page):
    page.goto((site / "index.html").as_uri())
    assert "Clone or alias?" in page.title()
    sidebar = page.locator("nav.bd-docs-nav a.reference.internal")
    hrefs = [sidebar.nth(i).get_attribute("href") for i in range(sidebar.count())]
    assert [h.split("/")[-1] for h in hrefs if h.startswith("notebooks/")] == [f"{n}.html" for n in NAMES]

    # a sidebar link opens the page it names
    sidebar.filter(has_text="Names, objects and storage").first.click()
    page.wait_for_load_state()
    assert page.url.endswith(f"notebooks/{NAMES[2]}.html")
    assert page.locator("h1").first.inner_text().startswith("02 · Names, objects and storage")
    # a figure (a matplotlib output) is an image the browser decoded
    figure = page.locator("img[src*='_images/']").first
    figure.scroll_into_view_if_needed()
    assert figure.evaluate("img => img.complete && img.naturalWidth > 100")
    # the setup cell's code is folded; its output (the versions line) is shown
    setup = page.locator(".tag_hide-input").first
    assert not setup.locator(".cell_input .highlight").first.is_visible()
    assert "clonelab" in setup.locator(".cell_output").inner_text()
    # a solution is folded whole, its printed answer too, until the reader opens it
    solution = page.locator(".tag_hide-cell").first
    solution.scroll_into_view_if_needed()
    assert "✓ 02." in solution.text_content() and not solution.get_by_text("✓ 02.").first.is_visible()

    # next, then previous
    page.locator("a.right-next").click()
    page.wait_for_load_state()
    assert page.url.endswith(f"{NAMES[3]}.html")
    page.locator("a.left-prev").click()
    page.wait_for_load_state()
    assert page.url.endswith(f"{NAMES[2]}.html")

    # a link between notebooks in the text resolves to that page
    link = page.locator("article a.reference.internal[href$='01_clone_or_assign.html']").first
    assert link.count() == 1

    # search finds a notebook by a word in it
    page.goto((site / "search.html").as_uri() + "?q=storage")
    page.wait_for_selector("#search-results li", timeout=15_000)
    assert page.locator("#search-results li").count() >= 2


def test_the_student_edition_has_no_solutions(tmp_path):
    out = tmp_path / "site"
    assert book.build(out, book.stage(tmp_path / "stage", solutions=False)) == 0
    page = (out / "notebooks" / f"{NAMES[4]}.html").read_text()
    assert "04.1" in page and "✓ 04.1: correct." not in page


@pytest.fixture(scope="module")
def bilingual_site(tmp_path_factory):
    """The English site with the Korean edition in ko/, as `make html` builds them."""
    out = tmp_path_factory.mktemp("bilingual")
    assert book.build(out, book.stage(tmp_path_factory.mktemp("stage-en"))) == 0, "the English site did not build"
    assert book.build(out / "ko", book.stage(tmp_path_factory.mktemp("stage-ko"), korean=True), korean=True) == 0, \
        "the Korean site did not build"
    return out


def test_the_korean_edition_links_both_ways_and_its_search_finds_korean_words(bilingual_site, page):
    site = bilingual_site
    page.goto((site / "ko" / "index.html").as_uri())
    assert page.locator("html").get_attribute("lang") == "ko"
    sidebar = page.locator("nav.bd-docs-nav a.reference.internal")
    assert sidebar.count() >= len(NAMES)
    # a Korean page: its title in Korean, and a link to the same page in English, which links back
    page.goto((site / "ko" / "notebooks" / f"{NAMES[5]}.html").as_uri())
    heading = page.locator("h1").first.inner_text()
    assert heading.startswith("05") and any("\uac00" <= ch <= "\ud7a3" for ch in heading), heading
    page.locator("a.clonelab-language").first.click()
    page.wait_for_load_state()
    assert page.url.endswith(f"/notebooks/{NAMES[5]}.html") and "/ko/" not in page.url
    assert page.locator("h1").first.inner_text().startswith("05 · Autograd")
    page.locator("a.clonelab-language").first.click()
    page.wait_for_load_state()
    assert page.url.endswith(f"/ko/notebooks/{NAMES[5]}.html")

    # search finds a Korean word whatever particle follows it in the text: 저장소는, 저장소를, 저장소의 ...
    found = {}
    for word in ("저장소", "저장소를", "텐서", "텐서에도"):
        page.goto((site / "ko" / "search.html").as_uri() + "?q=" + word)
        page.wait_for_selector("#search-results li", timeout=15_000)
        found[word] = _settled_count(page, "#search-results li")
    assert found["저장소"] >= 3 and found["저장소를"] == found["저장소"], found
    assert found["텐서"] >= len(NAMES) and found["텐서에도"] >= len(NAMES), found   # every page, but for a title match


def _settled_count(page, selector: str) -> int:
    """How many elements match once no more appear for half a second (Sphinx lists results one by one)."""
    count, stable = -1, 0
    while stable < 5:
        page.wait_for_timeout(100)
        now = page.locator(selector).count()
        stable, count = (stable + 1, now) if now == count else (0, now)
    return count
