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
    assert report.ok and not report.dot_ok
    assert "[FAIL] graphviz dot" in out and "install" in out


def test_dot_present_here():
    assert check_environment(verbose=False).dot_ok == bool(
        any(os.access(os.path.join(p, "dot"), os.X_OK) for p in os.environ["PATH"].split(os.pathsep)))
