"""The environment check that notebook 00 runs: OK or FAIL for everything the series needs."""

from __future__ import annotations

import importlib
import platform
import sys
from dataclasses import dataclass

# The torch releases that CI runs the whole series on: the lowest is the bound in
# pyproject.toml (a test keeps them in step), the highest is the newest that installs there.
TORCH_TESTED = ("2.3", "2.14")
# What the committed outputs were made with (`make notebooks`).
OUTPUTS_MADE_WITH = "torch 2.13.0 (CPU build), Python 3.11"

# (import name, distribution name, lowest version we support, required?)
PACKAGES = [
    ("torch", "torch", TORCH_TESTED[0], True),
    ("torchviz", "torchviz", "0.0.2", True),
    ("graphviz", "graphviz", "0.20", True),
    ("numpy", "numpy", "1.24", True),
    ("matplotlib", "matplotlib", "3.7", True),
    ("memory_profiler", "memory-profiler", "0.61", True),
    ("sklearn", "scikit-learn", "1.2", True),
    ("tqdm", "tqdm", "4.64", True),
    ("clonelab", "clonelab", "0.1", True),
]


def _version_tuple(text: str) -> tuple[int, ...]:
    parts = []
    for piece in text.split("+")[0].split("."):
        digits = "".join(ch for ch in piece if ch.isdigit())
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


def torch_in_tested_range(version: str) -> bool:
    """Whether a torch version string (``"2.13.0+cpu"``) is a release in :data:`TORCH_TESTED`.

    >>> torch_in_tested_range("2.13.0+cpu"), torch_in_tested_range("2.0.1"), torch_in_tested_range("2.99.0")
    (True, False, False)
    """
    minor = _version_tuple(version)[:2]
    return _version_tuple(TORCH_TESTED[0])[:2] <= minor <= _version_tuple(TORCH_TESTED[1])[:2]


def show_versions(written_for: str | None = None) -> None:
    """Print one line of versions, and a warning line only where something differs from the tested set-up.

    The setup cell of every notebook calls this. ``written_for`` is the clonelab version
    that the notebook was written for.

    >>> show_versions()  # doctest: +ELLIPSIS
    clonelab ... · torch ... · Python ...
    """
    import clonelab

    if written_for is not None and not isinstance(written_for, str):
        raise TypeError(f"show_versions: written_for must be a version string like '0.1.0', got {written_for!r}")
    try:
        import torch
        torch_version = torch.__version__
    except ImportError:
        torch_version = None
    print(f"clonelab {clonelab.__version__} · torch {torch_version or '(not installed)'} · "
          f"Python {platform.python_version()}")
    low, high = TORCH_TESTED
    if torch_version is None:
        print(f"torch is missing: install a release from {low} to {high} (see the README).")
    elif not torch_in_tested_range(torch_version):
        print(f"Note: torch {torch_version} is outside the tested range (torch {low} to {high}). The outputs "
              f"shown were made with {OUTPUTS_MADE_WITH}, and a check may differ.")
    if written_for is not None and clonelab.__version__ != written_for:
        print(f"This notebook was written for clonelab {written_for}. Update the package: on Colab, "
              "Runtime > Restart session, then run this cell again; in a clone of the repository, "
              "`git pull` and `pip install -e .`.")


@dataclass
class EnvReport:
    """The lines of the check, each ``(status, what, detail)``; truthy when nothing required failed."""

    lines: list[tuple[str, str, str]]

    @property
    def ok(self) -> bool:
        return all(status != "FAIL" for status, what, _ in self.lines if what != "graphviz dot")

    @property
    def dot_ok(self) -> bool:
        return any(what == "graphviz dot" and status == "OK" for status, what, _ in self.lines)

    def __bool__(self) -> bool:
        return self.ok

    def __str__(self) -> str:
        return "\n".join(f"[{status:4}] {what:16} {detail}" for status, what, detail in self.lines)

    __repr__ = __str__


def check_environment(verbose: bool = True) -> EnvReport:
    """Check Python, torch (and its devices), the graphviz ``dot`` binary and each package.

    Prints one line per item (``[OK  ]`` / ``[FAIL]``), with an install hint for
    anything missing, and returns an :class:`EnvReport`. The ``dot`` binary is
    optional: without it the graphs fall back to matplotlib drawings.

    >>> report = check_environment(verbose=False)
    >>> report.ok
    True
    """
    from clonelab.graphs import dot_available, install_hint

    lines: list[tuple[str, str, str]] = []
    py_ok = sys.version_info >= (3, 10)
    lines.append(("OK" if py_ok else "FAIL", "python",
                  f"{platform.python_version()}" + ("" if py_ok else " (the series needs 3.10 or newer)")))
    for module, dist, lowest, _required in PACKAGES:
        try:
            mod = importlib.import_module(module)
        except Exception as err:  # ImportError, or a broken install raising something else
            lines.append(("FAIL", dist, f"not importable ({type(err).__name__}): pip install '{dist}>={lowest}'"))
            continue
        version = getattr(mod, "__version__", None)
        if version is None:
            from importlib.metadata import PackageNotFoundError, version as dist_version
            try:
                version = dist_version(dist)
            except PackageNotFoundError:
                version = "unknown"
        too_old = version != "unknown" and _version_tuple(version) < _version_tuple(lowest)
        detail = version + (f" (older than {lowest}: pip install -U '{dist}>={lowest}')" if too_old else "")
        if module == "torch" and not too_old:
            devices = ["cpu"]
            if mod.cuda.is_available():
                devices.append(f"cuda ({mod.cuda.get_device_name(0)})")
            if getattr(mod.backends, "mps", None) is not None and mod.backends.mps.is_available():
                devices.append("mps")
            detail += f", devices: {', '.join(devices)}"
        lines.append(("FAIL" if too_old else "OK", dist, detail))
    if dot_available():
        lines.append(("OK", "graphviz dot", "found: graphs render with torchviz"))
    else:
        lines.append(("FAIL", "graphviz dot", f"not on PATH; graphs fall back to matplotlib. {install_hint()}"))
    report = EnvReport(lines)
    if verbose:
        print(report)
    return report
