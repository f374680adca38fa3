"""The language of what clonelab prints to a learner (``check()``'s verdicts and hints): English, or Korean.

It is Python's standard gettext: ``locale/<lang>/LC_MESSAGES/clonelab.mo`` next to this file, compiled from the
``.po`` beside it (``tools/translate.py`` extracts the messages, merges the catalog and compiles it). Choose the
language with :func:`set_language` (the Korean notebooks' setup cell does), or with the environment variable
``CLONELAB_LANG`` before clonelab is imported. A message without a translation prints in English.

>>> set_language("en"); gettext("correct")
'correct'
"""

from __future__ import annotations

import gettext as _gettext
import os
from pathlib import Path

DOMAIN = "clonelab"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"
LANGUAGES = ("en", "ko")

_catalog: _gettext.NullTranslations = _gettext.NullTranslations()
_language = "en"


def set_language(language: str) -> None:
    """Print clonelab's messages in ``language``: "en" (the default) or "ko".

    >>> from clonelab import check
    >>> set_language("ko"); _ = check("demo.1", 4); set_language("en")
    ✓ demo.1: 정답입니다.
    """
    global _catalog, _language
    if language not in LANGUAGES:
        raise ValueError(f"language must be one of {', '.join(map(repr, LANGUAGES))}, got {language!r}")
    _catalog = (_gettext.NullTranslations() if language == "en" else
                _gettext.translation(DOMAIN, localedir=str(LOCALE_DIR), languages=[language]))
    _language = language


def language() -> str:
    """The language set now: "en" or "ko"."""
    return _language


def gettext(message: str) -> str:
    """``message`` in the language set now (itself when it has no translation)."""
    return _catalog.gettext(message)


if os.environ.get("CLONELAB_LANG"):
    set_language(os.environ["CLONELAB_LANG"])
