#!/usr/bin/env python3
"""Run the notebooks, each in a fresh kernel: in place (their committed outputs), or to time them for the
workshop's timings table.

    python tools/run_notebooks.py execute [NB...]   # run notebooks in place, each in a fresh kernel
    python tools/run_notebooks.py execute --korean  # the same for the Korean edition, in notebooks-ko/
    python tools/run_notebooks.py timings [NB...]   # run time, exercises, words: suggested workshop minutes
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

from nbcommon import KO_NOTEBOOKS, NOTEBOOKS, ROOT, read, select, write
from reading_time import TIMINGS_FORMULA, suggested_minutes, workshop_counts

# The facilitator guide's markers around the table; the start marker's words may name an older command.
TIMINGS_START = re.compile(r"<!-- timings: .*? -->")
TIMINGS_END = "<!-- /timings -->"
GUIDE = ROOT / "workshop" / "TIMINGS.md"   # the timings table lives there, between its markers


def run_in_fresh_kernel(nb, timeout: int = 300, *, kernel_name: str = "python3", cwd: Path = NOTEBOOKS,
                        env: dict[str, str] | None = None) -> float:
    """Run every cell of ``nb`` (in memory: nothing is written) in a new kernel; return the seconds taken.

    The one notebook runner of the project: ``execute``, ``timings`` and the tests all call it. ``cwd`` is the
    kernel's working directory; ``env``, if given, is the kernel's whole environment. A failing cell raises
    nbclient's ``CellExecutionError``, and the error is kept in ``nb``'s outputs.
    """
    from nbclient import NotebookClient

    start = time.perf_counter()
    # "immediate": once the last cell has replied, the kernel is stopped, not asked to exit, which takes longer
    # for a kernel that holds torch and matplotlib
    NotebookClient(nb, timeout=timeout, kernel_name=kernel_name, record_timing=False, coalesce_streams=True,
                   shutdown_kernel="immediate",
                   resources={"metadata": {"path": str(cwd)}}).execute(**({"env": env} if env else {}))
    return time.perf_counter() - start


def execute(names: list[str], timeout: int = 300, folder: Path = NOTEBOOKS) -> int:
    total = 0.0
    for path in select(names, folder):
        nb = read(path)
        seconds = run_in_fresh_kernel(nb, timeout, cwd=folder)
        total += seconds
        nb.metadata.pop("widgets", None)
        write(nb, path)
        print(f"{path.name}: {seconds:.1f} s")
    print(f"total: {total:.1f} s")
    return 0


def timings_table(rows: list[tuple[str, float, dict[str, int]]]) -> str:
    """A markdown table: one row per (notebook file name, run seconds, counts), then the totals."""
    lines = ["| notebook | run time (s) | markdown words | code cells | predictions | exercises | quiz questions "
             "| suggested minutes |",
             "|---|--:|--:|--:|--:|--:|--:|--:|"]
    for name, seconds, c in rows:
        lines.append(f"| {Path(name).stem} | {seconds:.1f} | {c['words']} | {c['code_cells']} | {c['predictions']} "
                     f"| {c['exercises']} | {c['quiz']} | {suggested_minutes(c, seconds)} |")
    total = sum(suggested_minutes(c, s) for _, s, c in rows)
    sums = {k: sum(c[k] for _, _, c in rows) for k in ("words", "code_cells", "predictions", "exercises", "quiz")}
    lines.append(f"| **total** | {sum(round(s, 1) for _, s, _ in rows):.1f} | {sums['words']} | {sums['code_cells']} "
                 f"| {sums['predictions']} | {sums['exercises']} | {sums['quiz']} "
                 f"| **{total}** ({total // 60} h {total % 60:02d} min) |")
    return "\n".join(lines)


def machine() -> str:
    """A one-line description of this machine and its Python and torch, for the timings' caption."""
    import os
    import platform
    from importlib.metadata import PackageNotFoundError, version

    try:
        torch_version = version("torch")
    except PackageNotFoundError:
        torch_version = "not installed"
    return (f"{platform.system()} {platform.machine()}, {os.cpu_count()}-core CPU, "
            f"Python {platform.python_version()}, torch {torch_version}")


def timings(names: list[str], timeout: int = 300, write: bool = False) -> int:
    """Run each notebook in a fresh kernel (writing nothing) and print the markdown timings table.

    With ``write``, also put the table into the facilitator guide, between its timings markers.
    """
    rows = []
    for path in select(names):
        nb = read(path)
        counts = workshop_counts(nb)
        seconds = run_in_fresh_kernel(nb, timeout)
        rows.append((path.name, seconds, counts))
        print(f"{path.name}: {seconds:.1f} s", file=sys.stderr)  # progress; stdout is the table
    text = (f"Measured on {time.strftime('%Y-%m-%d')}, {machine()}, with `python tools/run_notebooks.py timings` "
            "(run time: a fresh kernel, start-up included).\n\n"
            f"{TIMINGS_FORMULA}.\n\n{timings_table(rows)}")
    print(text)
    if write:
        guide = GUIDE.read_text()
        start, end = TIMINGS_START.search(guide).end(), guide.index(TIMINGS_END)
        GUIDE.write_text(guide[:start] + "\n\n" + text.rstrip() + "\n\n" + guide[end:])
        print(f"timings: written to {GUIDE.relative_to(ROOT)}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for command, text in (("execute", "execute notebooks in place in fresh kernels"),
                          ("timings", "run notebooks (writing nothing) and print a workshop timings table")):
        one = sub.add_parser(command, help=text)
        one.add_argument("notebooks", nargs="*", help="names like 01 or 01_clone_or_assign (default: all)")
        one.add_argument("--timeout", type=int, default=300, help="seconds per cell")
    sub.choices["execute"].add_argument("--korean", action="store_true", help="the Korean edition, in notebooks-ko/")
    sub.choices["timings"].add_argument("--write", action="store_true", help="also put the table into "
                                                                             "workshop/TIMINGS.md")
    args = parser.parse_args(argv)
    if args.command == "execute":
        return execute(args.notebooks, args.timeout, KO_NOTEBOOKS if args.korean else NOTEBOOKS)
    return timings(args.notebooks, args.timeout, args.write)


if __name__ == "__main__":
    sys.exit(main())
