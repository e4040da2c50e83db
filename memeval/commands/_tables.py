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
