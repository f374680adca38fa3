"""Colab, simulated as closely as this machine allows: every instructor copy and every student copy.

Colab's default runtime runs Python 3.13 since August 2026 (googlecolab/colabtools issue 6081), and the setup
cell's pip runs there as root, in the system environment, not in a virtual environment. So the simulation
copies a whole Python 3.13 installation (pyenv's) to a folder of its own and uses it as the system Python,
as root: pip then warns as it does on Colab. It gets a CUDA build of torch, run on the CPU as on a Colab CPU
runtime, and the other packages Colab ships preinstalled (numpy, matplotlib, scikit-learn, tqdm, ipykernel),
but not clonelab, torchviz or memory-profiler; plus an importable stub ``google.colab`` module. Each
notebook, run in that kernel, must take the setup cell's Colab branch, install what is missing, and run to
the end with no error and nothing on stderr, the setup cell included. CLONELAB_SOURCE, the override the
guide documents, points the install at a wheel of this checkout instead of the release tag on GitHub.

    COLAB_PYTHON   the Python installation to copy (default: pyenv's 3.13, or python3.13 on PATH)
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
# and the Korean edition: its 00, and a student copy with exercises (its check() prints Korean)
COPIES = notebook_paths() + [STUDENT / p.name for p in notebook_paths()] + \
    [ROOT / "notebooks-ko" / "00_start_here.ipynb", ROOT / "workshop" / "student-ko" / "05_autograd_meets_inplace.ipynb"]


COLAB_VERSION = (3, 13)


def _colab_python() -> str | None:
    """COLAB_PYTHON, else the first Python 3.13 that runs: pyenv's, then python3.13 on PATH."""
    if os.environ.get("COLAB_PYTHON"):
        return os.environ["COLAB_PYTHON"]
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates = [str(p) for p in sorted(pyenv.glob("3.13*/bin/python3.13"))] + [shutil.which("python3.13")]
    for candidate in filter(None, candidates):
        ran = subprocess.run([candidate, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True)
        if ran.returncode == 0 and ran.stdout.strip() == str(COLAB_VERSION):
            return candidate
    return None


@pytest.fixture(scope="module")
def colab_kernel(tmp_path_factory):
    found_python = _colab_python()
    if found_python is None:
        message = "no Python 3.13 here: set COLAB_PYTHON to one (Colab runs 3.13)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    base = tmp_path_factory.mktemp("colab")
    # the installation itself, copied: a system Python, as on Colab (a venv would hide pip's root warnings)
    prefix = subprocess.run([found_python, "-c", "import sys; print(sys.base_prefix)"], capture_output=True,
                            text=True, check=True).stdout.strip()
    shutil.copytree(prefix, base / "system", symlinks=True)
    python = base / "system" / "bin" / Path(found_python).name
    version = subprocess.run([str(python), "-c", "import sys; print(sys.version_info[:2], sys.prefix)"],
                             capture_output=True, text=True, check=True).stdout.split()
    assert " ".join(version[:2]) == str(COLAB_VERSION) and Path(version[2]) == base / "system", version
    subprocess.run([str(python), "-m", "pip", "install", "-q", f"torch=={COLAB_TORCH}", *COLAB_PREINSTALLED],
                   check=True)
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    stub = Path(site) / "google" / "colab"
    stub.mkdir(parents=True)
    (stub / "__init__.py").write_text('"""A stand-in for the module that exists only on Google Colab."""\n')
    found = subprocess.run([str(python), "-c", "import importlib.util as u, sys, torch; "
                            "print([m for m in ('clonelab', 'torchviz', 'memory_profiler') if u.find_spec(m)], "
                            "sys.version_info[:2], sys.prefix == sys.base_prefix, torch.version.cuda is not None)"],
                           capture_output=True, text=True, check=True).stdout.strip()
    assert found == f"[] {COLAB_VERSION} True True", f"the simulated Colab is not as intended: {found}"
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
    # one line, the versions: pip's notes (the root user, the resolver) stay out of the reader's view
    assert printed.startswith(f"clonelab {clonelab.__version__} · torch {COLAB_TORCH}"), printed
    assert "was written for" not in printed and "outside the tested range" not in printed, printed
    assert stray_stderr(nb) == [], stray_stderr(nb)
