"""Sphinx configuration of the reading edition (`make html`, tools/book.py): the executed notebooks as a book.

Nothing is executed: MyST-NB shows the outputs committed in the notebooks. The theme and everything it needs
come from pip packages, so the site builds without a network.
"""

project = "clonelab: Clone or alias?"
author = "the clonelab authors"
root_doc = "index"
extensions = ["myst_nb"]
nb_execution_mode = "off"          # the committed outputs are the outputs
nb_merge_streams = True
myst_heading_anchors = 3           # [text](07_measuring_memory.ipynb#a-heading) resolves
exclude_patterns = ["_build", "**.ipynb_checkpoints"]
html_theme = "sphinx_book_theme"
html_title = "Clone or alias?"
html_theme_options = {
    "show_toc_level": 2,
    "home_page_in_toc": True,
    "use_download_button": True,   # the .ipynb itself, to run it
}
html_last_updated_fmt = None
suppress_warnings = ["mystnb.unknown_mime_type"]

# The Korean edition (tools/book.py --korean builds it with -D language=ko): Sphinx has no Korean search language
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sphinx.search import languages  # noqa: E402

from korean_search import SearchKorean  # noqa: E402

languages["ko"] = SearchKorean
