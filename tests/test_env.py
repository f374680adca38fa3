from __future__ import annotations

import os

from clonelab import check_environment


def test_everything_required_is_ok(capsys):
    report = check_environment()
    out = capsys.readouterr().out
    assert report.ok and bool(report)
    for name in ["python", "torch", "torchviz", "graphviz", "matplotlib", "memory-profiler", "scikit-learn", "tqdm"]:
        assert f"] {name}" in out
    assert "devices: cpu" in out


def test_missing_dot_is_a_fail_line_with_a_hint_but_not_fatal(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))
    report = check_environment()
    out = capsys.readouterr().out
    assert report.ok and ("FAIL", "graphviz dot") in [line[:2] for line in report.lines]
    assert "[FAIL] graphviz dot" in out and "install" in out


def test_dot_present_here():
    assert (("OK", "graphviz dot") in [line[:2] for line in check_environment(verbose=False).lines]) == bool(
        any(os.access(os.path.join(p, "dot"), os.X_OK) for p in os.environ["PATH"].split(os.pathsep)))


def test_show_versions_is_one_line_on_a_tested_torch(capsys):
    import platform

    import torch

    import clonelab
    from clonelab.env import torch_in_tested_range

    clonelab.show_versions(written_for=clonelab.__version__)
    lines = capsys.readouterr().out.splitlines()
    assert torch_in_tested_range(torch.__version__)
    assert lines == [f"clonelab {clonelab.__version__} · torch {torch.__version__} · Python {platform.python_version()}"]


def test_show_versions_warns_outside_the_tested_range(monkeypatch, capsys):
    import torch

    import clonelab
    from clonelab.env import OUTPUTS_MADE_WITH, TORCH_TESTED

    monkeypatch.setattr(torch, "__version__", "2.0.1")
    clonelab.show_versions(written_for="0.0.1")
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 3
    assert "torch 2.0.1" in out[1] and OUTPUTS_MADE_WITH in out[1] and TORCH_TESTED[0] in out[1]
    assert "written for clonelab 0.0.1" in out[2]


def test_tested_range_edges():
    from clonelab.env import TORCH_TESTED, torch_in_tested_range

    low, high = TORCH_TESTED
    assert torch_in_tested_range(low + ".0") and torch_in_tested_range(high + ".9+cpu")
    major, minor = map(int, low.split("."))
    assert not torch_in_tested_range(f"{major}.{minor - 1}.9")
    major, minor = map(int, high.split("."))
    assert not torch_in_tested_range(f"{major}.{minor + 1}.0")


def test_the_environment_check_runs_before_torch_is_installed():
    """Notebook 00's first check must report a missing torch, not crash on it: import torch is made to fail."""
    import subprocess
    import sys

    code = ("import sys; sys.modules['torch'] = None\n"  # `import torch` now raises ImportError
            "import clonelab; report = clonelab.check_environment(verbose=False)\n"
            "print(report.ok, [line for line in str(report).splitlines() if 'torch' in line][0])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("False [FAIL]") and "pip install 'torch>=" in out.stdout, out.stdout


def test_scikit_learn_is_found_without_being_imported_and_a_missing_one_fails(monkeypatch):
    import importlib.util
    import subprocess
    import sys

    code = "import sys, clonelab; clonelab.check_environment(verbose=False); print('sklearn' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "sklearn" else real(name, *a))
    report = check_environment(verbose=False)
    assert not report.ok and ("FAIL", "scikit-learn") in [line[:2] for line in report.lines]


def test_a_broken_torchvision_is_an_optional_fail_line(monkeypatch):
    """A torchvision built for another torch raises RuntimeError on import: the check says so, and is still ok."""
    import importlib

    real = importlib.import_module

    def broken(name, *args):
        if name == "torchvision":
            raise RuntimeError("operator torchvision::nms does not exist")
        return real(name, *args)

    monkeypatch.setattr(importlib, "import_module", broken)
    report = check_environment(verbose=False)
    line = next(line for line in report.lines if line[1] == "torchvision")
    assert line[0] == "FAIL" and "RuntimeError" in line[2] and "notebook 09" in line[2]
    assert report.ok


def test_torchvision_is_ok_where_it_imports():
    import pytest

    torchvision = pytest.importorskip("torchvision")
    assert ("OK", "torchvision", torchvision.__version__) in check_environment(verbose=False).lines
