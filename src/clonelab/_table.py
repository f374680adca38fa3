"""A tiny table type shared by the helpers: HTML in Jupyter, aligned text elsewhere."""

from __future__ import annotations

import html
from typing import Any, Sequence


class Table:
    """Rows of equal-length cells with a header.

    It renders as an HTML table in Jupyter (``_repr_html_``) and as aligned
    plain text in a terminal (``str``/``repr``). ``rows`` keeps the raw values,
    so code can assert on them.

    >>> t = Table(["name", "bytes"], [["x", 12], ["y", 0]])
    >>> print(t)
    name  bytes
    ----  -----
    x     12
    y     0
    >>> t.column("bytes")
    [12, 0]
    """

    def __init__(self, columns: Sequence[str], rows: Sequence[Sequence[Any]], *, title: str | None = None):
        self.columns = list(columns)
        self.rows = [list(r) for r in rows]
        self.title = title
        for r in self.rows:
            if len(r) != len(self.columns):
                raise ValueError(f"rows must have {len(self.columns)} cells, got {len(r)}: {r!r}")

    def column(self, name: str) -> list[Any]:
        """The values of one column, by its header."""
        if name not in self.columns:
            raise KeyError(f"no column {name!r}; the columns are {self.columns}")
        i = self.columns.index(name)
        return [r[i] for r in self.rows]

    def records(self) -> list[dict[str, Any]]:
        """The rows as dicts keyed by column name."""
        return [dict(zip(self.columns, r)) for r in self.rows]

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self):
        return iter(self.records())

    @staticmethod
    def _fmt(value: Any) -> str:
        if isinstance(value, bool) or value is None:
            return str(value)
        if isinstance(value, float):
            return f"{value:.4g}"
        return str(value)

    def __str__(self) -> str:
        cells = [[self._fmt(v) for v in r] for r in self.rows]
        widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(self.columns)]
        lines = []
        if self.title:
            lines.append(self.title)
        lines.append("  ".join(c.ljust(w) for c, w in zip(self.columns, widths)).rstrip())
        lines.append("  ".join("-" * w for w in widths))
        lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{html.escape(c)}</th>" for c in self.columns)
        body = "".join(
            "<tr>" + "".join(f"<td><code>{html.escape(self._fmt(v))}</code></td>" for v in r) + "</tr>"
            for r in self.rows
        )
        caption = f"<caption>{html.escape(self.title)}</caption>" if self.title else ""
        return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
