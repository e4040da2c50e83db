"""Static HTML tables for reports: plain ``<table>`` markup (it survives nbconvert and needs no script),
every cell escaped."""

from __future__ import annotations

import html
import math
from typing import Iterable, Mapping, Sequence

import polars as pl

from ..text.html import table_html

__all__ = ["html_table", "rows_table", "side_by_side", "gate_html", "with_interval_text"]


def _cell(v, digits: int) -> str:
    """One cell: whole numbers as integers, other floats to ``digits`` significant digits (at least
    the integer part), nulls as "–".

    >>> [_cell(x, 3) for x in (1876.0, 0.70512, 12.345, 0.0004, 1234.56, None, float("nan"))]
    ['1876', '0.705', '12.3', '0.0004', '1235', '–', '–']
    """
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if isinstance(v, float):
        if v.is_integer():
            return str(int(v))
        whole = len(str(int(abs(v)))) if abs(v) >= 1 else 0
        return f"{v:.{max(digits - whole, 0)}f}" if whole else f"{v:.{digits}g}"
    if isinstance(v, (list, tuple)):
        return ", ".join(str(x) for x in v)
    return str(v)


#: JupyterLab right-aligns every cell of an output table, prose included (``:not(.jp-RenderedMarkdown)
#: .jp-RenderedHTMLCommon td``): memeval's tables read left to right, in the lab, the HTML report and
#: the browser (``!important``: the lab's rule is the more specific one)
TABLE_STYLE = (
    "<style>table.memeval-table th,table.memeval-table td{text-align:left !important;vertical-align:top}"
    "table.memeval-table caption{text-align:left}</style>"
)


def _table(columns: Sequence[str], rows: Iterable[Sequence], caption: str | None, digits: int) -> str:
    cells = ([_cell(v, digits) for v in row] for row in rows)
    table = table_html(columns, cells, caption=caption, css_class="memeval-table")
    return f'<div style="overflow-x:auto;max-width:100%">{TABLE_STYLE}{table}</div>'


def html_table(df: pl.DataFrame, caption: str | None = None, digits: int = 3) -> str:
    """``df`` as an HTML table: whole numbers as integers, other floats to ``digits`` significant
    digits, nulls as "–", lists comma-joined; wide tables scroll sideways instead of being cut off."""
    return _table(df.columns, df.iter_rows(), caption, digits)


def rows_table(rows: Iterable[Mapping], columns: Sequence[str], caption: str | None = None, digits: int = 3) -> str:
    """Rows of mappings (a column may mix types; a missing key is null) as :func:`html_table` renders a
    frame, in the order of ``columns``.

    >>> "<td>0.667</td><td>–</td>" in rows_table([{"a": 2 / 3}], ["a", "b"])
    True
    """
    cols = list(columns)
    return _table(cols, ([r.get(c) for c in cols] for r in rows), caption, digits)


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


def with_interval_text(df: pl.DataFrame, column: str, n: str = "graded") -> pl.DataFrame:
    """Replace ``column`` by text "mean [lo–hi] n=N" from its ``<column>_lo``/``_hi`` bounds and the
    count column ``n``, for pivoted tables where the bounds would otherwise be lost.

    >>> df = pl.DataFrame({"score": [0.5], "score_lo": [0.0], "score_hi": [1.0], "graded": [2]})
    >>> with_interval_text(df, "score")["score"].to_list()
    ['0.500 [0.00–1.00] n=2']
    """

    def fmt(row: dict) -> str:
        if row[column] is None:
            return f"– n={row[n]}"
        return f"{row[column]:.3f} [{row[column + '_lo']:.2f}–{row[column + '_hi']:.2f}] n={row[n]}"

    return df.with_columns(
        pl.struct(column, f"{column}_lo", f"{column}_hi", n).map_elements(fmt, return_dtype=pl.Utf8).alias(column)
    )
