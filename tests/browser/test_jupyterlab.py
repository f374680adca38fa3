"""Every notebook, opened in a real JupyterLab as a reader would, after `git clone`.

Three of them (RUN_IN_LAB: the environment check, the Graphviz drawings, the training with its
progress bars) are cleared and run with Run > Run All Cells; the kernel and the Python packages are
the ones `make test` runs every notebook with already, so running the other nine again here would
test the same thing twice. The others are checked as committed, which is how a reader first sees them.
Collapsed inputs (the solutions) are expanded first, since JupyterLab shows no prompt for them.
Checks what the reader sees: every code cell has an execution count (no [*]), no traceback, the
figures rendered, the Colab badge and the previous/contents/next links. A full-page screenshot of
each notebook lands in screenshots/NAME.png.

    make test-browser        # or: python -m pytest -m browser tests/browser
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from urllib.parse import unquote

import nbformat
import pytest

from conftest import notebook_paths

pytestmark = pytest.mark.browser

PATHS = notebook_paths()
RUN_IN_LAB = ("00", "06", "10")  # run here; the rest are read as committed (see above)
LOAD_TIMEOUT_MS = 90_000  # JupyterLab's page, and a kernel started
RUN_TIMEOUT_MS = 240_000  # one notebook's cells
MAX_SCREENSHOT_HEIGHT = 32_000  # px; longer notebooks are cut there

# The DOM of JupyterLab 4 these tests rely on
PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"
KERNEL_STATUS = ".jp-StatusBar-TextItem[title^='Change kernel']"  # "Python 3 (ipykernel) | Idle"
MENU = ".lm-MenuBar-item:has(.lm-MenuBar-itemLabel:text-is('{}'))"
MENU_COMMAND = ".lm-Menu-item[data-command='{}']"
SCROLLER = f"{PANEL} .jp-WindowedPanel-outer"
DIALOG_ACCEPT = ".jp-Dialog .jp-Dialog-button.jp-mod-accept"
LEFT_SIDEBAR_OPEN_TAB = ".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current"

KERNEL_IDLE_JS = f"""() => {{
    const status = document.querySelector("{KERNEL_STATUS}");
    return !!status && !status.textContent.startsWith('No Kernel') && /\\|\\s*Idle$/.test(status.textContent.trim());
}}"""

PROMPTS_JS = f"""() => Array.from(document.querySelectorAll("{PANEL} .jp-Notebook .jp-CodeCell"))
    .map(cell => (cell.querySelector('.jp-InputArea-prompt') || {{textContent: ''}}).textContent.trim())"""

# JupyterLab 4 shows an error as stderr text (IPython's traceback); vnd.jupyter.error, in case
ERROR_OUTPUTS = (f"{PANEL} .jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr'], "
                 f"{PANEL} .jp-OutputArea-output[data-mime-type='application/vnd.jupyter.error']")

# done when nothing is queued or running ([*]), and either every non-empty code cell has a
# count, or a traceback is shown (Run All stops at the first error and unqueues the rest),
# or the kernel died
RUN_DONE_JS = f"""(needsCount) => {{
    const status = (document.querySelector("{KERNEL_STATUS}") || {{textContent: ''}}).textContent;
    if (/\\|\\s*(Dead|Restarting|Autorestarting)/i.test(status)) return true;
    const prompts = ({PROMPTS_JS})();
    if (prompts.length !== needsCount.length || prompts.some(p => p.includes('*'))) return false;
    const failed = Array.from(document.querySelectorAll("{ERROR_OUTPUTS}"))
        .some(o => o.textContent.includes('Traceback'));
    return failed || prompts.every((p, i) => !needsCount[i] || /\\[\\d+\\]/.test(p));
}}"""

IMAGES_SETTLED_JS = f"""() => Array.from(document.querySelectorAll("{PANEL} .jp-OutputArea-output img"))
    .every(img => img.complete)"""

# one record per cell, in notebook order
CELLS_JS = f"""() => Array.from(document.querySelectorAll("{PANEL} .jp-Notebook .jp-Cell")).map(cell => ({{
    type: cell.classList.contains('jp-CodeCell') ? 'code'
        : cell.classList.contains('jp-MarkdownCell') ? 'markdown' : 'raw',
    prompt: (cell.querySelector('.jp-InputArea-prompt') || {{textContent: ''}}).textContent.trim(),
    outputs: Array.from(cell.querySelectorAll('.jp-OutputArea-output')).map(o => ({{
        mime: o.getAttribute('data-mime-type') || '',
        text: o.textContent.slice(0, 4000),
    }})),
    figures: Array.from(cell.querySelectorAll('.jp-OutputArea-output img, .jp-OutputArea-output svg'))
        .filter(e => e.tagName.toLowerCase() !== 'img' || (e.complete && e.naturalWidth > 0)).length,
    links: Array.from(cell.querySelectorAll('.jp-MarkdownOutput a')).map(a => ({{
        href: a.getAttribute('href') || '', text: a.textContent.trim(),
        images: Array.from(a.querySelectorAll('img')).map(img => img.getAttribute('alt') || ''),
    }})),
}}))"""


def _mimes(cell) -> set[str]:
    return {m for o in cell.get("outputs", []) for m in o.get("data", {})}


def _click_menu(page, menu: str, command: str) -> None:
    page.locator(MENU.format(menu)).click()
    item = page.locator(MENU_COMMAND.format(command))
    item.wait_for(state="visible")
    item.click()


def _wait_for_kernel(page, timeout_ms: int) -> None:
    """Until the notebook's kernel is started and idle; accepts a kernel chooser if one comes up
    (a notebook whose kernelspec names a kernel this machine does not have)."""
    deadline = time.monotonic() + timeout_ms / 1000
    while not page.evaluate(KERNEL_IDLE_JS):
        accept = page.locator(DIALOG_ACCEPT)
        if accept.count():
            accept.first.click()
        if time.monotonic() > deadline:
            status = page.locator(KERNEL_STATUS)
            raise TimeoutError(f"no idle kernel after {timeout_ms / 1000:.0f} s; status bar says "
                               f"{status.first.text_content() if status.count() else 'nothing'}")
        page.wait_for_timeout(200)


def _screenshot(page, path: Path) -> None:
    """The whole notebook: make the window as tall as the notebook, then shoot the page."""
    open_sidebar = page.locator(LEFT_SIDEBAR_OPEN_TAB)
    if open_sidebar.count():  # the file browser: collapse it, the notebook gets the width
        open_sidebar.first.click()
    scroll, client = page.evaluate(f"""() => {{
        const s = document.querySelector("{SCROLLER}");
        return s ? [s.scrollHeight, s.clientHeight] : [0, 0];
    }}""")
    height = min(page.viewport_size["height"] + max(0, scroll - client), MAX_SCREENSHOT_HEIGHT)
    page.set_viewport_size({"width": page.viewport_size["width"], "height": height})
    try:  # JupyterLab lays itself out again after the resize
        page.wait_for_function(f"""() => {{
            const s = document.querySelector("{SCROLLER}");
            return !s || s.clientHeight >= Math.min(s.scrollHeight, {MAX_SCREENSHOT_HEIGHT}) - 40;
        }}""", timeout=5_000)
    except Exception:  # a screenshot of what there is, rather than none
        pass
    page.screenshot(path=str(path), full_page=True)


def _nav_targets(i: int) -> dict[str, str]:
    targets = {"contents": PATHS[0].name}
    if i > 0:
        targets["previous"] = PATHS[i - 1].name
    if i < len(PATHS) - 1:
        targets["next"] = PATHS[i + 1].name
    return targets


def _points_at(href: str, name: str) -> bool:
    # JupyterLab may resolve a relative link against the notebook's folder
    return re.search(rf"(^|/){re.escape(name)}([?#]|$)", unquote(href)) is not None


@pytest.mark.parametrize("i", range(len(PATHS)), ids=[p.name for p in PATHS])
def test_notebook_runs_in_jupyterlab(lab, page, screenshots, i):
    path = PATHS[i]
    committed = nbformat.read(lab.root / "notebooks" / path.name, as_version=4)
    code = [c for c in committed.cells if c.cell_type == "code"]
    needs_count = [bool(c.source.strip()) for c in code]  # JupyterLab does not number empty cells

    try:
        page.goto(lab.notebook_url(path.name, workspace=f"test-{path.stem}"))
        page.locator(PANEL).wait_for(state="visible", timeout=LOAD_TIMEOUT_MS)
        _wait_for_kernel(page, LOAD_TIMEOUT_MS)

        # a collapsed input (the solutions) shows no prompt, so no [*] or count: expand them all
        _click_menu(page, "View", "notebook:show-all-cell-code")
        # and the collapsed outputs (the Deeper notes' cells), whose committed figures are checked below
        _click_menu(page, "View", "notebook:show-all-cell-outputs")
        if path.name[:2] in RUN_IN_LAB:
            # start from blank prompts, so that the counts and figures seen below are this run's
            _click_menu(page, "Edit", "editmenu:clear-all")
            page.wait_for_function(f"() => ({PROMPTS_JS})().every(p => !/\\d/.test(p))", timeout=10_000)
            _click_menu(page, "Run", "runmenu:run-all")
            page.wait_for_function(RUN_DONE_JS, arg=needs_count, timeout=RUN_TIMEOUT_MS)
            page.wait_for_function(KERNEL_IDLE_JS, timeout=RUN_TIMEOUT_MS)
        try:
            page.wait_for_function(IMAGES_SETTLED_JS, timeout=10_000)
        except Exception:
            pass  # reported below as missing figures
        cells = page.evaluate(CELLS_JS)
        kernel = page.locator(KERNEL_STATUS).first.text_content()
    finally:  # a screenshot even when something above failed; and the kernel goes
        try:
            _screenshot(page, screenshots / f"{path.stem}.png")
        finally:
            lab.shutdown_kernels_of(path.name)

    name = path.name
    page_errors = f"\n(page errors: {page.problems})" if page.problems else ""
    page_errors += f"\n(kernel: {kernel}; see screenshots/{path.stem}.png)"
    assert len(cells) == len(committed.cells), \
        f"{name}: JupyterLab shows {len(cells)} cells, the notebook has {len(committed.cells)}"
    shown_code = [c for c in cells if c["type"] == "code"]

    tracebacks = [(k, o["text"][-1500:]) for k, c in enumerate(shown_code) for o in c["outputs"]
                  if o["mime"] == "application/vnd.jupyter.error"
                  or (o["mime"] == "application/vnd.jupyter.stderr" and "Traceback" in o["text"])]
    assert not tracebacks, f"{name}: tracebacks shown (code cell, 0-based):\n" + \
        "\n\n".join(f"[{k}] {text}" for k, text in tracebacks) + page_errors

    not_run = [k for k, c in enumerate(shown_code) if needs_count[k] and not re.fullmatch(r"\[\d+\]:?", c["prompt"])]
    assert not not_run, f"{name}: code cells {not_run} (0-based) have no execution count: " \
        f"{[shown_code[k]['prompt'] for k in not_run]}{page_errors}"

    figure_cells = [k for k, c in enumerate(code) if _mimes(c) & {"image/png", "image/svg+xml"}]
    if figure_cells:
        assert sum(c["figures"] for c in shown_code) >= 1, f"{name}: no figure rendered"
        blank = [k for k in figure_cells if not shown_code[k]["figures"]]
        assert not blank, f"{name}: code cells {blank} (0-based) showed a figure when committed, none now"

    links = [link for c in cells if c["type"] == "markdown" for link in c["links"]]
    badges = [link for link in links if "Open In Colab" in link["images"]]
    assert badges, f"{name}: no 'Open In Colab' badge"
    assert any("colab.research.google.com/github/" in b["href"] and b["href"].endswith(name) for b in badges), \
        f"{name}: the Colab badge does not open this notebook: {[b['href'] for b in badges]}"

    nav = cells[-1]["links"]
    for role, target in _nav_targets(i).items():
        assert any(_points_at(link["href"], target) for link in nav), \
            f"{name}: no {role} link to {target} in the navigation cell: {[link['href'] for link in nav]}"
    series = {p.name for p in PATHS}
    extra = [link["href"] for link in nav if any(_points_at(link["href"], n) for n in series)
             and not any(_points_at(link["href"], t) for t in _nav_targets(i).values())]
    assert not extra, f"{name}: unexpected links in the navigation cell: {extra}"
