#!/usr/bin/env python3
"""Regenerate the pictures in images/ from the helper package (run again at will).

    python tools/make_images.py

images/names_tensors_storage.png   the names -> tensor objects -> storage diagram
images/alias_vs_clone_graph.png    the blog post's toy model, alias vs clone, as autograd graphs
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import torch  # noqa: E402

from clonelab import draw_graph, plot_storage, side_by_side, toy_residual  # noqa: E402

IMAGES = Path(__file__).resolve().parent.parent / "images"


def main() -> None:
    IMAGES.mkdir(exist_ok=True)
    a = torch.arange(6.0)
    b = a
    fig = plot_storage({"a": a, "b": b, "c": a.view(2, 3), "d": a[1::2], "e": a.clone()},
                       title="b = a shares the object; views share the storage; clone() owns new storage")
    fig.savefig(IMAGES / "names_tensors_storage.png", dpi=110, bbox_inches="tight",
                metadata={"Software": None})
    alias = toy_residual("alias", backward=False)
    clone = toy_residual("clone", backward=False)
    params = lambda m: {"weight1": m.weight1, "weight2": m.weight2}  # noqa: E731
    pair = side_by_side(draw_graph(alias.loss, params(alias)), draw_graph(clone.loss, params(clone)),
                        titles=("identity = feature", "identity = feature.clone()"))
    pair.save(IMAGES / "alias_vs_clone_graph.png")
    print("wrote", ", ".join(sorted(p.name for p in IMAGES.iterdir())))


if __name__ == "__main__":
    main()
