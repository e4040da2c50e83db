"""What every memeval score figure shares: the template and palette, per-group means with their 95%
intervals, and the tier-size x axis.

``TEMPLATE``, ``PALETTE``, ``system_colour`` and ``mean_scores`` are public; the other names are the
building blocks of the ``plot_*`` modules (one copy of each, here).

Colours are keyed by system label: a system has the same colour in every figure of a report (and of
the run browser), whatever else a figure shows; the floor and ceiling always have their own (red and
green, dashed), never a system's.
"""

from __future__ import annotations

import re
import zlib
from typing import Any

import polars as pl
from plotly.colors import qualitative

from ..errors import ArgumentError
from ..bench.axes import AXES
from .aggregate import question_set
from .intervals import DEFAULT_RESAMPLES, bootstrap_means

__all__ = [
    "TEMPLATE",
    "PALETTE",
    "FLOOR_COLOUR",
    "CEILING_COLOUR",
    "system_colour",
    "system_colours",
    "bound_kind",
    "bound_line",
    "system_line",
    "natural_key",
    "wrap_title",
    "title_layout",
    "mean_scores",
    "parts",
    "update_layout",
]

#: 10 + 24 distinct colours: a figure never repeats one for up to 34 lines (17 axes fit twice).
PALETTE = qualitative.Plotly + [c for c in qualitative.Dark24 if c not in qualitative.Plotly]
TEMPLATE = "plotly_white"  #: the plotly template every memeval figure uses
FLOOR_COLOUR = "#d62728"  #: the floor (``no_memory``) in every figure: red, dashed
CEILING_COLOUR = "#2ca02c"  #: the ceiling (``oracle``) in every figure: green, dashed
_BOUND_NAMES = {"floor": "no_memory", "ceiling": "oracle"}
#: the colours systems take, in preference order: the palette without the floor's and ceiling's
_SYSTEM_COLOURS = [c for c in PALETTE if c.casefold() not in (FLOOR_COLOUR, CEILING_COLOUR)]
_TAKEN: dict[str, str] = {}  # label -> colour, for this process (a notebook kernel: one report)


def bound_kind(system: str) -> str | None:
    """``"floor"``, ``"ceiling"`` or None: whether ``system`` is a bound (by its name, bare or with
    parameters; figures see records, not manifests).

    >>> bound_kind("oracle"), bound_kind("no_memory:x=1"), bound_kind("bm25")
    ('ceiling', 'floor', None)
    """
    return next((k for k, name in _BOUND_NAMES.items() if is_role(system, name)), None)


def natural_key(label: str) -> tuple:
    """Sort key reading digit runs as numbers: ``bm25, bm25:k=5, bm25:k=20`` (not ``k=20`` before ``k=5``).

    >>> sorted(["bm25:k=20", "bm25", "bm25:k=5"], key=natural_key)
    ['bm25', 'bm25:k=5', 'bm25:k=20']
    """
    return tuple((0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", label) if t)


def system_colour(label: str) -> str:
    """The colour of ``label`` in every figure: the floor's and ceiling's own for those, else a palette
    colour chosen by a stable hash of the label (the same in every report and the run browser), moved to
    the next free one if another system of this process already took it.

    >>> system_colour("oracle") == CEILING_COLOUR and system_colour("bm25") == system_colour("bm25")
    True
    """
    kind = bound_kind(label)
    if kind is not None:
        return FLOOR_COLOUR if kind == "floor" else CEILING_COLOUR
    if label not in _TAKEN:
        used = set(_TAKEN.values())
        start = zlib.crc32(label.encode("utf-8")) % len(_SYSTEM_COLOURS)
        order = _SYSTEM_COLOURS[start:] + _SYSTEM_COLOURS[:start]
        _TAKEN[label] = next((c for c in order if c not in used), order[0])
    return _TAKEN[label]


def bound_line(kind: str) -> dict:
    """The plotly ``line`` of a floor or ceiling (``kind``) in every figure: its colour, dashed."""
    return {"color": FLOOR_COLOUR if kind == "floor" else CEILING_COLOUR, "dash": "dash", "width": 2}


def system_line(label: str) -> dict:
    """The plotly ``line`` of ``label``: a bound's dashed line, else the system's colour, solid."""
    kind = bound_kind(label)
    return bound_line(kind) if kind else {"color": system_colour(label)}


def system_colours(labels) -> dict[str, str]:
    """:func:`system_colour` of each label, the labels taken in natural order (so which of two
    colliding systems moves does not depend on the order a figure meets them).

    >>> c = system_colours(["bm25:k=5", "bm25"]); c["bm25"] != c["bm25:k=5"]
    True
    """
    return {s: system_colour(s) for s in sorted(dict.fromkeys(labels), key=natural_key)}


_X_COLUMNS = {
    "turns": ("tier_turns", "turns in the haystack"),
    "tokens": ("tier_tokens", "tokens in the haystack (memeval's approx-v1 count)"),
}


def mean_scores(
    df: pl.DataFrame,
    by: list[str],
    weighted: bool = False,
    value: str = "score",
    n_resamples: int = DEFAULT_RESAMPLES,
    within: list[str] | None = None,
) -> pl.DataFrame:
    """Mean of ``value`` per group: columns ``by`` + mean, lo, hi (its 95% bootstrap interval, whole
    questions or haystacks resampled), n (graded), n_ungraded (null value: ungraded, error, excluded).

    ``within``: columns that split ``df`` into parts (say each system); the columns ``within`` lead,
    and each part's rows are exactly what a call on that part alone gives (:func:`parts` splits them)."""
    keys = [*dict.fromkeys([*(within or []), *by])]
    graded = pl.col(value).is_not_null()
    counts = df.group_by(keys).agg(graded.sum().alias("n"), (~graded).sum().alias("n_ungraded"))
    ci = bootstrap_means(
        df, by, value=value, weight="weight" if weighted else None, n_resamples=n_resamples, within=within
    )
    return (
        counts.join(ci.select(*keys, "mean", "lo", "hi"), on=keys, how="left")
        .select(*keys, "mean", "lo", "hi", "n", "n_ungraded")
        .sort(keys)
    )


def parts(m: pl.DataFrame, within: list[str]) -> dict[tuple, pl.DataFrame]:
    """A ``mean_scores(..., within=within)`` frame split by its ``within`` key (a tuple), each part
    without the ``within`` columns: what ``mean_scores`` of that part alone gives."""
    return m.partition_by(within, as_dict=True, include_key=False, maintain_order=True)


def x_column(x: str) -> tuple[str, str]:
    """The tier-size column and axis title for ``x`` ("turns" or "tokens")."""
    if x not in _X_COLUMNS:
        raise ArgumentError(f"x must be 'turns' or 'tokens', not {x!r}")
    return _X_COLUMNS[x]


def question_rows(df: pl.DataFrame, core: bool = True) -> tuple[pl.DataFrame, str]:
    """The rows a curve compares (``aggregate.question_set``), and the phrase naming that set for a title."""
    kept = question_set(df, "core" if core else "all")
    if not core:
        return kept, "all questions per tier"
    return kept, f"core set: {kept['qid'].n_unique()} questions present in every tier"


def is_role(system: str, name: str) -> bool:
    """Whether ``system`` is the baseline ``name`` (bare, or with parameters: ``name:...``)."""
    return system == name or system.startswith(name + ":")


def tier_order(df: pl.DataFrame) -> pl.DataFrame:
    """One row per tier (tier, tier_index, tier_turns, tier_tokens), smallest first."""
    return df.select("tier", "tier_index", "tier_turns", "tier_tokens").unique("tier", keep="first").sort("tier_index")


def axis_order(df: pl.DataFrame) -> list[str]:
    """The axes present in ``df``: weight-table order, then any others sorted."""
    present = set(df["axis"].unique().to_list())
    return [a for a in AXES if a in present] + sorted(present - set(AXES))


def tier_xaxis(tiers: pl.DataFrame, xcol: str, xlabel: str) -> dict:
    """A log x axis with one tick per tier (``tier_order`` rows), labelled with its name and size."""
    return {
        "type": "log",
        "title": xlabel,
        "tickvals": tiers[xcol].to_list(),
        "ticktext": [f"{t}<br>{v:,}" for t, v in zip(tiers["tier"].to_list(), tiers[xcol].to_list())],
    }


def error_bars(m: pl.DataFrame) -> dict:
    """plotly ``error_y`` for a ``mean_scores`` frame: the 95% interval around each mean."""
    mean, lo, hi = (m[c].fill_null(float("nan")).to_list() for c in ("mean", "lo", "hi"))
    return {
        "type": "data",
        "symmetric": False,
        "thickness": 1.2,
        "width": 4,
        "array": [h - v for v, h in zip(mean, hi)],
        "arrayminus": [v - lo_ for v, lo_ in zip(mean, lo)],
    }


def hover_interval(m: pl.DataFrame) -> list[str]:
    """Each ``mean_scores`` row's 95% interval as hover text ("–" when there is none)."""
    return [("–" if lo is None else f"{lo:.3f}–{hi:.3f}") for lo, hi in zip(m["lo"].to_list(), m["hi"].to_list())]


#: about how wide plotly's default sans-serif draws a character, as a share of the font size (a
#: little over the real average, so a wrapped title never reaches the edge)
_CHAR_WIDTH = 0.58
TITLE_SIZE = 16  #: the font size of every memeval figure title (px)


def wrap_title(text: str, width_px: float = 1000, size: float = TITLE_SIZE) -> str:
    """``text`` with ``<br>`` breaks between words so no line is wider than ``width_px`` (less the
    margins) at font ``size``; existing breaks kept, markup (``<sup>``, ``<b>``) not counted.

    >>> wrap_title("aaaa bbbb cccc", width_px=80, size=10)
    'aaaa bbbb<br>cccc'
    >>> wrap_title("short<br><sup>a b</sup>", width_px=1000)
    'short<br><sup>a b</sup>'
    """
    limit = max(10, int(0.9 * width_px / (_CHAR_WIDTH * size)))
    out: list[str] = []
    for part in re.split(r"<br\s*/?>", text):
        line: list[str] = []
        n = 0
        for word in part.split(" "):
            w = len(re.sub(r"<[^>]*>", "", word))
            if line and n + 1 + w > limit:
                out.append(" ".join(line))
                line, n = [], 0
            line.append(word)
            n += w + (1 if n else 0)
        out.append(" ".join(line))
    return "<br>".join(out)


def title_layout(text: str, width_px: float = 1000, size: float = TITLE_SIZE) -> dict:
    """``update_layout`` settings for a figure title that is never cut: wrapped to ``width_px``
    (:func:`wrap_title`), with a top margin tall enough for its lines."""
    wrapped = wrap_title(text, width_px, size)
    lines = wrapped.count("<br>") + 1
    # anchored to the top of the canvas and growing down into a margin tall enough for its lines and
    # the panel titles below them
    return {
        "title": {
            "text": wrapped,
            "font": {"size": size},
            "x": 0.02,
            "xanchor": "left",
            "y": 1,
            "yref": "container",
            "yanchor": "top",
            "pad": {"t": 12},
        },
        "margin": {"t": int(46 + 1.4 * size * lines)},
    }


#: template name -> (plotly's registered template, its copy validated as a figure's layout.template)
_VALIDATED_TEMPLATES: dict[str, tuple[Any, Any]] = {}


def update_layout(fig: Any, **layout: Any) -> Any:
    """``fig.update_layout(**layout)``, returning ``fig``, the same figure to the byte (its JSON); a
    ``template`` given by name (:data:`TEMPLATE`) is set from a copy validated once per process instead
    of validated again for each figure (~12 ms a figure), the way plotly itself sets its default
    template on every new figure.

    >>> import plotly.graph_objects as go
    >>> a = update_layout(go.Figure(), title="t", template=TEMPLATE, height=300).to_json()
    >>> a == go.Figure().update_layout(title="t", template=TEMPLATE, height=300).to_json()
    True
    """
    name = layout.get("template")
    if not isinstance(name, str) or "template" not in (fig.layout._props or {}):
        return fig.update_layout(**layout)  # no template yet (plotly's default turned off): its key's place matters
    # plotly's default template, set when the figure was made, holds the key's place: replacing its value
    # apart from the other keys (one call, in their order) leaves every key where update_layout puts it
    _set_template(fig, name)
    rest = {k: v for k, v in layout.items() if k != "template"}
    return fig.update_layout(**rest) if rest else fig


def _set_template(fig: Any, name: str) -> None:
    import plotly.graph_objects as go
    import plotly.io as pio

    registered = pio.templates[name]
    cached = _VALIDATED_TEMPLATES.get(name)
    if cached is None or cached[0] is not registered:  # validated again if the template was replaced
        cached = (registered, go.Figure().update_layout(template=name).layout.template)
        _VALIDATED_TEMPLATES[name] = cached
    lay = fig.layout
    was = lay._validate
    lay._validate = False  # plotly's own path for an already validated template (_initialize_layout_template)
    try:
        lay.template = cached[1]  # stored as a deep copy of its JSON: the figure owns its template
    finally:
        lay._validate = was
