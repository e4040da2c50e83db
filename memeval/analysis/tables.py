"""Static HTML tables for reports: plain ``<table>`` markup (it survives nbconvert and needs no script),
every cell escaped."""

from __future__ import annotations

import html

import polars as pl

from ..text.html import table_html

__all__ = ["html_table", "side_by_side", "gate_html"]


def _cell(v, digits: int) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    if isinstance(v, (list, tuple)):
        return ", ".join(str(x) for x in v)
    return str(v)


def html_table(df: pl.DataFrame, caption: str | None = None, digits: int = 3) -> str:
    """``df`` as an HTML table: floats rounded to ``digits``, nulls as "–", lists comma-joined."""
    rows = ([_cell(v, digits) for v in row] for row in df.iter_rows())
    return table_html(df.columns, rows, caption=caption, css_class="memeval-table")


def side_by_side(*fragments: str) -> str:
    """Place HTML fragments next to each other (wrapping on narrow pages)."""
    cells = "".join(f'<div style="flex:0 1 auto">{f}</div>' for f in fragments)
    return f'<div style="display:flex;gap:2em;flex-wrap:wrap;align-items:flex-start">{cells}</div>'


def gate_html(line: str | None) -> str:
    """The validity gate's one line (``aggregate.dry_validity_gate``) as an escaped paragraph; empty
    when dry answer scores are valid.

    >>> gate_html(None)
    ''
    >>> gate_html("NOT VALID: <b>")
    '<p class="validity-gate"><strong>NOT VALID: &lt;b&gt;</strong></p>'
    """
    return f'<p class="validity-gate"><strong>{html.escape(line)}</strong></p>' if line else ""
