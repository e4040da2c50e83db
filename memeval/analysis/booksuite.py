"""What the book-suite notebook does, kept here so the notebook stays thin and the steps are tested.

- :func:`run_builtin_systems`: import the suite as a bench and run memeval systems on it (dry mode);
  each run's answers become ``{test_id: answer}`` (a system without an answer of its own is read as its
  returned memories, joined).
- :func:`builtin_runs` / :func:`stored_scores`: the same runs as folders, and their keyword recall
  read from the records (the dry scorer wrote it), not scored again.
- :func:`layer_frame` / :func:`layer_figure`: the layer x system table as a polars frame and a grouped
  plotly bar chart; :func:`layer_intervals` / :func:`layer_html`: each mean with its 95% bootstrap
  interval (cases resampled; a layer holds about 8 cases, so the intervals are wide) and its n.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import polars as pl

from ..bench.loaders._common import staged_output
from ..bench.loaders.booksuite import BookSuite, answers_from_run, import_booksuite
from ..errors import MemevalError
from ..scoring.booksuite_scores import CaseScore, LayerRow, keyword_scores_from_records
from ..run import read_records, run_system
from ..text.names import slug
from .intervals import bootstrap_means
from .plot_base import TEMPLATE, system_colour, title_layout, update_layout
from .tables import html_table

__all__ = [
    "default_suite_dir",
    "run_builtin_systems",
    "builtin_runs",
    "stored_scores",
    "layer_frame",
    "case_frame",
    "layer_figure",
    "layer_intervals",
    "layer_html",
]


def default_suite_dir() -> Path:
    """The copy of the book suite shipped with the tests (Apache-2.0), in a source checkout."""
    return Path(__file__).resolve().parents[2] / "tests" / "data" / "booksuite"


#: A system spec as a folder name (``recent:tokens=2000`` -> ``recent_tokens_2000``).
_slug = slug


def builtin_runs(suite, systems: Iterable[str], work_dir) -> dict[str, Path]:
    """Write ``suite`` (a :class:`BookSuite` or its folder) as a bench in ``work_dir/bench`` (once) and run
    each system spec (``bm25``, ``recent:tokens=2000``, ...) into ``work_dir/runs/<spec>`` (dry mode;
    a finished run is resumed, not redone)."""
    work = Path(work_dir)
    bench = work / "bench"
    if not (bench / "bench.yaml").is_file():
        if isinstance(suite, BookSuite):
            with staged_output(bench, force=True) as tmp:
                suite.write_bench(tmp)
        else:
            import_booksuite(suite, bench, force=True)
    return {
        spec: run_system(bench, spec, mode="dry", out=work / "runs" / _slug(spec), progress=False) for spec in systems
    }


def run_builtin_systems(suite, systems: Iterable[str], work_dir) -> dict[str, dict[str, str]]:
    """``{spec: {test_id: answer}}`` of the dry runs of :func:`builtin_runs` (for scoring with a judge)."""
    return {spec: answers_from_run(rd) for spec, rd in builtin_runs(suite, systems, work_dir).items()}


def stored_scores(suite: BookSuite, run_dirs: Mapping[str, Path]) -> list[CaseScore]:
    """Keyword recall of each ``{spec: run folder}`` dry run over ``suite``, as its records hold it."""
    out: list[CaseScore] = []
    for spec, rd in run_dirs.items():
        held = keyword_scores_from_records(suite, read_records(rd), spec)
        if held is None:
            raise MemevalError(f"{rd}: its records hold no keyword-recall grades")
        out += held
    return out


def layer_frame(rows: Sequence[LayerRow]) -> pl.DataFrame:
    """Long format: one row per (layer, system) with the mean score and the number of cases behind it."""
    return pl.DataFrame(
        [{"layer": r.title, "system": s, "score": r.means[s], "n": r.counts[s]} for r in rows for s in r.means],
        schema={"layer": pl.String, "system": pl.String, "score": pl.Float64, "n": pl.Int64},
    )


def case_frame(scores: Sequence[CaseScore]) -> pl.DataFrame:
    """One row per case, one column per system: its score (null when missing or ungraded)."""
    long = pl.DataFrame(
        [{"test_id": s.test_id, "layer": s.layer, "system": s.system, "score": s.reward} for s in scores],
        schema={"test_id": pl.String, "layer": pl.String, "system": pl.String, "score": pl.Float64},
    )
    return long.pivot(on="system", index=["test_id", "layer"], values="score", maintain_order=True)


def layer_intervals(rows: Sequence[LayerRow], scores: Iterable[CaseScore]) -> pl.DataFrame:
    """Per layer row (``layer_table``'s, ``Overall`` included) and system: the mean score over scored
    cases, its 95% bootstrap interval ``lo``/``hi`` (cases resampled) and ``n`` scored.

    >>> from memeval.scoring.booksuite_scores import CaseScore, layer_table
    >>> sc = [CaseScore("s", f"t{i}", "L1", "kw", "scored", float(i % 2)) for i in range(4)]
    >>> layer_intervals(layer_table(sc), sc).select("layer", "system", "mean", "n").rows()
    [('L1', 's', 0.5, 4), ('Overall', 's', 0.5, 4)]
    """
    long = pl.DataFrame(
        [
            {"key": s.layer, "system": s.system, "qid": s.test_id, "score": s.reward}
            for s in scores
            if s.status == "scored" and s.reward is not None
        ],
        schema={"key": pl.String, "system": pl.String, "qid": pl.String, "score": pl.Float64},
    )
    long = pl.concat([long, long.with_columns(pl.lit("overall").alias("key"))])
    ci = bootstrap_means(long, ["key", "system"]).select("key", "system", "mean", "lo", "hi", "n")
    order = pl.DataFrame(
        [
            {"key": r.key, "layer": r.title, "system": s, "_i": i, "_j": j}
            for i, r in enumerate(rows)
            for j, s in enumerate(r.means)
        ],
        schema={"key": pl.String, "layer": pl.String, "system": pl.String, "_i": pl.Int64, "_j": pl.Int64},
    )
    out = order.join(ci, on=["key", "system"], how="left").sort("_i", "_j")
    return out.select("layer", "system", "mean", "lo", "hi", pl.col("n").fill_null(0))


def layer_html(rows: Sequence[LayerRow], scores: Iterable[CaseScore], caption: str) -> str:
    """The layer × system table as HTML: each cell ``mean [lo–hi] n=N`` (:func:`layer_intervals`)."""
    t = layer_intervals(rows, scores)
    text = [
        "–" if m is None else f"{m:.3f} [{lo:.2f}–{hi:.2f}] n={n}"
        for m, lo, hi, n in zip(t["mean"], t["lo"], t["hi"], t["n"])
    ]
    wide = t.with_columns(pl.Series("cell", text)).pivot(on="system", index="layer", values="cell", sort_columns=False)
    return html_table(wide, caption=caption + " (mean [95% bootstrap interval, cases resampled] n = scored cases)")


def layer_figure(
    rows: Sequence[LayerRow], title: str, metric: str = "keyword recall", scores: Iterable[CaseScore] = ()
):
    """Grouped bars: x = layer (and overall), one bar per system in its colour, y in [0, 1]; with the
    ``scores`` behind ``rows``, each bar carries its 95% bootstrap interval."""
    import plotly.graph_objects as go

    fig = go.Figure()
    systems = list(rows[0].means) if rows else []
    scores = list(scores)
    ci = layer_intervals(rows, scores) if scores else None
    for s in systems:
        bar: dict[str, Any] = dict(
            name=s,
            x=[r.title for r in rows],
            y=[r.means[s] for r in rows],
            text=["—" if r.means[s] is None else f"{r.means[s]:.3f}" for r in rows],
            customdata=[r.counts[s] for r in rows],
            marker_color=system_colour(s),
            hovertemplate="%{x}<br>" + s + ": %{y:.3f} (n=%{customdata})<extra></extra>",
        )
        if ci is not None:
            c = ci.filter(pl.col("system") == s)
            mean, lo, hi = (c[k].fill_null(float("nan")).to_list() for k in ("mean", "lo", "hi"))
            bar["error_y"] = dict(
                type="data",
                symmetric=False,
                array=[h - m for m, h in zip(mean, hi)],
                arrayminus=[m - lo_ for m, lo_ in zip(mean, lo)],
                thickness=1.2,
            )
            bar["textposition"] = "inside"
        fig.add_bar(**bar)
    update_layout(
        fig,
        **title_layout(title + ("; bars: 95% bootstrap intervals (cases resampled)" if ci is not None else "")),
        barmode="group",
        yaxis=dict(title=metric, range=[0, 1.05]),
        legend_title_text="system",
        template=TEMPLATE,
    )
    return fig
