"""The ways to install the series agree with each other."""

from __future__ import annotations

import re

import clonelab
from conftest import ROOT

# conda-forge name -> PyPI name, where they differ
CONDA_TO_PYPI = {"pytorch": "torch", "python-graphviz": "graphviz", "memory_profiler": "memory-profiler"}
NOT_PACKAGES = {"python", "pip", "graphviz"}  # the interpreter, the installer, the `dot` binary


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[ ;#]", requirement.strip(), maxsplit=1)[0].lower()


def _pyproject_names() -> set[str]:
    text = (ROOT / "pyproject.toml").read_text()
    names = set()
    for block in re.findall(r"^(?:dependencies|lab|test) = \[(.*?)^\]", text, re.S | re.M):
        names |= {_name(r) for r in re.findall(r'"([^"]+)"', block)}
    return names


def _environment_names() -> set[str]:
    names = set()
    text = (ROOT / "environment.yml").read_text()
    for line in text.split("\ndependencies:", 1)[1].splitlines():
        m = re.match(r"^\s+- (?!-e )([A-Za-z0-9_.-]+)", line)
        if m and not line.strip().startswith("- pip:"):
            name = m.group(1).lower()
            if name not in NOT_PACKAGES:
                names.add(CONDA_TO_PYPI.get(name, name))
    return names


def test_environment_yml_and_pyproject_name_the_same_packages():
    assert _pyproject_names() == _environment_names()
    assert {"torch", "torchviz", "graphviz", "matplotlib", "memory-profiler", "scikit-learn", "tqdm",
            "setuptools", "jupyterlab", "pytest", "nbclient", "nbformat", "hypothesis"} <= _pyproject_names()


def test_dependencies_are_lower_bounds_not_pins():
    text = (ROOT / "pyproject.toml").read_text()
    assert "==" not in text
    assert "==" not in (ROOT / "environment.yml").read_text()


def test_version_has_one_source():
    text = (ROOT / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in text and 'attr = "clonelab.__version__"' in text
    assert re.fullmatch(r"\d+\.\d+\.\d+", clonelab.__version__)


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test" in readme
    assert re.search(r"^make test\b", ci, re.M), ".ci/run must run `make test`, the README's command"
    assert re.search(r"^make test-lower\b", ci, re.M), ".ci/run must run the notebooks on the lowest torch"
    assert "apt-get install -y graphviz" in ci


def test_one_tested_torch_range_everywhere():
    """pyproject.toml, environment.yml, the Makefile's lower-bound run, the README and the setup cell agree."""
    from clonelab.env import TORCH_TESTED

    low, high = TORCH_TESTED
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert re.search(rf'^\s+"torch>={re.escape(low)}",', pyproject, re.M), "pyproject.toml's torch bound"
    assert re.search(rf"^\s+- pytorch>={re.escape(low)}$", (ROOT / "environment.yml").read_text(), re.M)
    lower = re.search(r"^LOWER_TORCH \?= (\S+)$", (ROOT / "Makefile").read_text(), re.M).group(1)
    assert lower.split(".")[:2] == low.split("."), f"make test-lower runs torch {lower}, the bound is {low}"
    assert f"tested on torch {low} to {high}" in (ROOT / "README.md").read_text()


def test_import_is_light():
    import subprocess
    import sys

    code = "import sys, clonelab; print(sorted(m for m in ('torch', 'matplotlib', 'sklearn', 'torchviz') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_unknown_public_name_is_a_clear_error():
    import pytest

    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        clonelab.nope  # noqa: B018
    assert set(clonelab.__all__) <= set(dir(clonelab)) | {"__version__"}


def test_no_public_name_is_shadowed_by_a_submodule():
    """`import clonelab.x` sets the attribute `x` on the package: a function named like its module breaks."""
    import pkgutil

    modules = {info.name for info in pkgutil.iter_modules(clonelab.__path__)}
    assert not modules & set(clonelab.__all__), modules & set(clonelab.__all__)


def test_the_readme_map_names_every_module_of_the_package():
    """Each row of the README's package map names its modules in backticks; every module is on the map."""
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## The helper package"):]
    package = ROOT / "src" / "clonelab"
    mapped = {name.rstrip("/") for row in re.findall(r"^\|[^|\n]*\| (`[^|\n]*) \|", section, re.M)
              for name in re.findall(r"`([\w/]+)`", row)}
    modules = {p.stem for p in package.glob("*.py")} - {"__init__"} | {"exercises"}
    assert modules <= mapped, f"modules missing from the README's map: {sorted(modules - mapped)}"


def test_no_module_of_the_package_imports_itself_in_a_circle():
    """Every `import clonelab.x` / `from clonelab.x import ...` in the package, at module level or inside a
    function, as a graph of modules: it has no cycle (graphs -> _fallback -> _autograd, never back)."""
    import ast

    package = ROOT / "src" / "clonelab"
    imports = {}
    for path in package.rglob("*.py"):
        parts = path.relative_to(package).with_suffix("").parts
        name = ".".join(("clonelab", *parts[:-1])) if parts[-1] == "__init__" else ".".join(("clonelab", *parts))
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("clonelab"):
                found.add(node.module)
            elif isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names if alias.name.startswith("clonelab")}
        imports[name] = found - {name}

    def circle_from(start, path):
        for nxt in sorted(imports.get(path[-1], ())):
            if nxt == start:
                return path + [start]
            if nxt not in path and nxt in imports and (found := circle_from(start, path + [nxt])):
                return found
        return None

    circles = [c for m in sorted(imports) if (c := circle_from(m, [m]))]
    assert not circles, f"import circles: {circles}"
