"""The workshop kit: the answer key, the instructor notes and the QR code stay in step with the notebooks
(tools/workshop.py makes them); the hand-written exit tickets' answers are what PyTorch does; the guide's run
sheets add up, quote the formula's minutes and name only exercises and sections that exist."""

from __future__ import annotations

import re
import subprocess
from collections import Counter

import nbformat
import pytest
import torch
import torch.nn.functional as F

import reading_time
import workshop
from clonelab import check
from clonelab.exercises import exercise_ids
from conftest import ROOT, notebook_paths

GUIDE = ROOT / "workshop" / "README.md"
TIMINGS = ROOT / "workshop" / "TIMINGS.md"   # how the run sheets are timed
SECTIONS = ["## Talking points", "## Where students get stuck", "## When the room is behind",
            "## Pair-programming prompt", "## Check your understanding"]
FEEDBACK = ["Pace", "The least clear point"]


def _flat(text: str) -> str:
    return " ".join(text.split())


# --- the answer key and the notes -------------------------------------------------------------------------------


def test_the_answer_key_is_current():
    assert workshop.answer_key_markdown() in workshop.ANSWERS.read_text(), \
        "workshop/answers.md is out of date: run `make stamp` (after `make notebooks` if outputs changed)"


def test_the_key_answers_every_exercise_and_quiz_question():
    found = [s.exercise_id for s in workshop.solutions()]
    assert len(found) == len(set(found)), "an exercise has two solution cells"
    assert set(found) == {i for i in exercise_ids() if not i.startswith("demo.")}


@pytest.mark.parametrize("solution", [s for s in workshop.solutions() if s.kind == "value"],
                         ids=lambda s: s.exercise_id)
def test_every_answer_written_in_the_key_passes_its_check(solution, capsys):
    """The key writes the value out (from the cell's literal or what it printed); the check must accept it."""
    assert check(solution.exercise_id, solution.value), capsys.readouterr().out
    assert f"**Answer:** `{solution.shown}`" in workshop.ANSWERS.read_text()


def test_a_solution_that_hides_its_answer_is_refused():
    code = "answer = compute()\nassert check('07.1', answer)"
    with pytest.raises(SystemExit, match="does not show it"):
        workshop._answer_of(code, "answer", output="✓ 07.1: correct.", where="07.1")
    assert workshop._answer_of(code, "answer", output="answer = 200\n", where="07.1") == ("value", 200)
    assert workshop._answer_of("def f(t):\n    return t\nanswer = f", "answer", "", "x") == ("function", None)


def test_the_key_stays_out_of_the_student_copies():
    key_code = [s.code for s in workshop.solutions()]
    for path in (ROOT / "workshop" / "student").glob("*.ipynb"):
        text = path.read_text()
        assert "answers.md" not in text, f"{path.name} links to the answer key"
        assert not any(code in text for code in key_code), f"{path.name} holds a solution"


def _headings() -> set[str]:
    """Every heading of the series, and every Deeper note's title."""
    found = set()
    for path in notebook_paths():
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "markdown":
                found |= {line.lstrip("#").strip() for line in cell.source.splitlines() if line.startswith("#")}
                found |= set(re.findall(r"<summary>(.*?)</summary>", cell.source))
    return found


@pytest.mark.parametrize("path", notebook_paths(), ids=lambda p: p.stem)
def test_each_notebook_has_a_page_of_instructor_notes(path):
    page = workshop.NOTES / f"{path.stem}.md"
    assert page.exists(), f"workshop/notes/{page.name} is missing"
    text = page.read_text()
    nb = nbformat.read(path, as_version=4)
    block = workshop.notes_summary(path, nb, workshop.solutions([path]))
    assert block in text, f"{page.name}: the summary block is out of date: run `make stamp`"
    positions = [text.find(s) for s in SECTIONS]
    assert -1 not in positions and positions == sorted(positions), f"{page.name}: sections missing or out of order"
    written = text.split(workshop.SUMMARY_END, 1)[1]
    # an italic phrase names a section (of the series, or of this page); a lower-case word is emphasis
    named = [n for n in re.findall(r"(?<![*\w])\*([^*\n]+)\*(?![*\w])", written) if not re.fullmatch(r"[a-z]+", n)]
    own = {line.lstrip("#").strip() for line in text.splitlines() if line.startswith("## ")}
    unknown = [n for n in named if n not in _headings() | own and n != "Deeper"]
    assert unknown == [], f"{page.name} names sections that do not exist: {unknown}"
    # a figure of a run that the hand-written part quotes (a percentage with a decimal, "10 of 450", "up to 1.58")
    # is one the executed notebook shows: a re-run with other numbers must update the page
    shown = " ".join(o.get("text", "") + "".join(map(str, o.get("data", {}).values()))
                     for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs)
    quoted = re.findall(r"\b\d+\.\d+%|\b\d+ of \d+(?= test)|(?<=up to )\d+\.\d+", written)
    stale = [figure for figure in quoted if figure not in shown]
    assert stale == [], f"{page.name} quotes figures that {path.name}'s outputs no longer show: {stale}"


def test_the_qr_code_and_the_first_slide_name_the_release_tag():
    pytest.importorskip("segno")
    url = workshop.student_url()
    assert workshop.QR.read_text() == workshop.qr_svg() and url in workshop.QR.read_text()
    assert url.endswith(f"/tree/{workshop.nbcommon.release_ref()}/workshop/student")
    guide = GUIDE.read_text()
    assert url in guide and workshop.nbcommon.colab_url("00_start_here.ipynb", "workshop/student") in guide
    assert f"--branch {workshop.nbcommon.release_ref()}" in (ROOT / "workshop" / "SETUP.md").read_text()


def test_the_slide_the_shared_document_and_the_printouts_are_what_the_tool_makes():
    assert workshop.SHARED.read_text() == workshop.shared_document(), "run `python tools/workshop.py`"
    for what, url in workshop.student_links():
        assert url in workshop.SHARED.read_text()
    pytest.importorskip("segno")
    assert workshop.SLIDE.read_text() == workshop.first_slide(workshop.qr_svg(scalable=True))
    pytest.importorskip("markdown_it")
    pages = workshop.printouts()
    assert sorted(p.name for p in pages) == ["exit_ticket.html", "exit_ticket_half_day.html",
                                             "facilitator_full_day.html", "facilitator_half_day.html", "helpers.html"]
    for path, html in pages.items():
        assert path.read_text() == html, f"{path.name}: run `python tools/workshop.py`"
    for day, first in (("half_day", "0:00"), ("full_day", "9:00")):
        sheet = pages[workshop.PRINT / f"facilitator_{day}.html"]
        assert sheet.count("<table>") == 1 and "Minute card" in sheet, "a facilitator's sheet: its run sheet, the card"
        assert f"<td>{first}</td>" in sheet
    helpers = pages[workshop.PRINT / "helpers.html"]
    assert "What to check first" in helpers and "--no-index" in helpers, "the helpers' sheet: the fixes, the stick"
    ticket = pages[workshop.PRINT / "exit_ticket.html"]
    assert ticket.count('<div class="answer">') == len(_ticket(workshop.EXIT)) - 1, "room to write under each question"


def test_every_address_of_the_repository_is_the_one_in_pyproject(monkeypatch):
    pages = [ROOT / "README.md", *sorted((ROOT / "workshop").glob("*.md"))]
    for page in pages:
        assert workshop.point_at_repository(page.read_text()) == page.read_text(), f"{page.name}: run `make stamp`"
    # and in a fork, `make stamp` turns every one of them to the fork
    monkeypatch.setattr(workshop.nbcommon, "repo_url", lambda: "https://github.com/someone/clonelab")
    for page in pages:
        forked = workshop.point_at_repository(page.read_text())
        assert not re.search(r"github(\.com)?/clonelab/clonelab(/|\.git|@)", forked), f"{page.name} still names upstream"
        assert "github.com/<you>/clonelab" in forked or "<you>" not in page.read_text()


def test_the_emails_send_the_release_and_ask_for_the_check():
    emails = (ROOT / "workshop" / "emails.md").read_text()
    assert workshop.setup_url() in emails and "5-minute check" in emails
    for url in re.findall(r"https://github\.com/\S+", emails):
        assert f"/{workshop.nbcommon.release_ref()}/" in url, f"{url} is not at the release tag"
    assert len(re.findall(r"^## \d\. ", emails, re.M)) == 7
    homework = re.findall(r"^Homework: exercises ([^.]+\.\d[^.]*)\.", GUIDE.read_text(), re.M)
    assert len(homework) == 2, "each run sheet gives homework"
    for line in homework:                  # e-mail 7 sends each day's homework, as the run sheet sets it
        assert set(re.findall(r"\b\d\d\.\d\b", line)) <= set(re.findall(r"\b\d\d\.\d\b", emails)), line


# --- the exit tickets: hand-written Markdown, each answer checked by running PyTorch ----------------------------


def _ticket(path) -> list[tuple[str, set[str], str]]:
    """(title, the notebooks it names, its text) for each "## N. Title (notebooks ...)" of a ticket, in order."""
    parts = re.split(r"^## \d+\. ", path.read_text(), flags=re.M)[1:]
    found = []
    for part in parts:
        head, _, body = part.partition("\n")
        named = re.search(r" \((notebooks? [^)]*)\)$", head)
        title = head[:named.start()] if named else head
        found.append((title, set(re.findall(r"\b\d\d\b", named.group(1))) if named else set(), body))
    return found


def _key() -> dict[str, str]:
    """The hand-written answers under the key's "## Exit tickets": title -> answer, flattened."""
    text = workshop.ANSWERS.read_text().split("## Exit tickets", 1)[1]
    return {head: _flat(body) for head, body in re.findall(r"^### \d+\. ([^\n]+)\n(.*?)(?=^### |\Z)", text, re.M | re.S)}


def one_tensor_or_two():
    x = torch.ones(3)
    y = x
    y *= 3
    y = y + 1
    y[1] = 0
    return [f"`x` is `{x}`", f"`x._version` is {x._version}"]


def will_backward_notice():
    phrases = []
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
            outcome = "right gradient" if torch.allclose(x.grad, x.detach().exp()) else "wrong gradient"
        except RuntimeError:
            outcome = "error"
        phrases.append(f"`{line}`: {outcome}")
    return phrases


def alias_clone_or_neither():
    """The phrases of each part of the answer: (a) the block as given, (b) with a clone, (c) with inplace=False
    (which must make all three run as meant)."""
    origins = {"x = a * 2": lambda a: a * 2, "x = a.sigmoid()": lambda a: a.sigmoid(), "x = a": lambda a: a}

    def outcome(make, clone, inplace):
        a = torch.tensor([-1.0, 2.0], requires_grad=True)
        w = torch.tensor(3.0, requires_grad=True)
        x = make(a)
        identity = x.clone() if clone else x
        try:
            out = w * F.relu(x, inplace=inplace) + identity
        except RuntimeError:
            return "error at the write"
        try:
            out.sum().backward()
        except RuntimeError:
            return "error at backward"
        x = make(a.detach())
        return "runs as meant" if torch.equal(out.detach(), 3.0 * F.relu(x) + x) else "runs, not as meant"

    assert {outcome(make, False, False) for make in origins.values()} == {"runs as meant"}
    return [(mark, [f"`{label}`: {outcome(make, clone, True)}" for label, make in origins.items()])
            for mark, clone in (("(a)", False), ("(b)", True))] + [("(c)", ["`F.relu(x, inplace=False)`"])]


def views_and_strides():
    x = torch.arange(6.).view(2, 3)
    t = x.t()
    try:
        t.view(6)
        view = "view"
    except RuntimeError:
        view = "error"
    reshape = "view" if t.reshape(6).untyped_storage().data_ptr() == x.untyped_storage().data_ptr() else "copy"
    t[0, 1] = 100.
    return [f"`t.stride()` is `{t.stride()}`", f"`t.view(6)`: {view}", f"`t.reshape(6)`: {reshape}",
            f"`x[1, 0]` is {x[1, 0].item():g}", f"`x._version` is {x._version}"]


def a_clone_in_the_graph_and_in_memory():
    from clonelab import graph_nodes, measure, saved_for_backward

    x = torch.randn(64, 256, requires_grad=True)
    w = torch.randn(256, requires_grad=True)
    added = graph_nodes((x.clone() * w).sum()) - graph_nodes((x * w).sum())
    assert added == Counter({"CloneBackward0": 1}), added
    phrases = ["One `CloneBackward0` node", f"it keeps {saved_for_backward(torch.clone, x).nbytes} bytes"]
    for label, take in (("x.clone()", lambda t: t), ("x[:, :128].clone()", lambda t: t[:, :128])):
        with measure() as m:
            y = take(x).clone()
        phrases.append(f"`{label}`: {m.allocated:,} bytes")
        del y
    return phrases


def torchvision_s_in_place_ops():
    from torchvision.models.resnet import BasicBlock

    torch.manual_seed(0)
    block = BasicBlock(8, 8)
    x = torch.randn(2, 8, 6, 6, requires_grad=True)
    block(x).sum().backward()                       # raises if a write spoilt a saved tensor
    saved = []
    h = torch.randn(2, 8, 6, 6, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):
        z = block.bn2(h)
        bn = ["its input"] if any(s is h for s in saved) else []
        bn += ["its output"] if any(s.untyped_storage().data_ptr() == z.untyped_storage().data_ptr()
                                    for s in saved) else []
        before = len(saved)
        z + h
        add = "nothing" if len(saved) == before else "something"
    assert bn == ["its input"], bn
    return [f"`x._version` stays {x._version}", "Batch norm saves its input", f"the addition saves {add}",
            "not its output"]


def which_comparison_proves_it():
    from clonelab import BasicBlock, ReluFirstBlock, resnet

    def small(block, identity):
        torch.manual_seed(0)
        return resnet(block, [1, 1], in_channels=1, base_width=8, stem="small", identity=identity)

    def losses(identity):
        model = small(BasicBlock, identity)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        data = torch.randn(8, 1, 8, 8, generator=torch.Generator().manual_seed(1))
        seen = []
        for _ in range(5):
            opt.zero_grad()
            loss = F.cross_entropy(model(data), torch.arange(8) % 10)
            loss.backward()
            opt.step()
            seen.append(loss.item())
        return seen

    def same_output(block):
        alias, clone = small(block, "alias").eval(), small(block, "clone").eval()
        clone.load_state_dict(alias.state_dict())
        x = torch.randn(4, 1, 8, 8)
        with torch.no_grad():
            return torch.equal(alias(x.clone()), clone(x.clone()))

    assert losses("alias") == losses("clone") and same_output(BasicBlock) and not same_output(ReluFirstBlock)
    return ["(a) Equal bit for bit", "load the same weights into the alias model and the clone model",
            "The `BasicBlock` models give equal outputs; the ReLU-first models do not"]


TRUTHS = {"One tensor or two?": one_tensor_or_two, "Will backward notice?": will_backward_notice,
          "Alias, clone, or neither?": alias_clone_or_neither, "Views and strides": views_and_strides,
          "A clone in the graph and in memory": a_clone_in_the_graph_and_in_memory,
          "torchvision's in-place ops": torchvision_s_in_place_ops,
          "Which comparison proves it?": which_comparison_proves_it}


@pytest.mark.parametrize("title", TRUTHS)
def test_each_exit_ticket_answer_is_what_pytorch_does(title):
    answer = _key()[title]
    found = TRUTHS[title]()
    if title == "Alias, clone, or neither?":   # each phrase in its own part of the answer
        pieces = re.split(r"(?=\([abc]\) )", answer)
        for mark, phrases in found:
            piece = next(p for p in pieces if p.startswith(mark))
            assert [p for p in phrases if p not in piece] == [], f"{title} {mark}: {piece}"
        found = [p for _, phrases in found for p in phrases]
    else:
        assert [p for p in found if p not in answer] == [], f"{title}: {answer}"
    for path in (workshop.EXIT, workshop.EXIT_HALF):
        assert not any(p in _flat(path.read_text()) for p in found), f"{path.name} shows the answer to {title!r}"


def _run_sheet(ticket_name: str) -> list[list[str]]:
    """The cells of each row of the guide's run sheet that ends with this exit ticket."""
    return workshop.run_sheet(GUIDE.parent / ticket_name)


@pytest.mark.parametrize("ticket", [workshop.EXIT, workshop.EXIT_HALF], ids=lambda p: p.stem)
def test_each_ticket_assesses_its_day_and_ends_with_the_feedback(ticket):
    questions = _ticket(ticket)
    assert [title for title, _, _ in questions[-2:]] == FEEDBACK
    pace = questions[-2][2]
    assert all(box in pace for box in ("too slow", "about right", "too fast"))
    assessed = questions[:-2]
    assert all(named for _, named, _ in assessed), "every question names the notebooks it assesses"
    key = list(_key())
    assert [title for title, _, _ in assessed] == key[:len(assessed)], "the key answers the ticket's questions"
    taught = {n for row in _run_sheet(ticket.name) for n in re.findall(r"\]\(\.\./notebooks/(\d\d)_", row[2])}
    named = set().union(*(n for _, n, _ in assessed))
    assert named <= taught, f"{ticket.name} assesses notebooks its day does not teach: {named - taught}"
    assert taught - {"00"} <= named, f"{ticket.name} does not assess {taught - {'00'} - named}"


# --- the guide --------------------------------------------------------------------------------------------------


def test_the_guide_sends_facilitators_to_every_part_of_the_kit():
    guide = GUIDE.read_text()
    for target in ["SETUP.md", "answers.md", "exit_ticket.md", "exit_ticket_half_day.md", "notes/",
                   "student_links.svg", "make usb", "CLONELAB_SOURCE", "emails.md", "first_slide.html",
                   "shared_document.md", "print/"]:
        assert target in guide, f"workshop/README.md does not mention {target}"


def _minutes(clock: str) -> int:
    hours, minutes = clock.split(":")
    return 60 * int(hours) + int(minutes)


@pytest.mark.parametrize("ticket, length, slack, ticket_minutes",
                         [("exit_ticket_half_day.md", 180, 15, 10), ("exit_ticket.md", 480, 15, 20)])
def test_each_run_sheet_adds_up(ticket, length, slack, ticket_minutes):
    rows = _run_sheet(ticket)
    assert rows[-1][2] == "end"
    for row, following in zip(rows, rows[1:]):
        assert _minutes(row[0]) + int(row[1]) == _minutes(following[0]), f"{row[0]} + {row[1]} min"
    assert _minutes(rows[-1][0]) - _minutes(rows[0][0]) == length
    assert sum(int(r[1]) for r in rows if r[2] == "slack") >= slack
    assert [int(r[1]) for r in rows if ticket in r[2]] == [ticket_minutes]


@pytest.mark.parametrize("ticket", ["exit_ticket_half_day.md", "exit_ticket.md"])
def test_each_run_sheet_names_only_exercises_and_sections_that_exist(ticket):
    ids = {s.exercise_id for s in workshop.solutions()}
    for row in _run_sheet(ticket):
        text = " ".join(row[3:])
        for exercise in re.findall(r"\b\d\d\.\d\b", text):
            assert exercise in ids, f"{row[0]}: exercise {exercise} does not exist"
        for numbers in re.findall(r"quiz ((?:\d+(?:, | and )?)+)", text):
            for n in re.findall(r"\d+", numbers):
                assert f"quiz.{n}" in ids, f"{row[0]}: quiz question {n} does not exist"
        notebook = re.search(r"\]\(\.\./notebooks/([^)]+)\)", row[2])
        if notebook:
            nb = nbformat.read(ROOT / "notebooks" / notebook.group(1), as_version=4)
            headings = {line.lstrip("#").strip() for c in nb.cells if c.cell_type == "markdown"
                        for line in c.source.splitlines() if line.startswith("#")}
            missing = [h for h in re.findall(r"(?<![*\w])\*([^*]+)\*(?![*\w])", text) if h not in headings]
            assert missing == [], f"{row[0]}: {notebook.group(1)} has no section {missing}"


def test_the_core_path_minutes_quoted_in_the_guide_are_the_notes_own():
    """TIMINGS.md quotes the core paths each run sheet is built from ("... in notes/ (01: 31 min, 04: 31, ...) by
    the formula"): each is the notebook's, as its page in notes/ gives it."""
    quoted = re.findall(r"core path in \[`notes/`\]\(notes/\) \(([^)]*) by the formula", TIMINGS.read_text())
    assert len(quoted) == 2, "each run sheet quotes the core paths it is built from"
    totals = {p.name[:2]: reading_time.core_timeline(nbformat.read(p, as_version=4))[1] for p in notebook_paths()}
    for text in quoted:
        pairs = {n: int(m) for n, m in re.findall(r"(\d\d): (\d+)", text)}
        assert pairs == {n: totals[n] for n in pairs}, "the formula's minutes changed: update the minutes quoted in workshop/TIMINGS.md and the run sheets"
    assert "words / {}".format(reading_time.READ_WPM) in TIMINGS.read_text(), "TIMINGS.md states the formula"


def test_every_anchor_into_the_kit_names_a_heading():
    pages = [GUIDE, TIMINGS, ROOT / "workshop" / "SETUP.md", workshop.ANSWERS, *sorted(workshop.NOTES.glob("*.md"))]
    anchors = {page: {workshop.nbcommon.heading_slug(line)
                      for line in page.read_text().splitlines() if line.startswith("#")} for page in pages}
    broken = []
    for page in pages:
        for target, anchor in re.findall(r"\]\(([^)#\s]*)#([^)\s]+)\)", page.read_text()):
            other = (page.parent / target).resolve() if target else page
            if other.suffix == ".md" and anchor not in anchors.get(other, set()):
                broken.append(f"{page.name}: {target}#{anchor}")
    assert broken == []


def test_the_reading_time_constants_are_a_fit_to_their_readers():
    """The five constants fit CALIBRATION_READERS, on the notebooks at CALIBRATION_COMMIT, nearly as well as least
    squares does: a later round of readers replaces the constants, and this test refits them."""
    np = pytest.importorskip("numpy")
    names = ("READ_WPM", "MIN_PER_CODE_CELL", "MIN_PER_PREDICTION", "MIN_PER_EXERCISE", "MIN_PER_QUIZ")
    rows, targets = [], []
    for number, minutes in sorted(reading_time.CALIBRATION_READERS.items()):
        listing = subprocess.run(["git", "ls-tree", "--name-only", reading_time.CALIBRATION_COMMIT, "notebooks/"],
                                 cwd=ROOT, capture_output=True, text=True)
        path = next((p for p in listing.stdout.split() if p.startswith(f"notebooks/{number}_")), None)
        if listing.returncode or path is None:
            pytest.skip(f"commit {reading_time.CALIBRATION_COMMIT} is not in this clone")
        source = subprocess.run(["git", "show", f"{reading_time.CALIBRATION_COMMIT}:{path}"], cwd=ROOT,
                                capture_output=True, text=True, check=True).stdout
        nb = nbformat.reads(source, as_version=4)
        features = []
        for name in names:   # the formula is linear: one constant at 1 and the others at 0 gives its input
            with pytest.MonkeyPatch.context() as patch:
                for other in names:
                    patch.setattr(reading_time, other, 1 if other == name else (10 ** 9 if other == "READ_WPM" else 0))
                before, practice, after = reading_time.core_split(nb)
            features.append((before + after, practice))
        rows += [[f[0] for f in features], [f[1] for f in features]]
        targets += list(minutes)
    x, y = np.array(rows, float), np.array(targets, float)
    best = np.linalg.lstsq(x, y, rcond=None)[0]
    ours = np.array([1 / reading_time.READ_WPM] + [getattr(reading_time, n) for n in names[1:]])

    def rms(theta):
        return float(np.sqrt(np.mean((x @ theta - y) ** 2)))

    assert rms(ours) <= 1.05 * rms(best), f"refit: least squares gives {best} (1/READ_WPM first)"


def test_the_timings_table_counts_what_the_notebooks_hold():
    """TIMINGS.md's table (`make timings`) is refreshed after a notebook changes: its counts are the notebooks'
    (run times vary by machine, so they are not compared)."""
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.strip().strip("|").split("|")]
            for line in TIMINGS.read_text().splitlines() if re.match(r"\| \d\d_", line)}
    for path in notebook_paths():
        counts = reading_time.workshop_counts(nbformat.read(path, as_version=4))
        row = rows[path.stem]
        got = dict(zip(["words", "code_cells", "predictions", "exercises", "quiz"], map(int, row[2:7])))
        assert got == {k: counts[k] for k in got}, f"{path.stem}: run `make timings` (TIMINGS.md is stale)"


def test_the_pair_prompt_of_notes_08_expects_what_notebook_08_gives():
    """notes/08's pair prompt: z ** 3 raises in neither block and only the clone gives the meant result; the square
    root raises in both. Run with notebook 08's own block, run and outcome."""
    cells = nbformat.read(ROOT / "notebooks" / "08_residual_connection.ipynb", as_version=4).cells
    first = next(i for i, c in enumerate(cells) if c.cell_type == "code" and "def branch_starts_with_relu" in c.source)
    names: dict = {"torch": torch}
    for cell in cells[first:first + 2]:
        exec(cell.source, names)                                            # noqa: S102  (the notebook's code)
    run, outcome = names["run"], names["outcome"]
    notes = (ROOT / "workshop" / "notes" / "08_residual_connection.md").read_text()
    assert 'Expected: `z ** 3` is row 1: `outcome` returns `""` (no error)' in notes

    cube = lambda z: z ** 3                                                 # noqa: E731
    assert outcome(cube, "alias") == outcome(cube, "clone") == ""
    meant = run(cube, "alias", inplace=False)
    assert all(torch.equal(a, b) for a, b in zip(run(cube, "clone", inplace=True)[:2], meant[:2]))
    assert not torch.equal(run(cube, "alias", inplace=True)[1], meant[1])  # the alias: a wrong gradient, silently
    root = lambda z: torch.sqrt(z.abs() + 1)                                # noqa: E731
    assert all("modified by an inplace operation" in outcome(root, identity) for identity in ("alias", "clone"))
