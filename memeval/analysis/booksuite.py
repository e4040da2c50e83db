"""What the book-suite notebook does, kept here so the notebook stays thin and the steps are tested.

- :func:`run_builtin_systems`: import the suite as a bench and run memeval systems on it (dry mode);
  each run's answers become ``{test_id: answer}`` (a system without an answer of its own is read as its
  returned memories, joined).
- :func:`layer_frame` / :func:`layer_figure`: the layer x system table as a polars frame and a grouped
  plotly bar chart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Sequence

import polars as pl

from ..bench.loaders._common import staged_output
from ..bench.loaders.booksuite import BookSuite, answers_from_run, import_booksuite
from ..scoring.booksuite_scores import CaseScore, LayerRow
from ..run import run_system
from ..text.names import slug

__all__ = ["default_suite_dir", "run_builtin_systems", "layer_frame", "case_frame", "layer_figure"]


def default_suite_dir() -> Path:
    """The copy of the book suite shipped with the tests (Apache-2.0), in a source checkout."""
    return Path(__file__).resolve().parents[2] / "tests" / "data" / "booksuite"


#: A system spec as a folder name (``recent:tokens=2000`` -> ``recent_tokens_2000``).
_slug = slug


def run_builtin_systems(suite, systems: Iterable[str], work_dir) -> dict[str, dict[str, str]]:
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
    out = {}
    for spec in systems:
        run_dir = run_system(bench, spec, mode="dry", out=work / "runs" / _slug(spec), progress=False)
        out[spec] = answers_from_run(run_dir)
    return out


def layer_frame(rows: Sequence[LayerRow]) -> pl.DataFrame:
    """Long format: one row per (layer, system) with the mean score and the number of cases behind it."""
    return pl.DataFrame(
        [{"layer": r.title, "system": s, "score": r.means[s], "n": r.counts[s]} for r in rows for s in r.means],
        schema={"layer": pl.String, "system": pl.String, "score": pl.Float64, "n": pl.Int64},
    )


def case_frame(scores: Sequence[CaseScore]) -> pl.DataFrame:
    """One row per case, one column per system: its score (null when missing or ungraded)."""
    long = pl.DataFrame([{"test_id": s.test_id, "layer": s.layer, "system": s.system, "score": s.reward}
                         for s in scores],
                        schema={"test_id": pl.String, "layer": pl.String, "system": pl.String, "score": pl.Float64})
    return long.pivot(on="system", index=["test_id", "layer"], values="score", maintain_order=True)


def layer_figure(rows: Sequence[LayerRow], title: str, metric: str = "keyword recall"):
    """Grouped bars: x = layer (and overall), one bar per system, y in [0, 1]."""
    import plotly.graph_objects as go

    fig = go.Figure()
    systems = list(rows[0].means) if rows else []
    for s in systems:
        fig.add_bar(name=s, x=[r.title for r in rows], y=[r.means[s] for r in rows],
                    text=["—" if r.means[s] is None else f"{r.means[s]:.3f}" for r in rows],
                    customdata=[r.counts[s] for r in rows],
                    hovertemplate="%{x}<br>" + s + ": %{y:.3f} (n=%{customdata})<extra></extra>")
    fig.update_layout(title=title, barmode="group", yaxis=dict(title=metric, range=[0, 1.05]),
                      legend_title_text="system", template="plotly_white")
    return fig
