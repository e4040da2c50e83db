"""What the book-suite notebook does, kept here so the notebook stays thin and the steps are tested.

- :func:`run_builtin_systems`: import the suite as a bench and run memeval systems on it (dry mode);
  each run's answers become ``{test_id: answer}`` (a system without an answer of its own is read as its
  returned memories, joined).
- :func:`builtin_runs` / :func:`stored_scores`: the same runs as folders, and their keyword recall
  read from the records (the dry scorer wrote it), not scored again.
- :func:`layer_frame` / :func:`layer_figure`: the layer x system table as a polars frame and a grouped
  plotly bar chart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Mapping, Sequence

import polars as pl

from ..bench.loaders._common import staged_output
from ..bench.loaders.booksuite import BookSuite, answers_from_run, import_booksuite
from ..errors import MemevalError
from ..scoring.booksuite_scores import CaseScore, LayerRow, keyword_scores_from_records
from ..run import read_records, run_system
from ..text.names import slug

__all__ = [
    "default_suite_dir",
    "run_builtin_systems",
    "builtin_runs",
    "stored_scores",
    "layer_frame",
    "case_frame",
    "layer_figure",
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


def layer_figure(rows: Sequence[LayerRow], title: str, metric: str = "keyword recall"):
    """Grouped bars: x = layer (and overall), one bar per system, y in [0, 1]."""
    import plotly.graph_objects as go

    fig = go.Figure()
    systems = list(rows[0].means) if rows else []
    for s in systems:
        fig.add_bar(
            name=s,
            x=[r.title for r in rows],
            y=[r.means[s] for r in rows],
            text=["—" if r.means[s] is None else f"{r.means[s]:.3f}" for r in rows],
            customdata=[r.counts[s] for r in rows],
            hovertemplate="%{x}<br>" + s + ": %{y:.3f} (n=%{customdata})<extra></extra>",
        )
    fig.update_layout(
        title=title,
        barmode="group",
        yaxis=dict(title=metric, range=[0, 1.05]),
        legend_title_text="system",
        template="plotly_white",
    )
    return fig
