"""The static HTML edition (`make html`): a page per notebook, an index in series order, no broken links."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

import nbtool
from conftest import notebook_paths

PATHS = notebook_paths()


class Links(HTMLParser):
    """Every href/src of a page, and for each <a> the text just before it ("Previous:", "Next:")."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.refs: list[tuple[str, str]] = []  # (attribute, value)
        self.anchors: list[tuple[str, str]] = []  # (text before the <a>, href)
        self._text = ""

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("href", "src") and value is not None:
                self.refs.append((name, value))
        if tag == "a":
            self.anchors.append((self._text, dict(attrs).get("href") or ""))
            self._text = ""

    def handle_data(self, data):
        self._text = (self._text + data)[-200:]


def parse(page: Path) -> Links:
    parser = Links()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def is_relative(url: str) -> bool:
    return bool(url) and not urlparse(url).scheme and not url.startswith(("#", "//", "/"))


def local_target(url: str) -> str:
    return unquote(url.split("#")[0].split("?")[0])


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    assert nbtool.build_html(out) == 0
    return out


def test_every_notebook_has_a_page(site):
    missing = [p.name for p in PATHS if not (site / f"{p.stem}.html").is_file()]
    assert not missing, f"no HTML page for {missing}"


def test_index_lists_the_notebooks_in_series_order(site):
    index = parse(site / "index.html")
    listed = [href for _, href in index.anchors if is_relative(href)]
    assert listed == [f"{p.stem}.html" for p in PATHS]


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.name)
def test_relative_links_and_sources_resolve(site, path):
    page = site / f"{path.stem}.html"
    broken = [f"{name}={value}" for name, value in parse(page).refs
              if is_relative(value) and local_target(value)
              and not (page.parent / local_target(value)).exists()]
    assert not broken, f"{page.name}: relative links that do not resolve in the HTML edition: {broken}"
    stale = [value for _, value in parse(page).refs
             if is_relative(value) and re.fullmatch(r"\d\d_[a-z0-9_]+\.ipynb", local_target(value))]
    assert not stale, f"{page.name}: links to notebooks instead of their pages: {stale}"


@pytest.mark.parametrize("i", range(len(PATHS)), ids=[p.name for p in PATHS])
def test_previous_next_and_contents_point_at_pages(site, i):
    page = site / f"{PATHS[i].stem}.html"
    anchors = parse(page).anchors

    def after(label: str) -> list[str]:
        return [href for text, href in anchors if text.rstrip().endswith(label)]

    previous, following = after("Previous:"), after("Next:")
    if i > 0:
        assert previous == [f"{PATHS[i - 1].stem}.html"], f"{page.name}: previous link {previous}"
    else:
        assert previous == []
    if i < len(PATHS) - 1:
        assert following == [f"{PATHS[i + 1].stem}.html"], f"{page.name}: next link {following}"
    else:
        assert following == []
    contents = f"{PATHS[0].stem}.html"
    assert any(href == contents for _, href in anchors), f"{page.name}: no link to {contents}"
    for href in previous + following:
        assert (site / href).is_file(), f"{page.name}: {href} does not exist"
