"""Every docstring example in the package runs and prints what it says."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import clonelab

MODULES = sorted(
    info.name for info in pkgutil.walk_packages(clonelab.__path__, "clonelab.")
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{name}: {result.failed} docstring example(s) failed"


# memory_profiler prints these functions line by line in notebook 07, docstring included: an example there
# would clutter the report that reproduces the blog post's
NO_EXAMPLE = {"assign_tensor", "clone_tensor", "clone_of", "empty_like_unwritten"}


def test_every_public_name_has_a_docstring_with_an_example():
    for name in clonelab.__all__:
        if name == "__version__" or name in NO_EXAMPLE:
            continue
        obj = getattr(clonelab, name)
        doc = obj.__doc__ or ""
        assert ">>>" in doc, f"clonelab.{name} has no example in its docstring"


def test_graph_examples_that_need_dot_run_when_it_is_here():
    """graphs.py marks the examples that draw with `dot` +SKIP (a reader may not have it); here they run."""
    from clonelab.graphs import dot_available

    if not dot_available():
        pytest.skip("Graphviz's dot is not installed")
    module = importlib.import_module("clonelab.graphs")
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    skipped = 0
    for test in doctest.DocTestFinder().find(module):
        for example in test.examples:
            skipped += example.options.pop(doctest.SKIP, False)
        runner.run(test)
    assert skipped >= 5, "the +SKIP examples of graphs.py were not found"
    assert runner.failures == 0, f"{runner.failures} example(s) of graphs.py failed with dot present"
