"""How long a notebook takes: the formula behind the time markers, the notes' core-path minutes and the
workshop's timings table. workshop/TIMINGS.md states this formula and pastes the table."""

from __future__ import annotations

import re

from nbcommon import SOLUTION_TAG, TIME_MARK, is_deeper, is_folded, is_stamped

# The five figures below are a least-squares fit, made on 2026-12-04, of the formula (core_split's parts: the core
# path's reading, before and after the exercises, and the exercises) to the minutes of round 10's twelve
# first-time readers of the cut series, one a notebook, on the notebooks as committed at CALIBRATION_COMMIT
# (CALIBRATION_READERS). The fit gave 66 wpm, 0.07, 1.66, 3.5 and 2.14; rounded, they miss a reader by 1.7 min
# (root mean square), where the constants they replace (75 wpm, 0.15, 1.25, 5, 2.25, fitted to round 1 on the
# uncut series) missed by 3.0. To recalibrate after another round, replace these seven constants and nothing
# else: tests/test_workshop.py refits them.
CALIBRATION_COMMIT = "ffa1721"
CALIBRATION_READERS = {  # notebook: (core path, exercises), minutes
    "00": (10, 0), "01": (18, 9), "02": (19, 10), "03": (23, 6), "04": (21, 7), "05": (20, 8),
    "06": (17, 6), "07": (18, 10), "08": (22, 9), "09": (18, 11), "10": (18, 12), "11": (14, 13)}
READ_WPM = 66               # markdown words a minute, the predictions' thinking counted apart
MIN_PER_CODE_CELL = 0.07    # read a code cell, run it, look at its output (the fit's least certain figure)
MIN_PER_PREDICTION = 1.65   # a **Predict** prompt: think, or a show of hands, before the cell runs
MIN_PER_EXERCISE = 3.5      # an exercise: try, check, read the hint, try again (its task's words counted apart)
MIN_PER_QUIZ = 2.15         # a quiz question: recall and check; no new code to write
# Not fitted (the readers ran alone and read the core path only): the run time and the discussion, for the
# timings table of whole notebooks.
RUN_FACTOR = 2            # each second of computing counts twice: people wait, then read what came out
DISCUSSION_MIN = 5        # per notebook: questions, and the summary together
ROUND_TO = 5              # a schedule is made of 5-minute blocks
TIMINGS_FORMULA = (f"suggested minutes = markdown words / {READ_WPM} + {MIN_PER_CODE_CELL} × code cells "
                   f"+ {RUN_FACTOR} × run time (s) / 60 + {MIN_PER_PREDICTION} × predictions + {MIN_PER_EXERCISE} × exercises "
                   f"+ {MIN_PER_QUIZ} × quiz questions + {DISCUSSION_MIN} (discussion), rounded up to a multiple of "
                   f"{ROUND_TO}")
QUIZ_CHECK = re.compile(r"""\bcheck\(\s*["']quiz\.""")
PREDICTION = re.compile(r"\*\*Predict\b")
PRACTICE_HEADINGS = ("Exercises", "Quiz")


def _words(markdown: str) -> int:
    """Words a reader reads: HTML comments, link targets and stamped time markers left out."""
    prose = re.sub(r"\]\([^)]*\)", "]", re.sub(r"<!--.*?-->", " ", TIME_MARK.sub("", markdown), flags=re.S))
    return sum(1 for w in prose.split() if re.search(r"\w", w))


def cell_minutes(cell) -> float:
    """The formula's minutes for one cell (no run time: that is measured per notebook)."""
    if SOLUTION_TAG in cell.metadata.get("tags", []):
        return MIN_PER_QUIZ if QUIZ_CHECK.search(cell.source) else MIN_PER_EXERCISE
    if cell.cell_type == "markdown":
        return _words(cell.source) / READ_WPM + MIN_PER_PREDICTION * len(PREDICTION.findall(cell.source))
    return MIN_PER_CODE_CELL if cell.source.strip() and not is_folded(cell) else 0.0


def _core_path(nb):
    """(cell index, the "## " heading it is under, cell) for every cell on the core path, in order.

    The core path is every cell but the stamped ones and the *Deeper* notes; an exercise counts as
    its solution cell does in the timings formula (a student copy has the exercise, not the solution).
    """
    heading = None
    for i, cell in enumerate(nb.cells):
        if is_stamped(cell) or is_deeper(cell):
            continue
        if cell.cell_type == "markdown" and cell.source.startswith("## "):
            heading = cell.source.splitlines()[0][3:].strip()
        yield i, heading, cell


def core_timeline(nb) -> tuple[list[tuple[int, str, int]], int]:
    """(cell index, "## " heading, estimated minutes before it) along the core path, and the core path's minutes."""
    marks, minutes = [], 0.0
    for i, heading, cell in _core_path(nb):
        if cell.cell_type == "markdown" and cell.source.startswith("## "):
            marks.append((i, heading, round(minutes)))
        minutes += cell_minutes(cell)
    return marks, round(minutes)


def core_split(nb) -> tuple[int, int, int]:
    """The core path's estimated minutes in three parts: before the exercises (or quiz), for them, and after them
    (the Summary). The first and the first two add up as the "to here" markers at those headings do."""
    parts, at = [0.0, 0.0, 0.0], 0
    for _, heading, cell in _core_path(nb):
        at = 1 if heading in PRACTICE_HEADINGS else 2 if at else 0
        parts[at] += cell_minutes(cell)
    ends = [round(sum(parts[:k])) for k in (1, 2, 3)]   # rounded where the markers round: the parts add up to them
    return ends[0], ends[1] - ends[0], ends[2] - ends[1]


def workshop_counts(nb) -> dict[str, int]:
    """What takes workshop time in ``nb``: markdown words, code cells, predictions, exercises and quiz questions.

    The stamped cells (badge, setup, navigation) are left out, and so are HTML comments, link targets and
    time markers. Exercises and quiz questions are the cells tagged ``solution`` (a quiz question's
    solution checks a ``quiz.`` id); code cells are the other non-empty ones, as a student copy has them,
    but for the folded ones (checks, and listings the prose describes);
    predictions are the **Predict** prompts in markdown.
    """
    cells = [c for c in nb.cells if not is_stamped(c)]
    solutions = [c for c in cells if SOLUTION_TAG in c.metadata.get("tags", [])]
    markdown = [c.source for c in cells if c.cell_type == "markdown"]
    quiz = sum(1 for c in solutions if QUIZ_CHECK.search(c.source))
    code = sum(1 for c in cells
               if c.cell_type == "code" and c.source.strip() and c not in solutions and not is_folded(c))
    return {"words": sum(_words(m) for m in markdown), "code_cells": code,
            "predictions": sum(len(PREDICTION.findall(m)) for m in markdown),
            "exercises": len(solutions) - quiz, "quiz": quiz}


def suggested_minutes(counts: dict[str, int], run_seconds: float) -> int:
    """TIMINGS_FORMULA applied to ``workshop_counts(nb)`` and the measured run time."""
    minutes = (counts["words"] / READ_WPM + MIN_PER_CODE_CELL * counts["code_cells"]
               + RUN_FACTOR * run_seconds / 60 + MIN_PER_PREDICTION * counts.get("predictions", 0)
               + MIN_PER_EXERCISE * counts["exercises"]
               + MIN_PER_QUIZ * counts["quiz"] + DISCUSSION_MIN)
    return ROUND_TO * int(-(-minutes // ROUND_TO))  # round up
