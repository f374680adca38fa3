"""Search in the Korean reading edition. Sphinx ships no Korean search language, and its default splits at white
space, so "텐서는" and "텐서를" would be indexed as two words and a search for "텐서" would find neither. This
language strips a trailing particle (조사) from a Hangul word, in Python when the index is built and in the same
way, in JavaScript, on the word a reader types."""

from __future__ import annotations

import re

from sphinx.search import SearchLanguage

# longest first, so that "에서는" is stripped whole and not as "는"
PARTICLES = sorted(["은", "는", "이", "가", "을", "를", "의", "에", "와", "과", "도", "로", "으로", "에서", "에게",
                    "까지", "부터", "처럼", "보다", "만", "나", "이나", "마다", "들", "인", "이지", "이며", "이고",
                    "이란", "란", "이라는", "라는", "라면", "이라면", "입니다", "이다", "이에요", "예요"],
                   key=len, reverse=True)
HANGUL = "\uac00-\ud7a3"


def stem(word: str) -> str:
    """The word without its trailing particles ("텐서에도" -> "텐서"), as long as a syllable is left before them."""
    if not re.fullmatch(f"[{HANGUL}]+", word):
        return word
    stripped = True
    while stripped:
        stripped = False
        for particle in PARTICLES:
            if word.endswith(particle) and len(word) > len(particle):
                word, stripped = word[: -len(particle)], True
                break
    return word


JS_STEMMER = """
var Stemmer = function () {
  const particles = %s;
  this.stemWord = function (w) {
    if (!/^[\\uac00-\\ud7a3]+$/.test(w)) return w;
    let stripped = true;
    while (stripped) {
      stripped = false;
      for (const p of particles) {
        if (w.endsWith(p) && w.length > p.length) {
          w = w.slice(0, w.length - p.length);
          stripped = true;
          break;
        }
      }
    }
    return w;
  };
};
""" % ("[" + ", ".join(f'"{p}"' for p in PARTICLES) + "]")


class SearchKorean(SearchLanguage):
    lang = "ko"
    language_name = "Korean"
    js_stemmer_code = JS_STEMMER

    def stem(self, word: str) -> str:
        return stem(word)
