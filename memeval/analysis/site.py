"""The run browser: a static, offline HTML site over a folder of runs (``memeval view``).

``index.html`` lists every run (bench told apart by preset/seed and a short content hash, system,
run folder, mode, question set, tiers, headline score on the largest tier with its 95% bootstrap
interval and n, status with its error count, date) in sortable columns with filters, each sweep as
one row holding its shards; above it, a **leaderboard** per bench × mode × question set (system ×
tier over the questions every listed run graded, floor and ceiling rows marked as bounds and never
ranked); two runs picked there open a **comparison page** (``analysis.pairs``: the paired difference
with its interval and McNemar's p, per axis, the flipped questions with both traces side by side).
``runs/<page>.html`` shows one run: the overall and per tier × axis tables beside the floor and
ceiling runs found next to it, the degradation curve, latency, the worst questions and their traces
(missed evidence with its text when the bench folder is at hand). The built-in ``oracle`` (manifest
``config.system.role == "ceiling"``) and ``no_memory`` are bounds in every view.

Every page with a figure reads ``plotly.min.js`` from the site folder (written once), never the network;
a page without one loads no script (the file is 4.8 MB). All bench text is escaped. :class:`SiteBuilder`
rebuilds only what changed (``memeval view --serve`` watches the runs) and builds any comparison page on
demand.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import html
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import polars as pl

from ..atomic import write_text
from ..bench.io import load_bench
from ..errors import InputError, MemevalError
from ..run.folder import read_manifest
from ..run.status import errors_by_reason
from .aggregate import latency_table, load_records, overall_table, tier_axis_table
from .fairness import compare_runs, with_own_counts
from .intervals import bootstrap_means
from .pairs import paired_diff
from .plot_base import system_colour, system_colours
from .plot_curves import degradation_curve
from .runs import RunInfo, find_runs, sibling_bounds
from .tables import html_table, side_by_side
from .widgets import evidence_texts, render_trace_html, worst_questions_table

__all__ = ["build_site", "SiteBuilder", "SiteResult", "page_name", "compare_name", "watch_signature"]

#: comparison pages written with the site (newest comparable pairs first); more are built on demand
#: when the site is served
MAX_PAIRS = 40
#: statuses whose runs stand on a leaderboard (a failed or stopped run does not)
_LEADERBOARD_STATUSES = ("complete", "complete_with_errors")
_FLIPS_SHOWN = 40

_STYLE = """body{font-family:system-ui,sans-serif;margin:1.5em;color:#222;max-width:1280px}
table{border-collapse:collapse;margin:.5em 0 1.5em}th,td{border:1px solid #ccc;padding:3px 8px;text-align:left;
font-size:13px;vertical-align:top}th{background:#f2f2f2}caption{text-align:left;font-weight:600;padding:4px 0}
.scroll{overflow-x:auto}.filters label{margin-right:1em}.muted{color:#777}.status-complete{color:#176f2c}
.status-complete_with_errors{color:#b86e00;background:#fff4e0}
.status-error,.status-cancelled,.status-started,.status-failed{color:#a33}details{margin:.3em 0}summary{cursor:pointer}
pre.exc{white-space:pre-wrap;margin:0;font-size:12px}th[data-key]{cursor:pointer;user-select:none}
th[aria-sort=ascending]::after{content:" \\25B2"}th[aria-sort=descending]::after{content:" \\25BC"}
tr.bound td{background:#f6f3fb;font-style:italic}.role{font-size:11px;color:#5a3d8a;border:1px solid #b9a6d9;
border-radius:3px;padding:0 3px;font-style:normal}tr.sweep>td{background:#fafafa}.fairness{font-size:12px;color:#444}
#compare-bar{margin:.5em 0;padding:4px 8px;background:#f4f8fc;border:1px solid #cfe0f0}.mcnemar{font-weight:600}
.flip-side{min-width:420px;max-width:600px}
.swatch{display:inline-block;width:10px;height:10px;margin-right:4px;border-radius:2px;vertical-align:baseline}"""

_TABLE_JS = """(function(){
  function val(r, key){ var v = r.getAttribute('data-k-' + key); return v === null ? '' : v; }
  function sortBy(th){
    var table = th.closest('table'), key = th.dataset.key;
    var dir = th.getAttribute('aria-sort') === 'ascending' ? 'descending' : 'ascending';
    table.tHead.querySelectorAll('th').forEach(function(h){ h.removeAttribute('aria-sort'); });
    th.setAttribute('aria-sort', dir);
    var body = table.tBodies[0], rows = Array.from(body.children);
    var num = rows.every(function(r){ var v = val(r, key); return v === '' || isFinite(Number(v)); });
    rows.sort(function(a, b){
      var x = val(a, key), y = val(b, key);
      if (x === '' || y === '') return (x === '') - (y === '');  // empty cells last either way
      var c = num ? Number(x) - Number(y) : x.localeCompare(y, undefined, {numeric: true});
      return dir === 'ascending' ? c : -c;
    });
    rows.forEach(function(r){ body.appendChild(r); });
  }
  document.querySelectorAll('table.sortable > thead th[data-key]').forEach(function(th){
    th.addEventListener('click', function(){ sortBy(th); });
  });
  var stamp = document.getElementById('updated');
  if (stamp && location.protocol.indexOf('http') === 0) {  // served: reload when the site is rebuilt
    var base = null;  // the stamp when this page was opened (a page not rewritten keeps an older one)
    var check = function(){
      fetch(stamp.dataset.src, {cache: 'no-store'}).then(function(r){ return r.ok ? r.text() : ''; })
        .then(function(t){ t = t.trim(); if (!t) return; if (base === null) base = t; else if (t !== base) location.reload(); })
        .catch(function(){});
    };
    check();
    setInterval(check, 3000);
  }
})();"""

_INDEX_JS = """(function(){
  var sel = document.querySelectorAll('.filters select');
  function apply(){
    var want = {};
    sel.forEach(function(s){ want[s.name] = s.value; });
    function ok(el){
      return Object.keys(want).every(function(k){ return !want[k] || el.getAttribute('data-f-' + k) === want[k]; });
    }
    var shown = 0;
    document.querySelectorAll('#runs tr.run').forEach(function(tr){
      var show = ok(tr); tr.style.display = show ? '' : 'none'; if (show) shown++;
    });
    document.querySelectorAll('#runs tr.sweep').forEach(function(tr){
      tr.style.display = Array.from(tr.querySelectorAll('tr.run')).some(function(r){ return r.style.display !== 'none'; }) ? '' : 'none';
    });
    document.querySelectorAll('.leaderboard').forEach(function(div){
      div.style.display = !want.bench || div.getAttribute('data-f-bench') === want.bench ? '' : 'none';
    });
    document.getElementById('shown').textContent = shown;
  }
  sel.forEach(function(s){ s.addEventListener('change', apply); });
  apply();
  var pairs = JSON.parse(document.getElementById('pairs').textContent), picked = [];
  var go = document.getElementById('compare-go'), why = document.getElementById('compare-why');
  function update(){
    go.hidden = true;
    var names = picked.map(function(c){ return c.dataset.label; });
    document.getElementById('picked').textContent = names.length === 2 ? 'A = ' + names[0] + ', B = ' + names[1] : names.join(', ') || 'none';
    if (picked.length < 2) { why.textContent = 'pick ' + (2 - picked.length) + ' more'; return; }
    var a = picked[0].value, b = picked[1].value;
    if (picked[0].dataset.cmp !== picked[1].dataset.cmp) {
      why.textContent = 'not comparable: different bench files or question set'; return;
    }
    why.textContent = '';
    if (pairs[a + '|' + b]) { go.href = pairs[a + '|' + b]; go.hidden = false; }
    else if (pairs[b + '|' + a]) {  // written the other way round: say which run is A
      go.href = pairs[b + '|' + a]; go.hidden = false;
      document.getElementById('picked').textContent = 'A = ' + names[1] + ', B = ' + names[0];
    }
    else if (location.protocol.indexOf('http') === 0) {
      go.href = 'compare?a=' + encodeURIComponent(a) + '&b=' + encodeURIComponent(b); go.hidden = false;
    } else why.textContent = 'this pair was not written with the site: serve it (memeval view --serve) to compare any two runs';
  }
  document.querySelectorAll('input.pick').forEach(function(c){
    c.addEventListener('change', function(){
      if (c.checked) { picked.push(c); if (picked.length > 2) picked.shift().checked = false; }
      else picked = picked.filter(function(x){ return x !== c; });
      update();
    });
  });
  update();
})();"""

FILTERS = ("bench", "system", "role", "mode", "status")


@dataclass(frozen=True)
class SiteResult:
    index: Path
    pages: dict[str, Path]  # run folder → its page
    skipped: tuple[str, ...]  # run folders whose records could not be read (one line each)
    compares: dict[tuple[str, str], Path] = field(default_factory=dict)  # (page A, page B) → comparison page
    updated: str = ""  # when the site was built (UTC, ISO to the millisecond) and the build's number


@dataclass(frozen=True)
class _Run:
    """One readable run as the site shows it: its manifest summary, records and headline."""

    info: RunInfo
    name: str  # its page's file name
    sig: tuple  # what its files looked like when read (see _files_sig)
    df: pl.DataFrame  # its records' columns the index, leaderboards and paired tests read (_SLIM)
    headline: dict


#: the record columns kept in memory per run between builds (the pages read the whole records again)
_SLIM = (
    "run_id",
    "system",
    "tier",
    "tier_index",
    "tier_turns",
    "qid",
    "epoch",
    "axis",
    "haystack",
    "score",
    "weight",
    "error",
    "ungraded_reason",
    "retrieved_turns",
)
#: whole record frames kept while pages are written (a run's page reads it and its bounds')
_FULL_CACHE = 8


def _e(v) -> str:
    return html.escape("" if v is None else str(v), quote=True)


def page_name(run_dir: Path) -> str:
    """A file name for a run's page that stays inside the site, whatever the folder is called.

    >>> page_name(Path("runs/lifelog_bm25_dry_ab12"))[:22]
    'lifelog_bm25_dry_ab12-'
    """
    slug = re.sub(r"[^A-Za-z0-9._-]", "_", run_dir.name)[:60].lstrip(".") or "run"
    return f"{slug}-{hashlib.sha256(str(run_dir.resolve()).encode()).hexdigest()[:8]}.html"


def compare_name(page_a: str, page_b: str) -> str:
    """The comparison page of two run pages (``page_name``): a file name inside the site's ``compare/``.

    >>> compare_name("a-1234.html", "b-5678.html")
    'a-1234--b-5678.html'
    """
    return f"{Path(page_a).stem}--{Path(page_b).stem}.html"


def _files_sig(paths) -> tuple:
    out: list[tuple[str, int | None, int | None]] = []
    for p in paths:
        try:
            st = os.stat(p)
            out.append((str(p), st.st_mtime_ns, st.st_size))
        except OSError:
            out.append((str(p), None, None))
    return tuple(out)


def watch_signature(runs_dir: str | Path) -> tuple:
    """What ``--serve`` polls: path, mtime and size of every ``manifest.json``, ``records.jsonl`` and
    ``sweep.json`` at or under ``runs_dir`` (symlinked folders not followed); it changes when a run
    starts, writes a record, finishes or goes away."""
    found: list[str] = []
    for top, dirs, files in os.walk(runs_dir):
        dirs.sort()
        found.extend(
            os.path.join(top, f) for f in sorted(files) if f in ("manifest.json", "records.jsonl", "sweep.json")
        )
    return _files_sig(found)


def _page(title: str, body: str, plotly_src: str | None, extra_js: str = "", root: str = "", stamp: str = "") -> str:
    script = f'<script src="{plotly_src}"></script>' if plotly_src else ""
    updated = (
        f'<p class="muted" style="float:right"><span id="updated" data-stamp="{_e(stamp)}" '
        f'data-src="{root}stamp.txt">updated {_e(stamp[11:19])} UTC</span></p>'
        if stamp
        else ""
    )
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>'
        f"<style>{_STYLE}</style>{script}</head><body>{updated}{body}<script>{_TABLE_JS}</script>"
        + (f"<script>{extra_js}</script>" if extra_js else "")
        + "</body></html>\n"
    )


def _headline(df: pl.DataFrame) -> dict:
    """Weighted mean on the run's largest tier with its 95% interval and n (graded questions)."""
    errors = int(df["error"].is_not_null().sum())
    graded = df.filter(pl.col("score").is_not_null())
    if not graded.height:
        return {"tier": None, "mean": None, "lo": None, "hi": None, "n": 0, "errors": errors}
    last = graded.sort("tier_index")["tier"][-1]
    b = bootstrap_means(graded.filter(pl.col("tier") == last), ["tier"], weight="weight", n_resamples=500)
    r = b.row(0, named=True)
    return {"tier": last, "mean": r["mean"], "lo": r["lo"], "hi": r["hi"], "n": r["n"], "errors": errors}


def _status(status: str, errors: int | None = None) -> str:
    """A run's status as the browser shows it: coloured by its class (amber: complete with errors),
    with its error records counted."""
    n = f" ({errors} error{'s' if errors != 1 else ''})" if errors else ""
    return f'<b class="status-{_e(status)}">{_e(status.replace("_", " "))}{n}</b>'


def _role(info: RunInfo) -> str:
    """The bound badge of a floor or ceiling run (nothing for a system)."""
    if not info.is_bound:
        return ""
    return f' <span class="role" title="a bound shown beside systems, never ranked">{_e(info.role)} (bound)</span>'


def _swatch(label: str) -> str:
    """The system's colour in every figure (``plot_base.system_colour``), as a small square."""
    return (
        f'<span class="swatch" style="background:{_e(system_colour(label))}" title="its colour in the figures"></span>'
    )


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


def _fairness_html(lines) -> str:
    return '<p class="fairness">' + "<br>".join(_e(line) for line in lines) + "</p>"


def _bench_roots(bench_dir: Path | None) -> tuple[dict[str, Path], str | None]:
    """``--bench``: a bench folder, or a folder of bench folders, by content hash (and a problem line)."""
    if bench_dir is None:
        return {}, None
    cands = [bench_dir] if (bench_dir / "bench.yaml").is_file() else sorted(bench_dir.glob("*/bench.yaml"))
    out: dict[str, Path] = {}
    for c in cands:
        root = c if c.is_dir() else c.parent
        try:
            out.setdefault(load_bench(root).content_hash, root)
        except (InputError, OSError) as e:
            return out, f"--bench {bench_dir}: {' '.join(str(e).splitlines())}"
    return out, None if out else f"--bench {bench_dir}: no bench.yaml there or one folder down"


class SiteBuilder:
    """Builds the run browser of ``runs_dir`` into ``out_dir``, and rebuilds it reusing what did not
    change (records are read again only for runs whose files changed). ``bench_dir``: a bench folder
    (or a folder of them) for the text of evidence a system did not return, when a run's own bench
    root (from its manifest) is gone; ``pairs``: comparison pages written with the site."""

    def __init__(
        self,
        runs_dir: str | Path,
        out_dir: str | Path,
        *,
        bench_dir: str | Path | None = None,
        pairs: int = MAX_PAIRS,
        progress: Callable | None = None,
    ):
        self.runs_dir, self.out = Path(runs_dir), Path(out_dir)
        self.bench_dir = None if bench_dir is None else Path(bench_dir)
        self.max_pairs, self.progress = pairs, progress
        self._runs: dict[Path, _Run] = {}
        self._page_sigs: dict[Path, tuple] = {}
        self._pair_sigs: dict[str, tuple] = {}
        self._pair_runs: dict[str, tuple[Path, Path]] = {}
        self._full_cache: dict[Path, tuple[tuple, pl.DataFrame]] = {}
        self._builds = 0
        self._roots, self._bench_problem = _bench_roots(self.bench_dir)
        self.stamp = ""

    def by_name(self, name: str) -> _Run | None:
        return next((r for r in self._runs.values() if r.name == name), None)

    def build(self) -> SiteResult:
        from plotly.offline import get_plotlyjs

        out = self.out
        for sub in ("runs", "compare"):
            (out / sub).mkdir(parents=True, exist_ok=True)
        if not (out / "plotly.min.js").is_file():
            write_text(out / "plotly.min.js", get_plotlyjs())
        self._builds += 1  # the stamp differs between any two builds, however close in time
        self.stamp = f"{dt.datetime.now(dt.timezone.utc).isoformat(timespec='milliseconds')} #{self._builds}"
        skipped: list[str] = []
        infos = find_runs(self.runs_dir, skipped)  # a corrupt manifest is listed, with the reason
        runs: list[_Run] = []
        for i, info in enumerate(infos):
            if self.progress:
                self.progress(i, len(infos), info)
            sig = _files_sig([info.path / "manifest.json", info.path / "records.jsonl"])
            cached = self._runs.get(info.path)
            if cached is not None and cached.sig == sig:
                runs.append(cached)
                continue
            try:
                df = self._full(info.path, sig)
            except (InputError, ValueError, OSError) as e:  # OSError: a run removed while the site is built
                skipped.append(f"{info.path}: {' '.join(str(e).splitlines())}")
                continue
            slim = df.select([c for c in _SLIM if c in df.columns])
            runs.append(_Run(info, page_name(info.path), sig, slim, _headline(df)))
        self._runs = {r.info.path: r for r in runs}
        system_colours(r.info.label for r in runs)  # colours taken in natural order, as the figures take them
        pages: dict[str, Path] = {}
        for r in runs:
            bounds = [b for b in sibling_bounds([r.info.path], infos) if b in self._runs]
            page_sig = (r.sig, tuple(self._runs[b].sig for b in bounds))
            target = out / "runs" / r.name
            if self._page_sigs.get(r.info.path) != page_sig or not target.is_file():
                write_text(target, self._run_page(r, [self._runs[b] for b in bounds]))
                self._page_sigs[r.info.path] = page_sig
            pages[str(r.info.path)] = target
        compares = {}
        for a, b in _pairs(runs, self.max_pairs):
            compares[(a.name, b.name)] = self.compare(a.name, b.name)
        self._forget_gone()
        write_text(out / "index.html", self._index(runs, skipped, compares))
        write_text(out / "stamp.txt", self.stamp + "\n")
        return SiteResult(out / "index.html", pages, tuple(skipped), compares, self.stamp)

    def compare(self, name_a: str, name_b: str) -> Path:
        """The comparison page of two runs of the site (by page name), written if missing or stale."""
        a, b = self.by_name(name_a), self.by_name(name_b)
        if a is None or b is None:
            raise MemevalError(f"no run page {name_a if a is None else name_b!r} in this site")
        name = compare_name(a.name, b.name)
        target = self.out / "compare" / name
        if self._pair_sigs.get(name) != (a.sig, b.sig) or not target.is_file():
            write_text(target, self._compare_page(a, b))
            self._pair_sigs[name] = (a.sig, b.sig)
            self._pair_runs[name] = (a.info.path, b.info.path)
        return target

    def _full(self, path: Path, sig: tuple) -> pl.DataFrame:
        """All of a run's records (read again unless among the last few read at this signature)."""
        hit = self._full_cache.pop(path, None)
        df = hit[1] if hit is not None and hit[0] == sig else load_records([path])
        self._full_cache[path] = (sig, df)  # most recent last
        while len(self._full_cache) > _FULL_CACHE:
            del self._full_cache[next(iter(self._full_cache))]
        return df

    def _forget_gone(self) -> None:
        """Remove the pages this builder wrote for runs that are gone (a rebuild while serving)."""
        for path in [p for p in self._page_sigs if p not in self._runs]:
            (self.out / "runs" / page_name(path)).unlink(missing_ok=True)
            del self._page_sigs[path]
        for name, (pa, pb) in list(self._pair_runs.items()):
            if pa not in self._runs or pb not in self._runs:
                (self.out / "compare" / name).unlink(missing_ok=True)
                del self._pair_runs[name], self._pair_sigs[name]

    # -- evidence text -------------------------------------------------------------------------

    def _evidence(self, info: RunInfo, rows: pl.DataFrame) -> tuple[dict | None, str]:
        """Evidence turn texts for ``rows`` from the run's bench folder (``--bench``, else the manifest's
        bench root, either only if it holds this run's bench files), and a line saying where from."""
        root = self._roots.get(info.content_hash)
        if root is None and info.bench_root and Path(info.bench_root, "bench.yaml").is_file():
            try:
                if load_bench(info.bench_root).content_hash == info.content_hash:
                    root = Path(info.bench_root)
            except (InputError, OSError):
                pass
        if root is None:
            why = self._bench_problem or (
                f"the bench folder {info.bench_root or '(not recorded)'} is gone or holds other files"
            )
            return None, f"missed-evidence text not shown: {why}; pass the bench with memeval view --bench DIR"
        if not rows.height:
            return {}, f"bench folder {root}"
        try:
            return evidence_texts(rows, root), f"missed-evidence text from the bench folder {root}"
        except (InputError, OSError, ValueError) as e:
            return None, f"missed-evidence text not shown: {root}: {' '.join(str(e).splitlines())}"

    # -- pages -----------------------------------------------------------------------------------

    def _run_page(self, run: _Run, bounds: list[_Run]) -> str:
        info, df = run.info, self._full(run.info.path, run.sig)
        bounds_df = (
            pl.concat([self._full(b.info.path, b.sig) for b in bounds], how="vertical_relaxed") if bounds else None
        )
        both = df if bounds_df is None else pl.concat([df, bounds_df], how="vertical_relaxed")
        # the run beside its floor and ceiling over the questions all of them graded (its own n beside)
        fair = compare_runs(both, [info.path, *(b.info.path for b in bounds)])
        overall = with_own_counts(overall_table(fair.df), both, ["system", "tier_index", "tier"])
        overall = overall.filter(pl.col("system").is_in(df["system"].unique().to_list()))
        cols = ("system", "tier", "weighted", "unweighted", "n", "graded_own", "ungraded", "errors")
        overall = overall.select(
            [c for c in (*cols, "recall_any@5", "floor_weighted", "ceiling_weighted") if c in overall.columns]
        )
        axis = tier_axis_table(df).drop("tier_index")
        sweep = f" · shard of sweep {_e(info.sweep.name)}" if info.sweep else ""
        parts = [
            f'<p><a href="../index.html">← all runs</a></p><h1>{_e(info.label)}{_role(info)}</h1>',
        ]
        if info.is_bound:
            parts.append(
                f'<p class="role-note"><b>A {_e(info.role)} run</b>: a bound shown beside systems '
                f"({'the built-in oracle, which sees the question and its evidence' if info.role == 'ceiling' else 'answers with no memory'}); "
                "never listed or ranked as a system.</p>"
            )
        parts.append(
            f"<p>bench <b>{_e(info.bench_id)}</b> · mode <b>{_e(info.mode)}</b> · question set "
            f"<b>{_e(info.question_set)}</b> · status {_status(info.status, run.headline['errors'])} · "
            f'created {_e(info.created_at)}{sweep}<br><span class="muted">run folder {_e(info.path)}</span></p>'
        )
        m = read_manifest(info.path)
        why = [*m.get("status_reasons", []), *([m["error"]] if m.get("error") else [])]
        if why:  # why the run failed or stopped, as the run said it
            parts.append("".join(f'<p class="status-{_e(info.status)}">{_e(w)}</p>' for w in why))
        parts.append(_errors_section(df))
        bound_note = "" if bounds else " (no floor/ceiling runs found beside this run)"
        parts.append(_fairness_html(fair.lines()))
        parts.append(
            '<div class="scroll">'
            + html_table(
                overall,
                caption=f"Overall: weighted and unweighted mean per tier, floor and ceiling{bound_note}; n = "
                "questions the run and its floor and ceiling all graded, graded_own = what the run graded by itself",
            )
            + "</div>"
        )
        plotly = None  # the script only where a figure is drawn
        if df["tier"].n_unique() > 1:
            try:
                fig = degradation_curve(fair.df)
                parts.append(fig.to_html(full_html=False, include_plotlyjs=False))
                plotly = "../plotly.min.js"
            except (ValueError, pl.exceptions.PolarsError) as e:  # a run too small to draw: say so
                parts.append(f'<p class="muted">no degradation curve ({_e(e)})</p>')
        parts.append('<div class="scroll">' + html_table(axis, caption="Per tier × axis") + "</div>")
        lat = latency_table(df).with_columns(pl.col("reasons").list.join("; "))
        parts.append('<div class="scroll">' + html_table(lat, caption="Latency minus round trip (ms)") + "</div>")
        below = df.filter(pl.col("score") < 1)
        parts.append(
            '<h2>Worst questions</h2><p class="muted">Records below full credit (score &lt; 1): the worst '
            "of each system × axis first, then the second worst of each, so no one axis fills the list; "
            "ungraded records and errors are not ranked.</p>"
            f'<div class="scroll">{worst_questions_table(df, n=20, full_credit=False)}</div>'
        )
        worst = below.sort("score", "weight", descending=[False, True]).head(30)
        evidence, source = self._evidence(info, worst)
        traces = "".join(
            f"<details><summary>{_e(r['tier'])} · {_e(r['qid'])} · {_e(r['axis'])} · score "
            f"{_e(r['score'])}</summary>{render_trace_html(r, evidence)}</details>"
            for r in worst.iter_rows(named=True)
        )
        parts.append(
            f'<h2>Traces (the 30 lowest scores below full credit)</h2><p class="muted">{_e(source)}</p>'
            f"{traces or '<p>no graded record below full credit</p>'}"
        )
        return _page(f"{info.label} — memeval run", "".join(parts), plotly, root="../", stamp=self.stamp)

    def _compare_page(self, ra: _Run, rb: _Run) -> str:
        a, b = ra.info, rb.info
        head = '<p><a href="../index.html">← all runs</a></p><h1>Comparison</h1>' + "".join(
            f'<p><b>{k}</b> = {_swatch(r.info.label)}<a href="../runs/{_e(r.name)}">{_e(r.info.label)}</a>{_role(r.info)} · '
            f"{_e(r.info.mode)} · {_e(r.info.bench_id)} · question set {_e(r.info.question_set)} · status "
            f'{_status(r.info.status, r.headline["errors"])}<br><span class="muted">{_e(r.info.path)}</span></p>'
            for k, r in (("A", ra), ("B", rb))
        )
        try:
            full_a, full_b = self._full(a.path, ra.sig), self._full(b.path, rb.sig)
            d = paired_diff(a.path, b.path, records=(full_a, full_b))
        except MemevalError as e:
            body = head + f'<p class="status-failed">not compared: {_e(e)}</p>'
            return _page("memeval comparison", body, None, root="../", stamp=self.stamp)
        parts = [head, _fairness_html(d.fairness), f'<p class="muted">{_e(d.method)}</p>']
        for r in d.overall.iter_rows(named=True):
            parts.append(
                f'<p class="mcnemar">{_e(r["tier"])}: A − B = {r["diff"]:+.3f} [{r["lo"]:+.3f}, {r["hi"]:+.3f}] '
                f"over n={r['n']} questions both graded (A {r['mean_a']:.3f}, B {r['mean_b']:.3f}); right in A only "
                f"{r['a_only']}, in B only {r['b_only']}; McNemar exact p = {r['p']:.2g}</p>"
            )
        if not d.overall.height:
            parts.append('<p class="mcnemar">no question graded by both runs: nothing to compare</p>')
        parts.append('<div class="scroll">' + html_table(d.overall, caption="Per tier: A − B") + "</div>")
        if d.per_axis.height:
            parts.append('<div class="scroll">' + html_table(d.per_axis, caption="Per tier × axis: A − B") + "</div>")
        keys = ["tier", "qid", "epoch"]
        shown = d.flips.head(_FLIPS_SHOWN)
        rows_a = full_a.join(shown.select(keys), on=keys, how="semi")
        rows_b = full_b.join(shown.select(keys), on=keys, how="semi")
        ev, source = self._evidence(a, pl.concat([rows_a, rows_b], how="vertical_relaxed"))
        by_a = {(r["tier"], r["qid"], r["epoch"]): r for r in rows_a.iter_rows(named=True)}
        by_b = {(r["tier"], r["qid"], r["epoch"]): r for r in rows_b.iter_rows(named=True)}
        flips = []
        for i, f in enumerate(shown.iter_rows(named=True)):
            k = (f["tier"], f["qid"], f["epoch"])
            won = "A" if f["a"] >= 1 else "B"
            asked = str(by_a[k].get("question_asked") or "")
            asked = asked if len(asked) <= 90 else asked[:89] + "…"
            flips.append(
                f'<details class="flip"{" open" if i < 3 else ""}><summary>{_e(f["tier"])} · {_e(f["qid"])} · '
                f"{_e(f['axis'])} · A {f['a']:g}, B {f['b']:g} (right in {won} only) · {_e(asked)}</summary>"
                + side_by_side(
                    f'<div class="flip-side"><b>A</b> {render_trace_html(by_a[k], ev)}</div>',
                    f'<div class="flip-side"><b>B</b> {render_trace_html(by_b[k], ev)}</div>',
                )
                + "</details>"
            )
        more = (
            f" (the first {_FLIPS_SHOWN} shown; memeval diff lists them all)" if d.flips.height > _FLIPS_SHOWN else ""
        )
        parts.append(
            f"<h2>Flipped questions: {d.flips.height}{more}</h2>"
            f'<p class="muted">right (score 1) in one run only; both traces side by side. {_e(source)}</p>'
            + ("".join(flips) or "<p>none</p>")
        )
        return _page(f"{a.label} vs {b.label} — memeval", "".join(parts), None, root="../", stamp=self.stamp)

    # -- index -----------------------------------------------------------------------------------

    def _index(self, runs: list[_Run], skipped: list[str], compares: dict) -> str:
        values = {f: sorted({_filter_value(r.info, f) for r in runs}) for f in FILTERS}
        bound = {r.info.label: r.info.role for r in runs if r.info.is_bound}  # "oracle (ceiling bound)"
        filters = "".join(
            f'<label>{f} <select name="{f}"><option value="">all</option>'
            + "".join(
                f'<option value="{_e(v)}">{_e(v)}{f" ({bound[v]} bound)" if f == "system" and v in bound else ""}</option>'
                for v in values[f]
            )
            + "</select></label>"
            for f in FILTERS
        )
        plain = [r for r in runs if r.info.sweep is None]
        sweeps: dict[Path, list[_Run]] = {}
        for r in runs:
            if r.info.sweep is not None:
                sweeps.setdefault(r.info.sweep, []).append(r)
        body_rows = [_run_row(r, self.runs_dir) for r in plain]
        body_rows += [_sweep_row(path, shards, self.runs_dir) for path, shards in sweeps.items()]
        pairs = {f"{a}|{b}": f"compare/{p.name}" for (a, b), p in compares.items()}
        pairs_json = json.dumps(pairs).replace("<", "\\u003c")
        skip = "".join(f"<li>{_e(s)}</li>" for s in skipped)
        body = (
            f'<h1>memeval runs</h1><p class="muted">{len(runs)} runs in {_e(self.runs_dir)}; scores are weighted means '
            "over graded questions on each run's largest tier, with a 95% bootstrap interval and n. Floor and "
            "ceiling runs are bounds, marked so and never ranked. Click a column heading to sort.</p>"
            f'<div class="filters">{filters} <span class="muted"><span id="shown">{len(runs)}</span> shown</span></div>'
            f'<div id="compare-bar">Compare two runs (tick them below): <span id="picked">none</span> '
            '<a id="compare-go" hidden>open the comparison →</a> <span id="compare-why" class="muted"></span></div>'
            + _leaderboards(runs)
            + f'<h2>Runs</h2><div class="scroll"><table id="runs" class="sortable"><thead><tr>{_RUN_HEAD}</tr></thead>'
            f"<tbody>{''.join(body_rows)}</tbody></table></div>"
            + (f"<h2>Not shown</h2><ul>{skip}</ul>" if skip else "")
            + f'<script type="application/json" id="pairs">{pairs_json}</script>'
        )
        return _page("memeval runs", body, None, _INDEX_JS, stamp=self.stamp)


def build_site(
    runs_dir: str | Path,
    out_dir: str | Path,
    progress=None,
    *,
    bench_dir: str | Path | None = None,
    pairs: int = MAX_PAIRS,
) -> SiteResult:
    """Write the run browser for every run under ``runs_dir`` into ``out_dir``; returns what was written."""
    return SiteBuilder(runs_dir, out_dir, bench_dir=bench_dir, pairs=pairs, progress=progress).build()


def _pairs(runs: list[_Run], limit: int) -> list[tuple[_Run, _Run]]:
    """Up to ``limit`` pairs of runs that can be compared (same bench files and question set, a tier in
    common), newest first."""
    out: list[tuple[_Run, _Run]] = []
    for i, a in enumerate(runs):
        for b in runs[i + 1 :]:
            if len(out) >= limit:
                return out
            same = (a.info.content_hash, a.info.question_set) == (b.info.content_hash, b.info.question_set)
            if same and set(a.info.tiers) & set(b.info.tiers):
                out.append((b, a) if a.info.is_bound and not b.info.is_bound else (a, b))  # a bound as B
    return out


def _filter_value(info: RunInfo, f: str) -> str:
    return {
        "bench": info.bench_id,
        "system": info.label,
        "role": info.role,
        "mode": info.mode,
        "status": info.status,
    }[f]


_COLUMNS = (
    ("", None),
    ("bench", "bench"),
    ("system", "system"),
    ("run folder", "folder"),
    ("mode", "mode"),
    ("question set", "qset"),
    ("tiers", "tiers"),
    ("weighted score, largest tier [95% CI]", "score"),
    ("status", "status"),
    ("created (UTC)", "date"),
)
_RUN_HEAD = "".join(f'<th data-key="{k}">{_e(t)}</th>' if k else f"<th>{t}</th>" for t, k in _COLUMNS)


def _rel(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root)) or "."
    except ValueError:
        return str(path)


def _run_row(r: _Run, runs_dir: Path) -> str:
    info, h = r.info, r.headline
    keys = {
        "bench": info.bench_id,
        "system": info.label,
        "folder": _rel(info.path, runs_dir),
        "mode": info.mode,
        "qset": info.question_set,
        "tiers": len(info.tiers),
        "score": "" if h["mean"] is None else f"{h['mean']:.6f}",
        "status": info.status,
        "date": info.created_at,
    }
    data = " ".join(f'data-k-{k}="{_e(v)}"' for k, v in keys.items())
    data += " " + " ".join(f'data-f-{f}="{_e(_filter_value(info, f))}"' for f in FILTERS)
    pick = (
        f'<input type="checkbox" class="pick" value="{_e(r.name)}" data-label="{_e(info.label)}" '
        f'data-cmp="{_e(info.content_hash)}|{_e(info.question_set)}" aria-label="compare {_e(info.label)}">'
    )
    tier = f'<br><span class="muted">{_e(h["tier"])}</span>' if h["tier"] else ""
    return (
        f'<tr class="run{" bound" if info.is_bound else ""}" {data}><td>{pick}</td><td>{_e(info.bench_id)}</td>'
        f'<td>{_swatch(info.label)}<a href="runs/{_e(r.name)}">{_e(info.label)}</a>{_role(info)}</td>'
        f"<td>{_e(keys['folder'])}</td><td>{_e(info.mode)}</td><td>{_e(info.question_set)}</td>"
        f"<td>{_e(', '.join(info.tiers))}</td><td>{_fmt_score(h)}{tier}</td>"
        f"<td>{_status(info.status, h['errors'])}</td><td>{_e(info.created_at[:19])}</td></tr>"
    )


def _sweep_row(path: Path, shards: list[_Run], runs_dir: Path) -> str:
    """A sweep as one row: what it covers and its shards' statuses, the shards in a table inside."""
    statuses: dict[str, int] = {}
    for s in shards:
        statuses[s.info.status] = statuses.get(s.info.status, 0) + 1
    errors = sum(s.headline["errors"] for s in shards)
    benches = sorted({s.info.bench_id for s in shards})
    systems = sorted({s.info.label for s in shards})
    newest = max(s.info.created_at for s in shards)
    worst = next(
        (st for st in ("failed", "error", "cancelled", "started", "complete_with_errors") if st in statuses), "complete"
    )
    keys = {
        "bench": benches[0],
        "system": systems[0],
        "folder": _rel(path, runs_dir),
        "mode": ",".join(sorted({s.info.mode for s in shards})),
        "qset": ",".join(sorted({s.info.question_set for s in shards})),
        "tiers": len({t for s in shards for t in s.info.tiers}),
        "score": "",
        "status": worst,
        "date": newest,
    }
    data = " ".join(f'data-k-{k}="{_e(v)}"' for k, v in keys.items())
    state = ", ".join(f"{n} {st.replace('_', ' ')}" for st, n in sorted(statuses.items()))
    summary = (
        f"<b>sweep {_e(path.name)}</b> · {len(shards)} shards ({_e(state)}"
        + (f"; {errors} error records" if errors else "")
        + f") · {len(benches)} bench{'es' if len(benches) != 1 else ''}: {_e('; '.join(benches))} · systems "
        f"{_e(', '.join(systems))} · newest {_e(newest[:19])}"
    )
    inner = "".join(_run_row(s, runs_dir) for s in shards)
    return (
        f'<tr class="sweep" {data}><td colspan="{len(_COLUMNS)}"><details><summary>{summary}</summary>'
        f'<table class="sortable shards"><thead><tr>{_RUN_HEAD}</tr></thead><tbody>{inner}</tbody></table>'
        "</details></td></tr>"
    )


def _tier_order(df: pl.DataFrame) -> list[str]:
    """Tiers smallest haystack first (a shard's manifest lists its own tier only, so positions from
    different runs do not agree; sizes do)."""
    sizes = df.group_by("tier").agg(pl.col("tier_turns").median().alias("t")).sort("t", "tier", nulls_last=True)
    return [str(t) for t in sizes["tier"].to_list()]


def _leaderboards(runs: list[_Run]) -> str:
    """One leaderboard per bench files × mode × question set, over the finished runs."""
    groups: dict[tuple, list[_Run]] = {}
    for r in runs:
        if r.info.status in _LEADERBOARD_STATUSES:
            groups.setdefault(r.info.key, []).append(r)
    if not groups:
        return ""
    out = ["<h2>Leaderboards</h2>"]
    for key in sorted(groups, key=lambda k: (groups[k][0].info.bench_id, k[1], k[2])):
        out.append(_leaderboard(groups[key]))
    return "".join(out)


def _leaderboard(members: list[_Run]) -> str:
    """System × tier: the newest finished run of each system covering each tier, over the questions
    every one of them graded (``compare_runs``), with a 95% interval and n; bounds marked, not ranked."""
    info0 = members[0].info
    chosen: dict[tuple[str, str], _Run] = {}
    for r in members:  # newest first
        for t in r.info.tiers:
            chosen.setdefault((r.info.label, t), r)
    frames: list[pl.DataFrame] = []
    manifests: dict[str, dict] = {}
    role: dict[str, str] = {}
    runs_of: dict[str, dict[str, _Run]] = {}
    for (label, tier), r in chosen.items():
        frames.append(
            r.df.filter(pl.col("tier") == tier).with_columns(
                pl.lit(label).alias("run_id"), pl.lit(label).alias("system")
            )
        )
        manifests.setdefault(label, read_manifest(r.info.path))
        role[label] = r.info.role
        runs_of.setdefault(label, {})[tier] = r
    df = pl.concat(frames, how="vertical_relaxed")
    fair = compare_runs(df, manifests=manifests)
    tiers = _tier_order(df)
    stats = {
        (s["system"], s["tier"]): s
        for s in bootstrap_means(fair.df, ["system", "tier"], weight="weight").iter_rows(named=True)
    }
    own = {
        (s["system"], s["tier"]): s
        for s in df.group_by("system", "tier")
        .agg(pl.col("score").is_not_null().sum().alias("graded"), pl.col("error").is_not_null().sum().alias("errors"))
        .iter_rows(named=True)
    }
    labels = sorted(role)
    # ranked on the tier most systems were run on (the larger on a tie): a system not run there is not ranked
    scored = {t: sum(role[s] == "system" and (s, t) in stats for s in labels) for t in tiers}
    ranked_tier = max(reversed(tiers), key=lambda t: scored[t]) if any(scored.values()) else None
    ranking = sorted(
        (s for s in labels if role[s] == "system" and (s, ranked_tier) in stats),
        key=lambda s: -stats[(s, ranked_tier)]["mean"],
    )
    rank = {s: i + 1 for i, s in enumerate(ranking)}
    order = (
        [s for s in labels if role[s] == "ceiling"]
        + ranking
        + [s for s in labels if role[s] == "system" and s not in rank]
        + [s for s in labels if role[s] == "floor"]
    )
    head = '<th data-key="rank">rank</th><th data-key="system">system</th>' + "".join(
        f'<th data-key="t{i}">{_e(t)}</th>' for i, t in enumerate(tiers)
    )
    rows = []
    for s in order:
        cells, keys = [], {"rank": rank.get(s, ""), "system": s}
        for i, t in enumerate(tiers):
            st, o = stats.get((s, t)), own.get((s, t))
            if o is None:
                cells.append('<td class="muted">not run</td>')
                continue
            if st is None:
                cells.append(f'<td class="muted">no common graded question (own graded {o["graded"]})</td>')
                continue
            keys[f"t{i}"] = f"{st['mean']:.6f}"
            extra = f", own {o['graded']}" if o["graded"] != st["n"] else ""
            errs = f', <span class="status-complete_with_errors">{o["errors"]} errors</span>' if o["errors"] else ""
            run = runs_of[s][t]
            cells.append(
                f'<td><a href="runs/{_e(run.name)}">{st["mean"]:.3f}</a> [{st["lo"]:.3f}, {st["hi"]:.3f}]'
                f'<br><span class="muted">n={st["n"]}{extra}</span>{errs}</td>'
            )
        bound = role[s] != "system"
        rank_cell = f'<span class="role">{_e(role[s])} (bound)</span>' if bound else _e(rank.get(s, "–"))
        data = " ".join(f'data-k-{k}="{_e(v)}"' for k, v in keys.items())
        rows.append(
            f'<tr class="{"bound" if bound else "system"}" {data}><td>{rank_cell}</td><td>{_swatch(s)}{_e(s)}</td>'
            f"{''.join(cells)}</tr>"
        )
    title = f"{info0.bench_id} · {info0.mode} mode · question set {info0.question_set}"
    note = (
        f"ranked by the weighted score on {_e(ranked_tier)} (a rank orders point estimates: read the intervals); "
        if ranked_tier
        else ""
    )
    return (
        f'<div class="leaderboard" data-f-bench="{_e(info0.bench_id)}"><h3>{_e(title)}</h3>'
        + _fairness_html(fair.lines())
        + '<p class="muted">Weighted score [95% CI] per tier over the questions every run here graded; n = those '
        f"questions, own = what the run graded by itself; {note}floor and ceiling are bounds, not ranked.</p>"
        '<div class="scroll"><table class="sortable leaderboard-table">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}"
        "</tbody></table></div></div>"
    )
