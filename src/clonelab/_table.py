"""A tiny table type shared by the helpers: HTML in Jupyter, aligned text elsewhere."""

from __future__ import annotations

import html
from typing import Any, Sequence


def _fmt(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


class Table:
    """Rows of equal-length cells under a header, with an optional ``title``; ValueError for a row of another length.
    HTML in Jupyter, aligned text with ``str``; ``rows`` keeps the raw values.

    >>> t = Table(["name", "bytes"], [["x", 12], ["y", 0]])
    >>> print(t)
    name  bytes
    ----  -----
    x     12
    y     0
    >>> t.column("bytes"), t.records()[0]
    ([12, 0], {'name': 'x', 'bytes': 12})
    """

    def __init__(self, columns: Sequence[str], rows: Sequence[Sequence[Any]], *, title: str | None = None):
        self.columns, self.rows, self.title = list(columns), [list(r) for r in rows], title
        for r in self.rows:
            if len(r) != len(self.columns):
                raise ValueError(f"rows must have {len(self.columns)} cells, got {len(r)}: {r!r}")

    def column(self, name: str) -> list[Any]:
        """The values of one column, by its header (KeyError for an unknown one)."""
        if name not in self.columns:
            raise KeyError(f"no column {name!r}; the columns are {self.columns}")
        return [r[self.columns.index(name)] for r in self.rows]

    def records(self) -> list[dict[str, Any]]:
        """The rows as dicts keyed by column name; iterating over the table gives the same."""
        return [dict(zip(self.columns, r)) for r in self.rows]

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self):
        return iter(self.records())

    def __repr__(self) -> str:
        cells = [[_fmt(v) for v in r] for r in self.rows]
        widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(self.columns)]
        lines = [self.title] if self.title else []
        lines.append("  ".join(c.ljust(w) for c, w in zip(self.columns, widths)).rstrip())
        lines.append("  ".join("-" * w for w in widths))
        lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{html.escape(c)}</th>" for c in self.columns)
        body = "".join("<tr>" + "".join(f"<td><code>{html.escape(_fmt(v))}</code></td>" for v in r) + "</tr>"
                       for r in self.rows)
        caption = f"<caption>{html.escape(self.title)}</caption>" if self.title else ""
        return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
