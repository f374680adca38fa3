"""clonelab: helpers for a notebook series on tensor memory, aliasing and clone().

The public names are re-exported here and loaded lazily, so ``import clonelab``
is cheap and works even before torch is installed (the environment check in
notebook 00 relies on that).

>>> import clonelab
>>> clonelab.__version__
'0.1.0'
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

# public name -> module that defines it
_EXPORTS = {
    # inspection
    "describe": "inspection",
    "shares_storage": "inspection",
    "storage_positions": "inspection",
    "Table": "_table",
    # op watching
    "watch_ops": "watch",
    # memory
    "measure": "memory",
    "saved_for_backward": "memory",
    "saved_by_node": "memory",
    "allocation_lifetimes": "memory",
    "rss_line_profile": "rss",
    "rss_increments": "rss",
    "rss_bytes": "rss",
    "model_clone_cost": "cost",
    "block_inputs": "cost",
    # graphs
    "draw_graph": "graphs",
    "side_by_side": "graphs",
    "draw_fallback": "graphs",
    "dot_available": "graphs",
    "install_hint": "graphs",
    "graph_nodes": "graphs",
    "GraphDrawing": "graphs",
    "backward_nodes": "_autograd",
    # models
    "toy_residual": "models",
    "BasicBlock": "models",
    "Bottleneck": "models",
    "SecondCodeBlock": "models",
    "SecondCodeBottleneck": "models",
    "PreActBlock": "models",
    "ReluFirstBlock": "models",
    "resnet": "models",
    "take_identity": "models",
    "conv1x1": "models",
    # the blog post's memory_profiler workloads (functions in a file, so that it can profile them line by line)
    "assign_tensor": "workloads",
    "clone_tensor": "workloads",
    "clone_of": "workloads",
    "empty_like_unwritten": "workloads",
    # data and training
    "load_digits_tensors": "data",
    "train": "training",
    "History": "training",
    "weight_distance": "training",
    # pictures
    "plot_storage": "storage_diagram",
    "decision_chart": "plots",
    "plot_memory_timeline": "plots",
    "memory_timeline": "memory",
    "plot_versions": "plots",
    "version_snapshot": "inspection",
    "plot_history": "plots",
    "plot_memory_comparison": "plots",
    "format_bytes": "_util",
    # exercises and the environment check
    "check": "exercises",
    "check_environment": "env",
    "show_versions": "env",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'clonelab' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"clonelab.{module}"), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__():
    return sorted(__all__)
