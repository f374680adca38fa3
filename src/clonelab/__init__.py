"""clonelab: helpers for a notebook series on tensor memory, aliasing and clone().

The public names are loaded lazily, so ``import clonelab`` is cheap and works before torch is installed.

>>> import clonelab; clonelab.__version__
'0.1.0'
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

# module -> the public names it defines; the first use of a name imports its module
_MODULES = {
    "inspection": "describe shares_storage storage_positions version_snapshot",
    "_table": "Table",
    "watch": "watch_ops",
    "memory": "measure saved_for_backward saved_by_node allocation_lifetimes memory_timeline",
    "rss": "rss_line_profile rss_increments rss_bytes",
    "cost": "model_clone_cost block_inputs",
    "graphs": "draw_graph side_by_side draw_fallback dot_available install_hint graph_nodes GraphDrawing",
    "_autograd": "backward_nodes where_it_raises",
    "models": "toy_residual BasicBlock Bottleneck SecondCodeBlock SecondCodeBottleneck PreActBlock ReluFirstBlock "
              "resnet take_identity conv1x1",
    # the blog post's memory_profiler workloads (functions in a file, so that it can profile them line by line)
    "workloads": "assign_tensor clone_tensor clone_of empty_like_unwritten",
    "data": "load_digits_tensors",
    "training": "train History weight_distance",
    "storage_diagram": "plot_storage",
    "plots": "decision_chart plot_memory_timeline plot_versions plot_history plot_memory_comparison",
    "_util": "format_bytes",
    "exercises": "check",
    "env": "check_environment show_versions torchvision_resnet18",
    "i18n": "set_language",
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names.split()}

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
