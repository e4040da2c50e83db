"""How the commands print polars tables on the console: every row and column, three decimals, no
shape or dtype lines."""

from __future__ import annotations

from typing import Any

import polars as pl


def console_tables(width: int = 120, **more: Any) -> pl.Config:
    """A ``pl.Config`` for ``with``: tables ``width`` characters wide at most; ``more`` adds or
    overrides polars settings (e.g. ``tbl_formatting="MARKDOWN"``).

    >>> with console_tables(40):
    ...     print(pl.DataFrame({"n": [1], "score": [0.12345]}))
    ┌───┬───────┐
    │ n ┆ score │
    ╞═══╪═══════╡
    │ 1 ┆ 0.123 │
    └───┴───────┘
    """
    settings: dict[str, Any] = dict(
        tbl_rows=-1,
        tbl_cols=-1,
        tbl_width_chars=width,
        float_precision=3,
        tbl_hide_dataframe_shape=True,
        tbl_hide_column_data_types=True,
    )
    return pl.Config(**{**settings, **more})


#: What every console table shows for a missing value (null and NaN alike).
MISSING = "–"


def _cell(v: Any, missing: str = MISSING) -> str:
    if v is None or (isinstance(v, float) and v != v):
        return missing
    return f"{v:.3f}" if isinstance(v, float) else str(v)


def interval_text(v: Any, lo: Any, hi: Any, missing: str = MISSING) -> str:
    """A score with its interval as every console table shows it: ``0.473 [0.353, 0.623]``; the score
    alone where a bound is missing; ``missing`` without a score.

    >>> interval_text(0.5, 0.25, 0.75), interval_text(0.5, None, None), interval_text(None, None, None)
    ('0.500 [0.250, 0.750]', '0.500', '–')
    """
    if missing in (_cell(v, missing), _cell(lo, missing), _cell(hi, missing)):
        return _cell(v, missing)
    return f"{v:.3f} [{lo:.3f}, {hi:.3f}]"


def console_text(t: pl.DataFrame, missing: str = MISSING) -> pl.DataFrame:
    """``t`` as text for the console: a column with ``<column>_lo``/``<column>_hi`` bounds beside it
    reads ``0.473 [0.353, 0.623]`` (the bound columns dropped), other floats three decimals, and null
    and NaN alike are ``missing``.

    >>> t = pl.DataFrame({"score": [0.4731, None, 0.5], "score_lo": [0.353, None, None],
    ...                   "score_hi": [0.6231, None, None], "n": [10, None, 2], "p50": [1.0, float("nan"), 2.0]})
    >>> console_text(t).rows()
    [('0.473 [0.353, 0.623]', '10', '1.000'), ('–', '–', '–'), ('0.500', '2', '2.000')]
    """

    def cell(v: Any) -> str:
        return _cell(v, missing)

    def with_bounds(v: Any, lo: Any, hi: Any) -> str:
        return interval_text(v, lo, hi, missing)

    bounded = {c for c in t.columns if f"{c}_lo" in t.columns and f"{c}_hi" in t.columns}
    shown = [c for c in t.columns if not (c[-3:] in ("_lo", "_hi") and c[:-3] in bounded)]
    rows = t.to_dicts()
    return pl.DataFrame(
        {
            c: [with_bounds(r[c], r[f"{c}_lo"], r[f"{c}_hi"]) if c in bounded else cell(r[c]) for r in rows]
            for c in shown
        },
        schema={c: pl.Utf8 for c in shown},
    )
