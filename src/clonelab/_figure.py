"""What the pictures share: a closed figure, a frameless canvas, centred text, a palette, number checks."""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Real
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # only for type hints
    from matplotlib.figure import Figure

_FIG_W = 9.6  # inches: 960 px at the 100 dpi of JupyterLab's inline figures, under a 1000 px column
_MONO_CHAR = 0.6 / 72  # inches per point of font size, DejaVu Sans Mono
_PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f",
            "#bcbd22"]


def _light(colour: str, amount: float) -> tuple[float, ...]:
    from matplotlib.colors import to_rgb
    return tuple(c + (1 - c) * amount for c in to_rgb(colour))


def _floats(values: Any, argname: str, low: float | None = None) -> list[float]:
    """A list, array or tensor of numbers as floats; with ``low``, each must be finite and >= low."""
    values = values.tolist() if hasattr(values, "tolist") else values  # a tensor or a NumPy array
    if isinstance(values, str) or not isinstance(values, Sequence) or not all(isinstance(v, Real) for v in values):
        raise TypeError(f"{argname} must be a sequence of numbers; got {values!r:.60}")
    if not values:
        raise ValueError(f"{argname} must not be empty")
    if low is not None and not all(math.isfinite(v) and v >= low for v in values):
        raise ValueError(f"{argname} must all be finite" + ("" if low == -math.inf else f" and >= {low:g}"))
    return [float(v) for v in values]


def _canvas(size: tuple[float, float], xlim: tuple[float, float], ylim: tuple[float, float],
            **margins: float) -> tuple[Figure, Any]:
    """A figure of ``size`` inches with one frameless axes, placed by ``margins`` (left=, top=, ...)."""
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=size, gridspec_kw=margins, subplot_kw=dict(xlim=xlim, ylim=ylim))
    ax.axis("off")
    return fig, ax


def _closed(fig: Figure, tight: bool = True, **tight_args: Any) -> Figure:
    """Lay ``fig`` out (unless ``tight`` is False) and close it, so that it shows once, as the cell's value."""
    import matplotlib.pyplot as plt
    if tight:
        fig.tight_layout(**tight_args)
    plt.close(fig)
    return fig


def _text(ax: Any, x: float, y: float, s: str, size: float, colour: str | None = None, **kw: Any) -> None:
    """Text centred on (x, y) unless ``kw`` says otherwise (``ha``, ``va``)."""
    ax.text(x, y, s, fontsize=size, color=colour, **{"ha": "center", "va": "center", **kw})
