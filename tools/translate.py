#!/usr/bin/env python3
"""The Korean edition, generated from the English notebooks and gettext PO files, so that the two cannot drift.

    python tools/translate.py update   # refresh translations/ko/*.po from the English notebooks
    python tools/translate.py build    # write notebooks-ko/ (then `run_notebooks.py execute --korean` runs them)
    python tools/translate.py check    # exit 1 if a block has no current translation, or notebooks-ko/ is stale
    python tools/translate.py status [05 series]   # read-only: what is left to translate
    python tools/translate.py preview [05]         # read-only: the Korean notebook as text, as build makes it

One PO file per notebook (translations/ko/NN_name.po): one entry per Markdown block (text between blank lines)
and per code comment, its context the cell's id. translations/ko/series.po holds the templates of the lines that
tools/stamp.py writes (stamp.TEMPLATES: badge line, navigation, time markers; the setup cell's messages). `update` works as gettext's msgmerge:
a new block gets an empty entry; an edited block gets its old translation marked fuzzy, with the old English
kept as ``#| msgid``; a block that is gone becomes obsolete. A fuzzy or empty entry counts as untranslated, and
`check` (and the test suite) fails until a translator updates it and removes the fuzzy flag. The code itself is
never translated: only its comments (and the setup cell's messages).
"""

from __future__ import annotations

import argparse
import copy
import difflib
import io
import re
import sys
import tokenize
from pathlib import Path

import nbformat

import nbcommon
from nbcommon import CONTENTS_END, CONTENTS_START, SETUP_MARK, TIME_MARK, heading_slug, read, write

LANG = "ko"
PO_DIR = nbcommon.ROOT / "translations" / LANG
SERIES_PO = PO_DIR / "series.po"
GLOSSARY = PO_DIR / "glossary.md"   # a cell of the Korean 00 only: the terms, English and Korean
# check()'s messages: the package's own gettext catalog, which clonelab.i18n loads (the .mo, compiled by `build`)
EXERCISES = nbcommon.ROOT / "src" / "clonelab" / "exercises"
MESSAGES_PO = nbcommon.ROOT / "src" / "clonelab" / "locale" / LANG / "LC_MESSAGES" / "clonelab.po"
# strings in the exercise modules that are matched against, or compared, never shown: left out of the catalog
NOT_MESSAGES = {"leaf Variable", "modified by an inplace operation", "right gradient", "wrong gradient",
                "keeps x's values", "a view of x", "; y.sum().backward()"}
KO_NOTEBOOKS = nbcommon.KO_NOTEBOOKS
PO_HEADER = {"Project-Id-Version": "clonelab", "Language": LANG, "MIME-Version": "1.0",
             "Content-Type": "text/plain; charset=UTF-8", "Content-Transfer-Encoding": "8bit"}
FENCE = re.compile(r"^\s*(```|~~~)")
# a block with no words outside its HTML tags and link targets (</details>, a lone image link) is kept as it is
WORDS = re.compile(r"[A-Za-z]{2,}")


def _polib():
    try:
        import polib
    except ModuleNotFoundError:
        raise SystemExit("tools/translate.py needs polib: pip install -e '.[test]'") from None
    return polib


# --- what is translated ---------------------------------------------------------------------------------------

def blocks(text: str) -> list[str]:
    """Markdown split at blank lines, a fenced code block kept whole."""
    out, current, fenced = [], [], False
    for line in text.split("\n"):
        if FENCE.match(line):
            fenced = not fenced
        if not line.strip() and not fenced:
            if current:
                out.append("\n".join(current))
                current = []
            continue
        current.append(line)
    if current:
        out.append("\n".join(current))
    return out


def translatable(block: str) -> bool:
    bare = re.sub(r"<[^>]+>", "", block)
    bare = re.sub(r"\]\([^)]*\)", "]", bare)
    return bool(WORDS.search(bare))


def comments(source: str) -> list[tuple[int, int, str, str]]:
    """(line, column, prefix, text) of each comment that is prose: '#@title X' -> ('#@title ', 'X')."""
    found = []
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return found
    for tok in tokens:
        if tok.type != tokenize.COMMENT or tok.string.startswith(SETUP_MARK):
            continue
        m = re.match(r"(#@title\s+|#+\s*)(.*)$", tok.string)
        prefix, text = m.group(1), m.group(2).rstrip()
        if text and WORDS.search(text) and not re.match(r"(noqa|type:|pragma)\b", text):
            found.append((tok.start[0], tok.start[1], prefix, text))
    return found


def code_without_comments(source: str) -> str:
    """The code with its comments removed: what must be equal in the two languages."""
    lines = source.split("\n")
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return source
    for tok in tokens:   # every comment, in either language
        if tok.type == tokenize.COMMENT:
            row, col = tok.start
            lines[row - 1] = lines[row - 1][:col].rstrip()
    return "\n".join(lines)


def _strip_stamped(markdown: str) -> str:
    """Markdown without the lines that stamp.py writes (time markers, the contents table)."""
    text = TIME_MARK.sub("", markdown)
    return nbcommon.replace_between_markers(text, CONTENTS_START + CONTENTS_END)


def units(nb) -> list[tuple[str, str]]:
    """(context, English text) of everything a translator translates in ``nb``, in order, without repeats."""
    seen, out = set(), []
    for cell in nb.cells:
        if nbcommon.is_stamped(cell):
            continue
        ctx = cell.get("id")
        if cell.cell_type == "markdown":
            texts = [b for b in blocks(_strip_stamped(cell.source)) if translatable(b) and CONTENTS_START not in b]
        elif cell.cell_type == "code":
            texts = [text for _, _, _, text in comments(cell.source)]
        else:
            texts = []
        for text in texts:
            if (ctx, text) not in seen:
                seen.add((ctx, text))
                out.append((ctx, text))
    return out


def _is_code(text: str) -> bool:
    try:
        compile(text, "<message>", "exec")
    except (SyntaxError, ValueError):
        return False
    return True


def message_units() -> list[tuple[None, str]]:
    """What check() may print: the prose strings of the exercise modules (hints, answer forms, the templates given
    to ``_``), without docstrings, f-strings' pieces, code, and the module-level tables of code and options."""
    import ast
    found = []
    for path in sorted(EXERCISES.glob("*.py")):
        tree = ast.parse(path.read_text())
        skip = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and node.body and \
                    isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant):
                skip.add(id(node.body[0].value))            # a docstring
            if isinstance(node, ast.JoinedStr):
                skip.update(id(v) for v in node.values)     # pieces of an f-string (errors for the programmer)
        for node in tree.body:   # NAME = {...} at module level: code and option labels, the answers' vocabulary
            if isinstance(node, ast.Assign) and isinstance(node.value, (ast.Dict, ast.List)):
                skip.update(id(n) for n in ast.walk(node.value))
        marked = {id(node.args[0]) for node in ast.walk(tree) if isinstance(node, ast.Call)
                  and isinstance(node.func, ast.Name) and node.func.id == "_" and node.args
                  and isinstance(node.args[0], ast.Constant)}   # _("..."): a message, whatever it looks like
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
                text = node.value
                if id(node) in marked or (" " in text.strip() and re.search(r"[a-z]{2}", text)
                                          and not _is_code(text.strip()) and text not in NOT_MESSAGES):
                    found.append(text)
    return [(None, t) for t in dict.fromkeys(found)]


def compile_messages() -> bool:
    """Write the .mo beside MESSAGES_PO from its current translations; True if it changed."""
    polib = _polib()
    po = load(MESSAGES_PO)
    mo = polib.POFile(wrapwidth=0)
    mo.metadata = po.metadata
    for entry in po:
        if translated(entry):
            mo.append(polib.POEntry(msgid=entry.msgid, msgstr=entry.msgstr))
    target = MESSAGES_PO.with_suffix(".mo")
    before = target.read_bytes() if target.exists() else None
    mo.save_as_mofile(str(target))
    return target.read_bytes() != before


def stale_mo() -> bool:
    """Whether the committed .mo differs from what the .po compiles to."""
    target = MESSAGES_PO.with_suffix(".mo")
    if not target.exists():
        return True
    before = target.read_bytes()
    changed = compile_messages()
    if changed:
        target.write_bytes(before)
    return changed


# --- the PO files ---------------------------------------------------------------------------------------------

def po_path(notebook: Path) -> Path:
    return PO_DIR / f"{notebook.stem}.po"


def load(path: Path):
    polib = _polib()
    if path.exists():
        return polib.pofile(str(path), wrapwidth=0)
    po = polib.POFile(wrapwidth=0)
    po.metadata = dict(PO_HEADER)
    return po


def merge(po, wanted: list[tuple[str, str]], memory: dict[str, str]):
    """``po`` made to hold exactly ``wanted`` (context, msgid), in order, as msgmerge would."""
    polib = _polib()
    current = {(e.msgctxt, e.msgid): e for e in po if not e.obsolete}
    by_context: dict[str, list] = {}
    for entry in po:
        if not entry.obsolete:
            by_context.setdefault(entry.msgctxt, []).append(entry)
    used = {key for key in wanted if key in current}
    fresh = polib.POFile(wrapwidth=0)
    fresh.metadata = po.metadata or dict(PO_HEADER)
    for ctx, msgid in wanted:
        if (ctx, msgid) in current:
            fresh.append(current[(ctx, msgid)])
            continue
        entry = polib.POEntry(msgctxt=ctx, msgid=msgid, msgstr="")
        if memory.get(msgid):   # the same English already translated elsewhere: the same translation
            entry.msgstr = memory[msgid]
        else:   # an edited block: the old translation of the most similar unmatched entry of its cell, fuzzy
            candidates = [e for e in by_context.get(ctx, []) if (e.msgctxt, e.msgid) not in used and e.msgstr]
            old = max(candidates, key=lambda e: difflib.SequenceMatcher(None, e.msgid, msgid).ratio(), default=None)
            if old is not None and difflib.SequenceMatcher(None, old.msgid, msgid).ratio() >= 0.6:
                used.add((old.msgctxt, old.msgid))
                entry.msgstr, entry.previous_msgid = old.msgstr, old.msgid
                entry.flags.append("fuzzy")
        fresh.append(entry)
    for entry in po:   # what no longer exists in English stays, as an obsolete entry, for the record
        if (entry.msgctxt, entry.msgid) not in {(e.msgctxt, e.msgid) for e in fresh} and entry.msgstr:
            entry = copy.copy(entry)   # ``po`` itself is left as it was
            entry.obsolete = True
            fresh.append(entry)
    return fresh


def translated(entry) -> bool:
    return bool(entry.msgstr) and "fuzzy" not in entry.flags and not entry.obsolete


def catalog(po) -> dict[tuple[str, str], str]:
    return {(e.msgctxt, e.msgid): e.msgstr for e in po if translated(e)}


# --- the stamped lines: series.po ----------------------------------------------------------------------------

# The setup cell's messages, as stamp.py writes them (the literal text in its source, and what a translation of
# it replaces): a stamp.py that words them otherwise fails `build` loudly instead of leaving them English.
SETUP_MESSAGES = {
    'f"pip could not install {source}:\\n{pip.stdout}{pip.stderr}"': "pip could not install {source}:",
    '"clonelab is not installed in this kernel: in the repository, run `make lab` "\n'
    '                              "(or `pip install -e .`), then restart the kernel"':
        "clonelab is not installed in this kernel: in the repository, run `make lab` (or `pip install -e .`), "
        "then restart the kernel",
}


def setup_units() -> list[tuple[str, str]]:
    """The setup cell's comments and messages (context: setup)."""
    found = [text for _, _, _, text in comments(_stamp().setup_source())] + list(SETUP_MESSAGES.values())
    return [("setup", t) for t in dict.fromkeys(found)]


def _stamp():
    import stamp
    return stamp


def series_units() -> list[tuple[str, str]]:
    import book   # the reading edition's index page
    site = [("site", text) for text in (book.TITLE, book.INDEX_TEXT, book.TOC_CAPTION)]
    return [(what, msgid) for msgid, what in _stamp().TEMPLATES.items()] + setup_units() + site


# --- building a Korean notebook -------------------------------------------------------------------------------

class Translator:
    def __init__(self):
        self.series = catalog(load(SERIES_PO))
        self.missing: list[str] = []

    def s(self, context: str, msgid: str, /, **fields) -> str:
        text = self.series.get((context, msgid))
        if text is None:
            self.missing.append(f"series.po: {msgid!r}")
            text = msgid
        return text.format(**fields) if fields else text

    def words(self, template: str) -> str:
        """A template of stamp.py's, translated: the ``words`` that stamp's line makers take."""
        return self.s(_stamp().TEMPLATES[template], template)

    def t(self, book: dict, where: str, ctx: str, msgid: str) -> str:
        text = book.get((ctx, msgid))
        if text is None:
            self.missing.append(f"{where}: [{ctx}] {msgid[:60]!r}")
            return msgid
        return text

    def markdown(self, book: dict, where: str, cell) -> str:
        """The cell's Markdown, block by block, without its time markers (build_one puts Korean ones back)."""
        out = []
        for block in blocks(_strip_stamped(cell.source)):
            if CONTENTS_START in block:
                out.append(CONTENTS_START + "\n\n" + CONTENTS_END)
            elif translatable(block):
                out.append(self.t(book, where, cell.get("id"), block))
            else:
                out.append(block)
        return "\n\n".join(out)

    def code(self, book: dict, where: str, cell) -> str:
        lines = cell.source.split("\n")
        for row, col, prefix, text in reversed(comments(cell.source)):
            lines[row - 1] = lines[row - 1][:col] + prefix + self.t(book, where, cell.get("id"), text)
        return "\n".join(lines)

    def setup(self) -> str:
        source = _stamp().setup_source()
        lines = source.split("\n")
        for row, col, prefix, text in reversed(comments(source)):
            lines[row - 1] = lines[row - 1][:col] + prefix + self.s("setup", text)
        source = "\n".join(lines)
        for literal, message in SETUP_MESSAGES.items():
            if literal not in source:
                raise SystemExit(f"tools/stamp.py's setup cell no longer has {literal}: update SETUP_MESSAGES")
            korean = self.s("setup", message).replace('"', "'")
            if literal.startswith("f"):   # the f-string keeps its fields after the message
                korean_literal = 'f"' + korean + literal[len('f"' + message):]
            else:
                korean_literal = '"' + korean + '"'
            source = source.replace(literal, korean_literal)
        source = source.replace("`make lab`", "`make lab-ko`")   # the command that opens the Korean notebooks
        # the one line of code the Korean edition adds: check()'s hints in Korean
        return source.replace("\nclonelab.show_versions(", f'\nclonelab.set_language("{LANG}")\nclonelab.show_versions(')


def build_one(tr: Translator, path: Path, index: int, paths: list[Path], titles_ko: list[str], anchors: dict):
    """The Korean notebook of ``path``: stamp.py's lines made with translated templates, the rest translated."""
    stamp = _stamp()
    nb = read(path)
    book = catalog(load(po_path(path)))
    where = po_path(path).relative_to(nbcommon.ROOT).as_posix()
    ko = copy.deepcopy(nb)
    for cell in ko.cells:
        if cell.get("id") == "clonelab-header":
            cell.source = stamp.header_source(index, len(paths), path.name, KO_NOTEBOOKS.name, tr.words)
        elif cell.get("id") == "clonelab-setup":
            cell.source = tr.setup()
        elif cell.get("id") == "clonelab-nav":
            cell.source = stamp.nav_source(paths, titles_ko, index, tr.words)
        elif cell.cell_type == "markdown":
            cell.source = tr.markdown(book, where, cell)
            if CONTENTS_START in cell.source:
                table = stamp.contents_table(paths, titles_ko, folder=KO_NOTEBOOKS.name, words=tr.words)
                cell.source = nbcommon.replace_between_markers(cell.source, table)
            cell.source = relink(cell.source, anchors)
        elif cell.cell_type == "code":
            cell.source = tr.code(book, where, cell)
    # the time markers: their minutes are the English notebook's, their words Korean
    stamp.put_time_markers(ko.cells, stamp.time_markers(nb, tr.words))
    if index == 0 and GLOSSARY.exists():   # the Korean edition's own cell: English <-> Korean terms, before the nav
        glossary = nbformat.v4.new_markdown_cell(GLOSSARY.read_text().strip())
        glossary["id"] = f"clonelab-{LANG}-glossary"
        ko.cells.insert(len(ko.cells) - 1 if ko.cells[-1].get("id") == "clonelab-nav" else len(ko.cells), glossary)
    ko.metadata["clonelab"] = {"language": LANG, "generated_from": f"notebooks/{path.name}",
                               "note": "generated by tools/translate.py: edit the English notebook and "
                                       f"translations/{LANG}/{po_path(path).name}, not this file"}
    return ko


LINK = re.compile(r"(\]\()([^)\s]+)(\))")


def relink(markdown: str, anchors: dict[str, dict[str, str]]) -> str:
    """Colab links to the Korean copies; #anchors to the Korean headings of the same sections."""
    markdown = markdown.replace(nbcommon.colab_url(""), nbcommon.colab_url("", KO_NOTEBOOKS.name))

    def one(m):
        target = m.group(2)
        file, sep, anchor = target.partition("#")
        if sep and (file == "" or re.fullmatch(r"\d\d_[a-z0-9_]+\.ipynb", file)):
            mapped = anchors.get(file or "<self>", {}).get(anchor)
            if mapped:
                target = f"{file}#{mapped}"
        return m.group(1) + target + m.group(3)
    return LINK.sub(one, markdown)


def heading_map(nb, book: dict) -> dict[str, str]:
    """English anchor -> Korean anchor, for each heading of ``nb`` that is translated."""
    mapping = {}
    for cell in nb.cells:
        if cell.cell_type != "markdown" or nbcommon.is_stamped(cell):
            continue
        for block in blocks(_strip_stamped(cell.source)):
            korean = book.get((cell.get("id"), block))
            english_lines, korean_lines = block.split("\n"), (korean or "").split("\n")
            if korean and re.match(r"#{1,3} ", english_lines[0]) and re.match(r"#{1,3} ", korean_lines[0]):
                mapping[heading_slug(english_lines[0])] = heading_slug(korean_lines[0])
    return mapping


def build() -> tuple[dict[Path, object], list[str]]:
    """The Korean notebooks, by path (not written), and what had no translation."""
    tr = Translator()
    paths = nbcommon.notebook_paths()
    anchors, titles = {}, []
    for path in paths:
        nb, book = read(path), catalog(load(po_path(path)))
        anchors[path.name] = heading_map(nb, book)
        first = nb.cells[0].source.split("\n")[0]
        korean_first = book.get((nb.cells[0].get("id"), blocks(nb.cells[0].source)[0]), first).split("\n")[0]
        titles.append(korean_first[2:].strip())
    result = {}
    for i, path in enumerate(paths):
        local = dict(anchors)
        local["<self>"] = anchors[path.name]
        result[KO_NOTEBOOKS / path.name] = build_one(tr, path, i, paths, titles, local)
    return result, tr.missing


def _keep_outputs(new, old) -> None:
    """Outputs of the committed Korean notebook stay with each code cell whose source is unchanged."""
    before = {c.get("id"): c for c in old.cells if c.cell_type == "code"}
    for cell in new.cells:
        if cell.cell_type == "code":
            previous = before.get(cell.get("id"))
            if previous is not None and previous.source == cell.source:
                cell.outputs, cell.execution_count = previous.outputs, previous.execution_count
            else:
                cell.outputs, cell.execution_count = [], None


def sources(nb) -> list[tuple]:
    """What the generated and the committed Korean notebook must agree on (outputs aside)."""
    return [(c.cell_type, c.get("id"), c.source, sorted(c.metadata.get("tags", []))) for c in nb.cells]


# --- commands -------------------------------------------------------------------------------------------------

def _books() -> list[tuple[Path, list]]:
    """Each PO file, with what it must translate."""
    return ([(po_path(p), units(read(p))) for p in nbcommon.notebook_paths()] + [(SERIES_PO, series_units())]
            + [(MESSAGES_PO, message_units())])


def update() -> int:
    PO_DIR.mkdir(parents=True, exist_ok=True)
    books = _books()
    MESSAGES_PO.parent.mkdir(parents=True, exist_ok=True)
    memory = {}
    for path, _ in books:
        for entry in load(path):
            if translated(entry):
                memory.setdefault(entry.msgid, entry.msgstr)
    changed = 0
    for path, wanted in books:
        po = merge(load(path), wanted, memory)
        text = po.__unicode__() if hasattr(po, "__unicode__") else str(po)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            changed += 1
    print(f"translate update: {changed} PO file(s) changed in {PO_DIR.relative_to(nbcommon.ROOT)}/")
    return 0


def untranslated() -> list[str]:
    """Every entry, by file, that has no current translation (empty, fuzzy, or missing)."""
    problems = []
    for path, wanted in _books():
        po = load(path)
        have = catalog(po)
        where = path.relative_to(nbcommon.ROOT).as_posix()
        for ctx, msgid in wanted:
            if (ctx, msgid) not in have:
                entry = po.find(msgid, msgctxt=ctx)
                why = "fuzzy: the English changed" if entry is not None and "fuzzy" in entry.flags else "untranslated"
                problems.append(f"{where}: [{ctx}] {why}: {msgid[:70]!r}")
    return problems


def status(names: list[str]) -> int:
    """Read-only: what is left to translate, per file (or in the files named)."""
    problems = untranslated()
    if names:
        problems = [p for p in problems if any(n in p.split(":")[0] for n in names)]
    for p in problems:
        print(p)
    print(f"translate status: {len(problems)} entr{'y' if len(problems) == 1 else 'ies'} without a current translation")
    return 1 if problems else 0


def preview(names: list[str]) -> int:
    """Read-only: the Korean notebooks named, as `build` would make them, printed as text (Markdown and code)."""
    result, _ = build()
    for path, nb in result.items():
        if names and not any(path.name.startswith(n) for n in names):
            continue
        print(f"==== {path.name}")
        for cell in nb.cells:
            fence = "```python\n{}\n```" if cell.cell_type == "code" else "{}"
            print(fence.format(cell.source), end="\n\n")
    return 0


def write_all() -> int:
    result, missing = build()
    compile_messages()
    KO_NOTEBOOKS.mkdir(exist_ok=True)
    changed = 0
    for path, nb in result.items():
        if path.exists():
            _keep_outputs(nb, read(path))
        else:
            _keep_outputs(nb, nbformat.v4.new_notebook())
        changed += write(nb, path)
    for path in KO_NOTEBOOKS.glob("*.ipynb"):
        if path not in result:
            path.unlink()
            changed += 1
    print(f"translate build: {changed} notebook(s) changed in {KO_NOTEBOOKS.name}/; {len(missing)} untranslated")
    return 0


def check() -> int:
    problems = untranslated()
    if stale_mo():
        problems.append(f"{MESSAGES_PO.with_suffix('.mo').relative_to(nbcommon.ROOT)} is not what "
                        f"{MESSAGES_PO.name} compiles to: run `python tools/translate.py build`")
    result, _ = build()
    for path, nb in result.items():
        if not path.exists():
            problems.append(f"{path.relative_to(nbcommon.ROOT)} is missing: run `python tools/translate.py build`")
        elif sources(read(path)) != sources(nb):
            problems.append(f"{path.relative_to(nbcommon.ROOT)} is not what tools/translate.py build writes")
    for p in problems:
        print(p)
    print(f"translate check: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["update", "build", "check", "status", "preview"])
    parser.add_argument("names", nargs="*", help="status and preview only: which files (e.g. 05 series)")
    args = parser.parse_args()
    if args.command in ("status", "preview"):
        sys.exit({"status": status, "preview": preview}[args.command](args.names))
    sys.exit({"update": update, "build": write_all, "check": check}[args.command]())
