"""The run browser: a static, offline HTML site over a folder of runs (``memeval view``).

``index.html`` lists every run (bench, system, mode, question set, date, status, headline score on the
largest tier with its 95% bootstrap interval and n) with filters; ``runs/<page>.html`` shows one run:
the overall and per tier × axis tables beside the floor and ceiling runs found next to it, the
degradation curve, latency, the worst questions and their traces. Every page reads ``plotly.min.js``
from the site folder (written once), never the network. All bench text is escaped.
"""

from __future__ import annotations

import hashlib
import html
import re
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from ..atomic import write_text
from .plot_curves import degradation_curve
from .aggregate import latency_table, load_records, overall_table, tier_axis_table
from .fairness import compare_runs, with_own_counts
from .intervals import bootstrap_means
from .tables import html_table
from .widgets import render_trace_html, worst_questions_table
from ..errors import InputError
from .runs import RunInfo, find_runs, sibling_bounds
from ..run.folder import read_manifest
from ..run.status import errors_by_reason

__all__ = ["build_site", "SiteResult", "page_name"]

_STYLE = """body{font-family:system-ui,sans-serif;margin:1.5em;color:#222;max-width:1200px}
table{border-collapse:collapse;margin:.5em 0 1.5em}th,td{border:1px solid #ccc;padding:3px 8px;text-align:left;
font-size:13px}th{background:#f2f2f2}caption{text-align:left;font-weight:600;padding:4px 0}
.scroll{overflow-x:auto}.filters label{margin-right:1em}.muted{color:#777}.status-complete{color:#176f2c}
.status-complete_with_errors{color:#b86e00;background:#fff4e0}
.status-error,.status-cancelled,.status-started,.status-failed{color:#a33}details{margin:.3em 0}summary{cursor:pointer}
pre.exc{white-space:pre-wrap;margin:0;font-size:12px}"""

_FILTER_JS = """(function(){
  var sel = document.querySelectorAll('.filters select');
  function apply(){
    var want = {};
    sel.forEach(function(s){ want[s.name] = s.value; });
    var shown = 0;
    document.querySelectorAll('#runs tbody tr').forEach(function(tr){
      var ok = Object.keys(want).every(function(k){ return !want[k] || tr.dataset[k] === want[k]; });
      tr.style.display = ok ? '' : 'none';
      if (ok) shown++;
    });
    document.getElementById('shown').textContent = shown;
  }
  sel.forEach(function(s){ s.addEventListener('change', apply); });
  apply();
})();"""

FILTERS = ("bench", "system", "mode", "status")


@dataclass(frozen=True)
class SiteResult:
    index: Path
    pages: dict[str, Path]  # run folder → its page
    skipped: tuple[str, ...]  # run folders whose records could not be read (one line each)


def _e(v) -> str:
    return html.escape("" if v is None else str(v), quote=True)


def page_name(run_dir: Path) -> str:
    """A file name for a run's page that stays inside the site, whatever the folder is called.

    >>> page_name(Path("runs/lifelog_bm25_dry_ab12"))[:22]
    'lifelog_bm25_dry_ab12-'
    """
    slug = re.sub(r"[^A-Za-z0-9._-]", "_", run_dir.name)[:60].lstrip(".") or "run"
    return f"{slug}-{hashlib.sha256(str(run_dir.resolve()).encode()).hexdigest()[:8]}.html"


def _page(title: str, body: str, plotly_src: str | None, extra_js: str = "") -> str:
    script = f'<script src="{plotly_src}"></script>' if plotly_src else ""
    js = f"<script>{extra_js}</script>" if extra_js else ""
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>'
        f"<style>{_STYLE}</style>{script}</head><body>{body}{js}</body></html>\n"
    )


def _headline(df: pl.DataFrame) -> dict:
    """Weighted mean on the run's largest tier with its 95% interval and n (graded questions)."""

    graded = df.filter(pl.col("score").is_not_null())
    if not graded.height:
        return {"tier": None, "mean": None, "lo": None, "hi": None, "n": 0, "errors": df["error"].is_not_null().sum()}
    last = graded.sort("tier_index")["tier"][-1]
    b = bootstrap_means(graded.filter(pl.col("tier") == last), ["tier"], weight="weight", n_resamples=500)
    r = b.row(0, named=True)
    return {
        "tier": last,
        "mean": r["mean"],
        "lo": r["lo"],
        "hi": r["hi"],
        "n": r["n"],
        "errors": int(df["error"].is_not_null().sum()),
    }


def _status(status: str) -> str:
    """A run's status as the browser shows it: coloured by its class (amber: complete with errors)."""
    return f'<b class="status-{_e(status)}">{_e(status.replace("_", " "))}</b>'


def _errors_section(df: pl.DataFrame) -> str:
    """The run's error records by reason: count, the first question ids and one exception text."""
    errs = df.filter(pl.col("error").is_not_null())
    if not errs.height:
        return ""
    rows = "".join(
        f"<tr><td>{_e(r.reason)}</td><td>{r.count}</td><td>{_e(', '.join(r.first))}</td>"
        f'<td><pre class="exc">{_e(r.example)}</pre></td></tr>'
        for r in errors_by_reason(errs.iter_rows(named=True))
    )
    return (
        f'<h2 id="errors">Errors</h2><p>{errs.height} of {df.height} questions are error records: they are '
        "not scored (never 0) and a rerun or <code>memeval retry</code> asks them again.</p>"
        '<div class="scroll"><table><thead><tr><th>reason</th><th>count</th><th>first questions</th>'
        f"<th>exception text</th></tr></thead><tbody>{rows}</tbody></table></div>"
    )


def _fmt_score(h: dict) -> str:
    if h["mean"] is None:
        return '<span class="muted">no graded questions</span>'
    return f'{h["mean"]:.3f} [{h["lo"]:.3f}, {h["hi"]:.3f}] <span class="muted">n={h["n"]}</span>'


def _run_page(
    info: RunInfo, df: pl.DataFrame, bounds_df: pl.DataFrame | None, plotly_src: str, bounds: list[Path] | None = None
) -> str:

    both = df if bounds_df is None else pl.concat([df, bounds_df], how="vertical_relaxed")
    # the run beside its floor and ceiling over the questions all of them graded (its own n beside)
    fair = compare_runs(both, [info.path, *(bounds or [])])
    overall = with_own_counts(overall_table(fair.df), both, ["system", "tier_index", "tier"])
    overall = overall.filter(pl.col("system").is_in(df["system"].unique().to_list()))
    overall = overall.select(
        [
            c
            for c in (
                "system",
                "tier",
                "weighted",
                "unweighted",
                "n",
                "graded_own",
                "ungraded",
                "errors",
                "recall_any@5",
                "floor_weighted",
                "ceiling_weighted",
            )
            if c in overall.columns
        ]
    )
    axis = tier_axis_table(df).drop("tier_index")
    parts = [
        f'<p><a href="../index.html">← all runs</a></p><h1>{_e(info.label)}</h1>',
        f"<p>bench <b>{_e(info.bench)}</b> · mode <b>{_e(info.mode)}</b> · question set "
        f"<b>{_e(info.question_set)}</b> · status {_status(info.status)} · "
        f'created {_e(info.created_at)}<br><span class="muted">run folder {_e(info.path)}</span></p>',
    ]
    m = read_manifest(info.path)
    why = [*m.get("status_reasons", []), *([m["error"]] if m.get("error") else [])]
    if why:  # why the run failed or stopped, as the run said it
        parts.append("".join(f'<p class="status-{_e(info.status)}">{_e(w)}</p>' for w in why))
    parts.append(_errors_section(df))
    bound_note = "" if bounds_df is not None else " (no floor/ceiling runs found beside this run)"
    parts.append('<p class="fairness">' + "<br>".join(_e(line) for line in fair.lines()) + "</p>")
    parts.append(
        '<div class="scroll">'
        + html_table(
            overall,
            caption=f"Overall: weighted and unweighted mean per tier, floor and ceiling{bound_note}; n = questions "
            "the run and its floor and ceiling all graded, graded_own = what the run graded by itself",
        )
        + "</div>"
    )
    if df["tier"].n_unique() > 1:
        try:
            fig = degradation_curve(fair.df)
            parts.append(fig.to_html(full_html=False, include_plotlyjs=False))
        except (ValueError, pl.exceptions.PolarsError) as e:  # a run too small to draw: say so
            parts.append(f'<p class="muted">no degradation curve ({_e(e)})</p>')
    parts.append('<div class="scroll">' + html_table(axis, caption="Per tier × axis") + "</div>")
    lat = latency_table(df).with_columns(pl.col("reasons").list.join("; "))
    parts.append('<div class="scroll">' + html_table(lat, caption="Latency minus round trip (ms)") + "</div>")
    parts.append("<h2>Worst questions</h2>" + '<div class="scroll">' + worst_questions_table(df, n=20) + "</div>")
    worst = df.filter(pl.col("score").is_not_null()).sort("score", "weight", descending=[False, True]).head(30)
    traces = "".join(
        f"<details><summary>{_e(r['tier'])} · {_e(r['qid'])} · {_e(r['axis'])} · score "
        f"{_e(r['score'])}</summary>{render_trace_html(r)}</details>"
        for r in worst.iter_rows(named=True)
    )
    parts.append(f"<h2>Traces (30 lowest scores)</h2>{traces or '<p>none graded</p>'}")
    return _page(f"{info.label} — memeval run", "".join(parts), plotly_src)


def build_site(runs_dir: str | Path, out_dir: str | Path, progress=None) -> SiteResult:
    """Write the run browser for every run under ``runs_dir`` into ``out_dir``; returns what was written."""
    from plotly.offline import get_plotlyjs

    out = Path(out_dir)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    write_text(out / "plotly.min.js", get_plotlyjs())
    skipped: list[str] = []
    infos = find_runs(runs_dir, skipped)  # a corrupt manifest is listed, with the reason
    pages: dict[str, Path] = {}
    rows = []
    for i, info in enumerate(infos):
        if progress:
            progress(i, len(infos), info)
        try:
            df = load_records([info.path])
            bounds = sibling_bounds([info.path])
            bounds_df = load_records(bounds) if bounds else None
        except (InputError, ValueError) as e:
            skipped.append(f"{info.path}: {' '.join(str(e).splitlines())}")
            continue
        name = page_name(info.path)
        write_text(out / "runs" / name, _run_page(info, df, bounds_df, "../plotly.min.js", bounds))
        pages[str(info.path)] = out / "runs" / name
        rows.append((info, name, _headline(df)))
    write_text(out / "index.html", _index(rows, Path(runs_dir), skipped))
    return SiteResult(out / "index.html", pages, tuple(skipped))


def _index(rows, runs_dir: Path, skipped: list[str]) -> str:
    values = {f: sorted({getattr(info, "label" if f == "system" else f) for info, _, _ in rows}) for f in FILTERS}
    filters = "".join(
        f'<label>{f} <select name="{f}"><option value="">all</option>'
        + "".join(f'<option value="{_e(v)}">{_e(v)}</option>' for v in values[f])
        + "</select></label>"
        for f in FILTERS
    )
    body_rows = []
    for info, name, h in rows:
        data = " ".join(f'data-{f}="{_e(info.label if f == "system" else getattr(info, f))}"' for f in FILTERS)
        body_rows.append(
            f'<tr {data}><td>{_e(info.bench)}</td><td><a href="runs/{_e(name)}">{_e(info.label)}</a></td>'
            f"<td>{_e(info.mode)}</td><td>{_e(info.question_set)}</td><td>{_e(info.created_at[:19])}</td>"
            f"<td>{_e(h['tier'] or '–')}</td><td>{_fmt_score(h)}</td><td>{h['errors']}</td>"
            f"<td>{_status(info.status)}</td></tr>"
        )
    head = "".join(
        f"<th>{c}</th>"
        for c in (
            "bench",
            "system",
            "mode",
            "question set",
            "created (UTC)",
            "largest tier",
            "weighted score [95% CI]",
            "errors",
            "status",
        )
    )
    skip = "".join(f"<li>{_e(s)}</li>" for s in skipped)
    body = (
        f'<h1>memeval runs</h1><p class="muted">{len(rows)} runs in {_e(runs_dir)}; scores are weighted means '
        "over graded questions on each run's largest tier, with a 95% bootstrap interval and n.</p>"
        f'<div class="filters">{filters} <span class="muted"><span id="shown">{len(rows)}</span> shown</span></div>'
        f'<div class="scroll"><table id="runs"><thead><tr>{head}</tr></thead><tbody>{"".join(body_rows)}'
        "</tbody></table></div>" + (f"<h2>Not shown</h2><ul>{skip}</ul>" if skip else "")
    )
    return _page("memeval runs", body, None, _FILTER_JS)
