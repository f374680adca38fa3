#!/usr/bin/env python3
"""The workshop kit's generated parts, made from the notebooks so that they cannot drift from them.

    python tools/workshop.py      # (also run by `make stamp`) writes, when changed:

- the summary block at the top of each page of workshop/notes/ (the pages' other sections are written by hand);
- workshop/answers.md, the answer key: every exercise and quiz question, its solution code, and the answer
  written out, taken from the executed instructor notebooks; then the exit ticket's answers;
- workshop/exit_ticket.md (and exit_ticket_half_day.md, its first questions), from EXIT_TICKET below; each answer there is checked by running PyTorch
  (tests/test_workshop.py);
- workshop/student_links.svg, a QR code of the student copies' address (only when segno is installed).

Run `python tools/stamp.py` and `python tools/run_notebooks.py execute` first: the key reads the notebooks' committed outputs.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import nbcommon
import reading_time

WORKSHOP = nbcommon.ROOT / "workshop"
NOTES = WORKSHOP / "notes"
ANSWERS = WORKSHOP / "answers.md"
EXIT = WORKSHOP / "exit_ticket.md"
EXIT_HALF = WORKSHOP / "exit_ticket_half_day.md"
QR = WORKSHOP / "student_links.svg"
SUMMARY_START = "<!-- clonelab:notes-summary (made by tools/workshop.py from the notebook: do not edit by hand) -->"
SUMMARY_END = "<!-- /clonelab:notes-summary -->"
CHECK_CALL = re.compile(r"""\bcheck\(\s*["']([^"']+)["']\s*,\s*(\w+)\s*\)""")
TASK_START = re.compile(r"^(###? (Exercise|Question) |\*\*Exercise )", re.M)
ANSWER_LINE = re.compile(r"^answer = (.+)$", re.M)


# --- the exercises and quiz questions, read from the notebooks ------------------------------------------------


@dataclass
class Solution:
    exercise_id: str
    notebook: str     # file name in notebooks/
    task: str         # the task as the notebook states it (markdown)
    code: str         # the solution cell
    output: str       # what the solution cell printed
    kind: str         # "value" (a literal answer) or "function" (the answer is the code)
    value: Any = None

    @property
    def shown(self) -> str:
        return _show(self.value) if self.kind == "value" else "the function in the solution code"


def _show(value: Any) -> str:
    """repr, with sets sorted, so that the key is the same on every run (string hashes are salted)."""
    if isinstance(value, (set, frozenset)):
        return "{" + ", ".join(sorted(_show(v) for v in value)) + "}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_show(k)}: {_show(v)}" for k, v in value.items()) + "}"
    if isinstance(value, tuple):
        return "(" + ", ".join(_show(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, list):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    return repr(value)


def _literal(text: str) -> tuple[bool, Any]:
    try:
        return True, ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return False, None


def _answer_of(code: str, name: str, output: str, where: str) -> tuple[str, Any]:
    """("value", v) for a literal answer or one the cell printed as ``answer = <repr>``; ("function", None)."""
    tree = ast.parse(code)
    functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    if name in functions:
        return "function", None
    assigned = [n.value for n in tree.body if isinstance(n, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)]
    if assigned:
        last = assigned[-1]
        if isinstance(last, ast.Name) and last.id in functions:
            return "function", None
        ok, value = _literal(ast.unparse(last))
        if ok:
            return "value", value
    printed = ANSWER_LINE.findall(output)
    if printed:
        ok, value = _literal(printed[-1])
        if ok:
            return "value", value
    raise SystemExit(f"{where}: the solution computes its answer but does not show it; "
                     "add print(f\"answer = {answer!r}\") so that the answer key can write it out")


def _task_before(cells: list, index: int) -> str:
    for cell in reversed(cells[:index]):
        if cell.cell_type == "markdown":
            match = TASK_START.search(cell.source)
            if match:
                return nbcommon.TIME_MARK.sub("", cell.source[match.start():]).strip()
    return ""


def solutions(paths: list[Path] | None = None) -> list[Solution]:
    """Every solution cell of the notebooks, in order, with its answer."""
    found = []
    for path in paths if paths is not None else nbcommon.notebook_paths():
        nb = nbcommon.read(path)
        for i, cell in enumerate(nb.cells):
            if nbcommon.SOLUTION_TAG not in cell.metadata.get("tags", []):
                continue
            call = CHECK_CALL.search(cell.source)
            if call is None:
                raise SystemExit(f"{path.name}: a solution cell without check(\"<id>\", <answer>)")
            output = "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")
            kind, value = _answer_of(cell.source, call.group(2), output, f"{path.name}, {call.group(1)}")
            found.append(Solution(call.group(1), path.name, _task_before(nb.cells, i), cell.source.strip(),
                                  output.strip(), kind, value))
    return found


def _in_workshop(markdown: str) -> str:
    """Links between notebooks, written relative to notebooks/, made relative to workshop/."""
    return re.sub(r"\]\((\d\d_[a-z0-9_]+\.ipynb)", r"](../notebooks/\1", markdown)


def _demote(markdown: str) -> str:
    return re.sub(r"^#{2,3} (.+)$", r"**\1**", markdown, flags=re.M)


# --- the exit ticket: five questions on paper, each answer checked by running PyTorch --------------------------


@dataclass
class Question:
    title: str
    notebooks: str
    text: str
    answer: str                     # as the key writes it
    expected: Any                   # what truth() must return (tests/test_workshop.py)
    truth: Callable[[], Any]


def _q1_truth():
    import torch

    x = torch.ones(3)
    y = x
    y *= 3
    y = y + 1
    y[1] = 0
    return x.tolist(), x._version


def _q2_truth():
    import torch

    outcomes = {}
    for line in ("y.add_(1)", "y.data.add_(1)", "y = y + 1"):
        x = torch.linspace(-1, 1, 5, requires_grad=True)
        y = x.exp()
        if line == "y.add_(1)":
            y.add_(1)
        elif line == "y.data.add_(1)":
            y.data.add_(1)
        else:
            y = y + 1
        try:
            y.sum().backward()
        except RuntimeError:
            outcomes[line] = "error"
            continue
        right = torch.allclose(x.grad, x.detach().exp())
        outcomes[line] = "right gradient" if right else "wrong gradient"
    return outcomes


def _q3_truth():
    import torch
    import torch.nn.functional as F

    def block(x, w, clone):
        identity = x.clone() if clone else x
        out = F.relu(x, inplace=True)
        return w * out + identity

    def meant(a, make):
        x = make(a)
        return 3.0 * F.relu(x) + x

    origins = {"x = a * 2": lambda a: a * 2, "x = a.sigmoid()": lambda a: a.sigmoid(), "x = a": lambda a: a}
    outcomes = {}
    for clone in (False, True):
        for label, make in origins.items():
            a = torch.tensor([-1.0, 2.0], requires_grad=True)
            w = torch.tensor(3.0, requires_grad=True)
            try:
                out = block(make(a), w, clone)
            except RuntimeError:
                outcomes[label, clone] = "error at the write"
                continue
            try:
                out.sum().backward()
            except RuntimeError:
                outcomes[label, clone] = "error at backward"
                continue
            as_meant = torch.equal(out.detach(), meant(a.detach(), make).detach())
            outcomes[label, clone] = "runs as meant" if as_meant else "runs, not as meant"
    return outcomes


def _q4_truth():
    import torch

    from clonelab import measure, saved_for_backward

    x = torch.randn(64, 256, requires_grad=True)
    rows = []
    for take in (lambda t: t, lambda t: t[:, :128]):
        with measure() as m:
            y = take(x).clone()
        rows.append((m.allocated, saved_for_backward(torch.clone, take(x)).nbytes))
        del y
    return rows


def _q5_truth():
    import torch

    from clonelab import BasicBlock, ReluFirstBlock, resnet

    def losses(identity):
        torch.manual_seed(0)
        model = resnet(BasicBlock, [1, 1], in_channels=1, base_width=8, stem="small", identity=identity)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        data = torch.randn(8, 1, 8, 8, generator=torch.Generator().manual_seed(1))
        labels = torch.arange(8) % 10
        seen = []
        for _ in range(5):
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(data), labels)
            loss.backward()
            opt.step()
            seen.append(loss.item())
        return seen

    def same_weights_same_output(block):
        torch.manual_seed(0)
        alias = resnet(block, [1, 1], in_channels=1, base_width=8, stem="small", identity="alias").eval()
        clone = resnet(block, [1, 1], in_channels=1, base_width=8, stem="small", identity="clone").eval()
        clone.load_state_dict(alias.state_dict())
        x = torch.randn(4, 1, 8, 8)
        with torch.no_grad():
            return torch.equal(alias(x.clone()), clone(x.clone()))

    return losses("alias") == losses("clone"), same_weights_same_output(BasicBlock), \
        same_weights_same_output(ReluFirstBlock)


EXIT_TICKET = [
    Question(
        "One tensor or two?", "notebooks 02 and 04",
        "```python\nx = torch.ones(3)\ny = x\ny *= 3\ny = y + 1\ny[1] = 0\n```\n\n"
        "What does `x` hold at the end, and what is `x._version`?",
        "`x` is `[3., 3., 3.]` and `x._version` is 1. `y *= 3` writes into the one tensor that both names "
        "share (one in-place write: version 1); `y = y + 1` makes a new tensor and moves only the name `y`, so "
        "`y[1] = 0` writes into the new tensor, not into `x`.",
        ([3.0, 3.0, 3.0], 1), _q1_truth),
    Question(
        "Will backward notice?", "notebook 05",
        "The code means to compute the gradient of `(exp(x) + 1).sum()`, which is `exp(x)`:\n\n"
        "```python\nx = torch.linspace(-1, 1, 5, requires_grad=True)\ny = x.exp()\n<one of the three lines>\n"
        "y.sum().backward()\n```\n\n"
        "For each line, `y.add_(1)`, `y.data.add_(1)` and `y = y + 1`, say what happens: *error* (backward "
        "raises), *wrong gradient* (no error, but `x.grad` is not `exp(x)`), or *right gradient*.",
        "`y.add_(1)`: error, because `exp` saves its output for backward and the write moves its version. "
        "`y.data.add_(1)`: wrong gradient, because `.data` has its own version counter, so autograd cannot see "
        "the write and uses `exp(x) + 1` as the saved output. `y = y + 1`: right gradient; nothing saved is "
        "written.",
        {"y.add_(1)": "error", "y.data.add_(1)": "wrong gradient", "y = y + 1": "right gradient"}, _q2_truth),
    Question(
        "Alias, clone, or neither?", "notebooks 08 and 11",
        "```python\ndef block(x, w):\n    identity = x\n    out = F.relu(x, inplace=True)\n"
        "    return w * out + identity      # meant: w * relu(x) + x\n```\n\n"
        "With `a = torch.tensor([-1., 2.], requires_grad=True)` and `w = torch.tensor(3., requires_grad=True)`, "
        "the block gets (i) `x = a * 2`, (ii) `x = a.sigmoid()` or (iii) `x = a`, and then "
        "`block(x, w).sum().backward()` runs. (a) For each, say: *error at the write*, *error at backward*, *runs, not "
        "as meant*, or *runs as meant*. (b) What does `identity = x.clone()` change? (c) Which one change makes "
        "all three run as meant?",
        "(a) (i) runs, not as meant: `a * 2` saved nothing that the ReLU overwrites, so no error, but "
        "`identity` is the same tensor as `x` and holds `relu(x)`. (ii) error at backward: `sigmoid` saved its "
        "output `x` for backward, and the in-place ReLU moved its version. (iii) error at the write: `a` is a "
        "leaf that requires grad. (b) Only (i) changes: it runs as meant. (ii) and (iii) fail as before, because "
        "the in-place ReLU still writes into `x`. (c) `F.relu(x, inplace=False)` (or `F.relu(x)`).",
        {("x = a * 2", False): "runs, not as meant", ("x = a.sigmoid()", False): "error at backward",
         ("x = a", False): "error at the write", ("x = a * 2", True): "runs as meant",
         ("x = a.sigmoid()", True): "error at backward", ("x = a", True): "error at the write"}, _q3_truth),
    Question(
        "What a clone costs", "notebook 07",
        "`x = torch.randn(64, 256, requires_grad=True)` is float32. How many bytes does `x.clone()` allocate, "
        "and how many bytes does its backward node keep for backward? The same for `x[:, :128].clone()`.",
        "`x.clone()`: 65,536 bytes (64 × 256 × 4), and nothing kept: `CloneBackward0` passes the gradient "
        "through unchanged, so it saves no tensor. `x[:, :128].clone()`: 32,768 bytes, what the view shows "
        "(64 × 128 × 4), not the whole storage; again nothing kept.",
        [(65536, 0), (32768, 0)], _q4_truth),
    Question(
        "Which comparison proves it?", "notebook 10",
        "Two runs train the same small ResNet from the same seed, on the same batches: one with "
        "`identity = x`, one with `identity = x.clone()`, in blocks that only read `x` (torchvision's "
        "`BasicBlock`). (a) Are their losses equal at every step bit for bit, close but not equal, or "
        "different? (b) With the ReLU-first block instead, the alias run ends with a slightly different test "
        "accuracy from the clone run. Does that show that the alias changes the model's function? Which "
        "comparison does?",
        "(a) Equal bit for bit: when nothing writes into `x`, the alias and the clone hold the same numbers, so "
        "every operation gets the same inputs. (b) No: two trained models can end at different accuracies for "
        "reasons that have nothing to do with the alias (once they differ by one rounding step, training drifts). "
        "The comparison that proves it: load the same weights into the alias model and the clone model and run "
        "both on the same input. The `BasicBlock` models give equal outputs; the ReLU-first models do not, "
        "because the alias adds `relu(x)` instead of `x`.",
        (True, True, False), _q5_truth),
]


HALF_DAY_QUESTIONS = 3   # the half day teaches 01, 04, 05, 08 and 11: questions 1 to 3; 4 and 5 need 07 and 10


def exit_ticket_markdown(half_day: bool = False) -> str:
    questions = EXIT_TICKET[:HALF_DAY_QUESTIONS] if half_day else EXIT_TICKET
    which = ("the half-day workshop's ticket; the full day's, with two more questions, is exit_ticket.md"
             if half_day else f"after a half-day workshop, use exit_ticket_half_day.md (questions 1 to "
                              f"{HALF_DAY_QUESTIONS})")
    lines = ["# Exit ticket", "",
             "Name (or a nickname): ______________________", "",
             "Answer alone, on paper, with your laptop closed. No code to run: predict, and say why in a sentence.",
             "", f"<!-- For the facilitator: {which}. The answers are in answers.md. -->", ""]
    for n, q in enumerate(questions, 1):
        lines += [f"## {n}. {q.title} ({q.notebooks})", "", q.text, "", "Your answer:", "", "&nbsp;", "", "&nbsp;",
                  "", "&nbsp;", ""]
    return "\n".join(lines).rstrip() + "\n"


# --- the answer key -----------------------------------------------------------------------------------------


def answer_key_markdown(found: list[Solution] | None = None) -> str:
    found = solutions() if found is None else found
    titles = {p.name: nbcommon.title_of(nbcommon.read(p)) for p in nbcommon.notebook_paths()}
    lines = ["# Answer key", "",
             "For facilitators: every exercise and quiz question of the series with its answer written out, then "
             "the answers of the [exit ticket](exit_ticket.md). It is not in the student copies; do not hand it "
             "out before the session ends.", "",
             "Generated by `python tools/workshop.py` (run by `make stamp`) from the solution cells of the "
             "executed notebooks in [`notebooks/`](../notebooks/): their code, and what they printed. A test "
             "checks that this file is current and that every answer written here passes its `check`. Where the "
             "answer is a function, the solution code is the answer; any function that behaves the same passes.",
             ""]
    current = None
    for s in found:
        if s.notebook != current:
            current = s.notebook
            lines += [f"## [{titles[s.notebook]}](../notebooks/{s.notebook})", ""]
        first, _, rest = s.task.partition("\n")
        bold = re.match(r"^\*\*(Exercise [\d.]+?)\.?\*\*\s*(.*)$", first)
        if bold:  # "**Exercise 05.1.** The task ..." has no title of its own
            title, rest = bold.group(1), bold.group(2) + "\n" + rest
        else:
            title = re.sub(r"^#+ ", "", first).strip()
        lines += [f"### {title}", "", _in_workshop(_demote(rest.strip())), "",
                  f"**Answer:** `{s.shown}`" if s.kind == "value" else f"**Answer:** {s.shown}:", "",
                  "```python", s.code, "```", ""]
        extra = [line for line in s.output.splitlines()
                 if not line.startswith((f"✓ {s.exercise_id}: correct", "answer = "))]
        if extra:
            lines += ["It prints:", "", "```text", *extra, "```", ""]
    lines += ["## Exit ticket", "",
              f"After a half-day workshop, students answer questions 1 to {HALF_DAY_QUESTIONS}; after the full day, "
              "all of them.", ""]
    for n, q in enumerate(EXIT_TICKET, 1):
        end = "" if q.title.endswith("?") else "."
        lines += [f"**{n}. {q.title}{end}** {q.answer}", ""]
    return "\n".join(lines).rstrip() + "\n"


# --- the instructor notes' summary blocks ---------------------------------------------------------------------


def notes_summary(path: Path, nb, found: list[Solution]) -> str:
    marks, total = reading_time.core_timeline(nb)
    before, practice, after = reading_time.core_split(nb)
    reading = before + after
    ids = [s for s in found if s.notebook == path.name]
    predictions = sum(len(reading_time.PREDICTION.findall(c.source)) for c in nb.cells
                      if c.cell_type == "markdown" and not nbcommon.is_deeper(c))
    quiz = any(s.exercise_id.startswith("quiz.") for s in ids)
    lines = [SUMMARY_START, "",
             f"**Notebook:** [{nbcommon.title_of(nb)}](../../notebooks/{path.name}) (instructor copy, with the "
             f"solutions) · [student copy](../student/{path.name})", "",
             f"**Core path:** about {reading} min of reading and running"
             + (f", then about {practice} min for the {'quiz' if quiz else 'exercises'}" if practice else "")
             + f": {total} min by the guide's formula, with {predictions} prediction "
             f"prompt{'s' if predictions != 1 else ''}. The *Deeper* notes are not counted.", ""]
    if objectives := nbcommon.objectives_of(nb):
        lines += ["**Objectives:** after this notebook, students can:", "", *objectives, ""]
    lines += ["| time to here | section |", "|--:|---|"]
    lines += [f"| {minutes} min | {heading} |" for _, heading, minutes in marks if heading != "Learning objectives"]
    lines += [f"| {total} min | end |", ""]
    if ids:
        lines += [("**Quiz:** " if quiz else "**Exercises:** ") + ", ".join(s.exercise_id for s in ids)
                  + " (answers: [answer key](../answers.md))", ""]
    return "\n".join(lines + [SUMMARY_END])


# --- the QR code ----------------------------------------------------------------------------------------------


def student_url() -> str:
    return f"{nbcommon.repo_url()}/tree/main/workshop/student"


def qr_svg() -> str | None:
    try:
        import segno
    except ImportError:
        return None
    import io

    buffer = io.BytesIO()
    segno.make(student_url(), error="m").save(buffer, kind="svg", scale=8, border=4, xmldecl=False,
                                               title=f"QR code: {student_url()}")
    return buffer.getvalue().decode() + "\n"


# --- writing ------------------------------------------------------------------------------------------------


def _write(path: Path, text: str) -> bool:
    if path.exists() and path.read_text() == text:
        return False
    path.write_text(text)
    return True


def generate() -> int:
    found = solutions()
    changed = (_write(ANSWERS, answer_key_markdown(found)) + _write(EXIT, exit_ticket_markdown())
               + _write(EXIT_HALF, exit_ticket_markdown(half_day=True)))
    for path in nbcommon.notebook_paths():
        page = NOTES / f"{path.stem}.md"
        if page.exists():
            text = page.read_text()
            block = notes_summary(path, nbcommon.read(path), found)
            new = nbcommon.replace_between_markers(text, block, SUMMARY_START, SUMMARY_END)
            if SUMMARY_START not in text:
                raise SystemExit(f"{page.relative_to(nbcommon.ROOT)} lacks the summary markers")
            changed += _write(page, new)
    svg = qr_svg()
    if svg is not None:
        changed += _write(QR, svg)
    else:
        print("workshop: segno is not installed, so the QR code was not redrawn", file=sys.stderr)
    print(f"workshop: {changed} file(s) changed")
    return 0


if __name__ == "__main__":
    sys.exit(generate())
