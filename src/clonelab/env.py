"""The environment check of notebook 00, and the versions line of every notebook's setup cell."""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import platform
import re
import sys
from dataclasses import dataclass

# The torch releases CI runs the series on: from pyproject.toml's bound (a test keeps them in step) to the newest.
TORCH_TESTED = ("2.3", "2.15")
OUTPUTS_MADE_WITH = "torch 2.14.1 (a CUDA build, run on the CPU), Python 3.11"  # what `make notebooks` ran
IMPORT_NAMES = {"memory-profiler": "memory_profiler", "scikit-learn": "sklearn"}   # where they differ
NOT_IMPORTED = {"sklearn", "setuptools"}  # found, not imported: clonelab reads only the digits file
OPTIONAL = ("torchvision", "graphviz dot")  # a FAIL here costs one comparison (notebook 09) or the nicer graphs


def requirements() -> list[tuple[str, str, str]]:
    """``(import name, distribution, lower bound)`` per installed dependency of clonelab (no extras), then clonelab.

    >>> ("torch", "torch", TORCH_TESTED[0]) in requirements()
    True
    """
    found = [re.fullmatch(r"([\w.-]+)\s*>=\s*([\w.]+)", r.strip()) for r in importlib.metadata.requires("clonelab") or []]
    return [(IMPORT_NAMES.get(m[1], m[1]), m[1], m[2]) for m in found if m] + [("clonelab", "clonelab", "0.1")]


def _version_tuple(text: str) -> tuple[int, ...]:
    """``"2.13.0+cpu"`` -> ``(2, 13, 0)``: the leading numbers of a version."""
    return tuple(int(n) for n in re.match(r"[\d.]*", text).group().split(".") if n)


def torch_in_tested_range(version: str) -> bool:
    """Whether a torch version string (``"2.13.0+cpu"``) is a release in :data:`TORCH_TESTED`.

    >>> torch_in_tested_range("2.13.0+cpu"), torch_in_tested_range("2.0.1"), torch_in_tested_range("2.99.0")
    (True, False, False)
    """
    low, high = (_version_tuple(v)[:2] for v in TORCH_TESTED)
    return low <= _version_tuple(version)[:2] <= high


def show_versions(written_for: str | None = None) -> None:
    """Print one line of versions, and a warning where they differ from the tested set-up or clonelab's ``written_for``.

    >>> show_versions()  # doctest: +ELLIPSIS
    clonelab ... · torch ... · Python ...
    """
    import clonelab
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
              "check out the release the notebook came with (`git fetch --tags`, then `git checkout` its tag, or "
              "`git pull` on a branch) and `pip install -e .`.")


@dataclass
class EnvReport:
    """The lines of the check, each ``(status, what, detail)``; ``ok``, and truthy, when nothing but an optional
    part (:data:`OPTIONAL`) failed."""

    lines: list[tuple[str, str, str]]

    @property
    def ok(self) -> bool:
        return all(status != "FAIL" for status, what, _ in self.lines if what not in OPTIONAL)

    def __bool__(self) -> bool:
        return self.ok

    def __repr__(self) -> str:
        return "\n".join(f"[{status:4}] {what:16} {detail}" for status, what, detail in self.lines)


def check_environment(verbose: bool = True) -> EnvReport:
    """Check Python, torch (and its devices), each package (imported; :data:`NOT_IMPORTED` only found), and the
    optional torchvision and Graphviz's ``dot``, a line each, ``[OK  ]`` or ``[FAIL]`` with an install hint;
    printed if ``verbose``. Notebook 00.

    >>> check_environment(verbose=False).ok
    True
    """
    from clonelab._fallback import dot_available, install_hint  # torch-free: this check runs before torch is there
    py_ok = sys.version_info >= (3, 10)
    lines = [("OK" if py_ok else "FAIL", "python",
              platform.python_version() + ("" if py_ok else " (the series needs 3.10 or newer)"))]
    for module, dist, lowest in requirements():
        try:
            mod = None if module in NOT_IMPORTED else importlib.import_module(module)
            if mod is None and importlib.util.find_spec(module) is None:
                raise ImportError(module)
        except Exception as err:  # ImportError, or a broken install raising something else
            lines.append(("FAIL", dist, f"not importable ({type(err).__name__}): pip install '{dist}>={lowest}'"))
            continue
        try:
            version = getattr(mod, "__version__", None) or importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            version = "unknown"
        too_old = version != "unknown" and _version_tuple(version) < _version_tuple(lowest)
        detail = version + (f" (older than {lowest}: pip install -U '{dist}>={lowest}')" if too_old else "")
        if module == "torch" and not too_old:
            devices = ["cpu"] + ([f"cuda ({mod.cuda.get_device_name(0)})"] if mod.cuda.is_available() else [])
            devices += ["mps"] if mod.backends.mps.is_available() else []
            detail += f", devices: {', '.join(devices)}"
        lines.append(("FAIL" if too_old else "OK", dist, detail))
    try:                     # a torchvision built for another torch raises RuntimeError (operator ... does not exist)
        lines.append(("OK", "torchvision", importlib.import_module("torchvision").__version__))
    except Exception as err:
        lines.append(("FAIL", "torchvision", f"not importable ({type(err).__name__}); notebook 09 skips its "
                      "comparison with it. Reinstall both from one index: pip install --force-reinstall torch "
                      "torchvision, with the --index-url torch came from"))
    lines.append(("OK", "graphviz dot", "found: graphs render with torchviz") if dot_available() else
                 ("FAIL", "graphviz dot", f"not on PATH; graphs fall back to matplotlib. {install_hint()}"))
    report = EnvReport(lines)
    if verbose:
        print(report)
    return report


def torchvision_resnet18():
    """torchvision's own ``resnet18()`` (random weights, eval mode), or ``None`` with a note where it does not import.

    >>> from clonelab import BasicBlock, resnet
    >>> resnet(BasicBlock, [2, 2, 2, 2], num_classes=1000).load_state_dict(torchvision_resnet18().state_dict())
    <All keys matched successfully>
    """
    try:
        from torchvision.models import resnet18
    except (ImportError, RuntimeError, OSError) as err:   # a torchvision built for another torch fails to load
        print(f"torchvision could not be imported ({type(err).__name__}): the comparison with its resnet18 is "
              "skipped. `pip install torchvision` (the release that goes with your torch) runs it.")
        return None
    return resnet18().train(False)
