"""Colab, simulated as closely as this machine allows: every instructor copy and every student copy.

A fresh virtual environment with Python 3.12 (what Colab runs) gets a CUDA build of torch, run on the
CPU as on a Colab CPU runtime, and the other packages Colab ships preinstalled (numpy, matplotlib,
scikit-learn, tqdm, ipykernel), but not clonelab, torchviz or memory-profiler; plus an importable stub
``google.colab`` module. Each notebook, run in that kernel, must take the setup cell's Colab branch,
install what is missing, and run to the end without an error. CLONELAB_SOURCE, the override the guide
documents, points the install at a wheel of this checkout instead of the release tag on GitHub.

    COLAB_PYTHON   the Python to use (default: python3.12 on PATH, or pyenv's 3.12)
    COLAB_TORCH    the torch release (default below; set it to what Colab ships today)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import clonelab
from conftest import ROOT, notebook_paths, run_notebook, stray_stderr

pytestmark = [pytest.mark.colab, pytest.mark.notebooks]

COLAB_TORCH = os.environ.get("COLAB_TORCH", "2.9.1")   # a CUDA build on Linux from PyPI, inside the tested range
COLAB_PREINSTALLED = ["numpy", "matplotlib", "scikit-learn", "tqdm", "ipykernel"]
STUDENT = ROOT / "workshop" / "student"
COPIES = notebook_paths() + [STUDENT / p.name for p in notebook_paths()]


def _python312() -> str | None:
    """COLAB_PYTHON, else the first Python 3.12 that runs: pyenv's, then python3.12 on PATH."""
    if os.environ.get("COLAB_PYTHON"):
        return os.environ["COLAB_PYTHON"]
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates = [str(p) for p in sorted(pyenv.glob("3.12*/bin/python3.12"))] + [shutil.which("python3.12")]
    for candidate in filter(None, candidates):
        ran = subprocess.run([candidate, "-c", "import sys, venv; print(sys.version_info[:2])"],
                             capture_output=True, text=True)
        if ran.returncode == 0 and ran.stdout.strip() == "(3, 12)":
            return candidate
    return None


@pytest.fixture(scope="module")
def colab_kernel(tmp_path_factory):
    python312 = _python312()
    if python312 is None:
        message = "no Python 3.12 here: set COLAB_PYTHON to one (Colab runs 3.12)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    base = tmp_path_factory.mktemp("colab")
    venv = base / "venv"
    subprocess.run([python312, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", f"torch=={COLAB_TORCH}", *COLAB_PREINSTALLED],
                   check=True)
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    stub = Path(site) / "google" / "colab"
    stub.mkdir(parents=True)
    (stub / "__init__.py").write_text('"""A stand-in for the module that exists only on Google Colab."""\n')
    found = subprocess.run([str(python), "-c", "import importlib.util as u, sys, torch; "
                            "print([m for m in ('clonelab', 'torchviz', 'memory_profiler') if u.find_spec(m)], "
                            "sys.version_info[:2], torch.version.cuda is not None)"],
                           capture_output=True, text=True, check=True).stdout.strip()
    assert found == "[] (3, 12) True", f"the simulated Colab is not as intended: {found}"
    # one wheel of this checkout, so each notebook's install is quick once the first has run
    wheels = base / "wheels"
    subprocess.run([str(python), "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(ROOT)], check=True)
    wheel = next(wheels.glob("clonelab-*.whl"))
    spec = base / "jupyter" / "kernels" / "colab-sim"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Colab (simulated)",
        "language": "python",
        "env": {"CLONELAB_SOURCE": str(wheel)},
    }))
    return base / "jupyter"


@pytest.mark.parametrize("path", COPIES, ids=[str(p.relative_to(ROOT)) for p in COPIES])
def test_every_copy_runs_on_simulated_colab(colab_kernel, path, monkeypatch):
    monkeypatch.setenv("JUPYTER_PATH", str(colab_kernel))
    nb = run_notebook(path, timeout=600, kernel_name="colab-sim", cwd=path.parent)
    setup = next(c for c in nb.cells if c.get("id") == "clonelab-setup")
    printed = "".join(o.get("text", "") for o in setup.outputs if o.output_type == "stream")
    # pip's own output (e.g. warnings about a local pip configuration) may come first
    assert any(line.startswith(f"clonelab {clonelab.__version__} · torch {COLAB_TORCH}")
               for line in printed.splitlines()), printed
    assert "was written for" not in printed and "outside the tested range" not in printed, printed
    setup.outputs = []  # pip may warn on stderr while it installs; the rest must be clean
    assert stray_stderr(nb) == [], stray_stderr(nb)
