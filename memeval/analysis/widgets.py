"""Per-question trace browser (ipywidgets) and its static HTML fallbacks.

Rendering is pure: ``render_trace_html(row)`` and ``worst_questions_table(df, n)`` turn records
into HTML strings, every piece of bench or system text passed through ``html.escape``. The
widget only wires filters and buttons to those functions; in a static HTML report (where widget
callbacks do not run) use the tables instead.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any, Iterable

import ipywidgets as widgets
import polars as pl
from ..bench.io import load_bench, read_turns
from .attribution import CAUSES

__all__ = [
    "ALL",
    "FLIPS",
    "render_trace_html",
    "worst_questions_table",
    "evidence_flags",
    "with_flips",
    "evidence_texts",
    "TraceBrowser",
]

ALL = "(all)"
_UNGRADED = "ungraded"
_EVIDENCE_STYLE = "background:#fff3b0;border-left:4px solid #e0a800;"
_PLAIN_STYLE = "border-left:4px solid #ddd;"
_MISSED_STYLE = "color:#888;border-left:4px dashed #ccc;"
#: Axes whose right answer is an abstention: their trace shows what was expected instead of an empty gold.
_ABSTENTION_AXES = ("ABSTAIN", "FALSE_MEMORY")
#: The browser's flip filter: records whose correctness (score 1 or not) differs across tiers, or systems.
FLIPS = {"flipped between tiers": "flip_tiers", "flipped between systems": "flip_systems"}


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def _clip(text: Any, limit: int) -> str:
    s = "" if text is None else str(text)
    return s if len(s) <= limit else s[: limit - 1] + "…"


def _memory_text(m: Any) -> str:
    """A returned memory as text: a string, or an object with a ``text`` field."""
    if isinstance(m, dict):
        return str(m.get("text") or "")
    return "" if m is None else str(m)


def _row_memories(row: dict) -> list[tuple[str, str | None, str | None]]:
    """(content, timestamp, speaker) of each returned memory: from the record's ``memories`` objects
    where it has them, else the display strings of ``memories_returned`` (all content)."""
    shown = list(row.get("memories_returned") or [])
    objs = row.get("memories")
    if objs is not None and len(objs) == len(shown):
        return [(_memory_text(m), m.get("timestamp"), m.get("speaker")) for m in objs]
    return [(_memory_text(m), None, None) for m in shown]


def evidence_flags(row: dict) -> tuple[list[bool], str]:
    """Which returned memories hold evidence, and how that was decided.

    With turn ids (``retrieved_turns`` aligned with ``memories_returned``) a memory is evidence
    when its id is in ``evidence_turns``; without ids, when it contains the gold answer text.
    """
    memories = _row_memories(row)
    ids = row.get("retrieved_turns")
    evidence = set(row.get("evidence_turns") or [])
    if ids is not None and len(ids) == len(memories):
        return [i in evidence for i in ids], "turn id in evidence_turns"
    gold = (row.get("gold_answer") or "").strip().casefold()
    return (
        [bool(gold) and gold in text.casefold() for text, _, _ in memories],
        "contains the gold answer (no turn ids)",
    )


def _expects_abstention(row: dict) -> bool:
    return row.get("axis") in _ABSTENTION_AXES or (not row.get("gold_answer") and not row.get("evidence_turns"))


def _missed_evidence_html(row: dict, evidence_text: dict | None) -> str:
    """Evidence turns the system did not return, greyed, with their text when the bench is at hand."""
    ids = row.get("retrieved_turns")
    returned = set(ids or [])
    missed = [t for t in row.get("evidence_turns") or [] if t not in returned]
    if not missed or ids is None:
        return ""
    items = []
    for t in missed:
        text = (evidence_text or {}).get((row.get("tier"), row.get("haystack"), t))
        body = (
            _e(text)
            if text is not None
            else "<em>(text not loaded: pass the bench folder to see it, e.g. memeval view --bench DIR)</em>"
        )
        items.append(
            f'<li class="memory missed" style="{_MISSED_STYLE}padding:2px 6px;margin:2px 0;'
            f'white-space:pre-wrap">turn {_e(t)}: {body}</li>'
        )
    return (
        f"<div><b>evidence not returned</b> ({len(missed)})</div>"
        f'<ul style="list-style:none;padding-left:1em">{"".join(items)}</ul>'
    )


def render_trace_html(row: dict, evidence_text: dict | None = None) -> str:
    """One record as an HTML fragment: question as asked, gold (or the abstention expected), answer,
    memories (evidence marked), evidence turns not returned (greyed; their text from ``evidence_text``,
    ``{(tier, haystack, turn_id): text}``, see :func:`evidence_texts`), score, verdict, retrieval and
    latency. All text is escaped."""
    memories = _row_memories(row)
    ids = row.get("retrieved_turns")
    flags, rule = evidence_flags(row)
    items = []
    for k, ((text, when, who), is_ev) in enumerate(zip(memories, flags)):
        meta = " ".join(x for x in (f"[{when}]" if when else "", f"{who}:" if who else "") if x)
        meta_html = f'<small class="memory-meta" style="color:#666">{_e(meta)}</small> ' if meta else ""
        tid = f"turn {_e(ids[k])}: " if ids is not None and len(ids) == len(memories) else ""
        badge = ' <b style="color:#a66b00">[evidence]</b>' if is_ev else ""
        style = _EVIDENCE_STYLE if is_ev else _PLAIN_STYLE
        items.append(
            f'<li class="memory{" evidence" if is_ev else ""}" style="{style}padding:2px 6px;'
            f'margin:2px 0;white-space:pre-wrap">{tid}{meta_html}{_e(text)}{badge}</li>'
        )
    mem_html = f"<ol>{''.join(items)}</ol>" if items else "<p><em>no memories returned</em></p>"
    score = row.get("score")
    score_txt = "ungraded" if score is None else f"{score:g}"
    verdict = row.get("verdict") or _UNGRADED
    err = row.get("error")
    why = row.get("ungraded_reason")
    latency = row.get("latency_ms")
    lmr = row.get("latency_minus_rtt_ms")
    evidence = row.get("evidence_turns") or []
    if _expects_abstention(row):
        gold = "<em>an abstention: this was never stated, so the right answer says so</em>"
        if row.get("gold_answer"):
            gold += f" <small>(gold: {_e(row.get('gold_answer'))})</small>"
        hit = "no evidence turns: nothing to retrieve"
    else:
        gold = _e(row.get("gold_answer"))
        hit = (
            f"hit: {_e(row.get('retrieval_hit'))}; evidence turns: {_e(', '.join(str(t) for t in evidence) or 'none')}"
        )
    fields = [
        ("question as asked", f"{_e(row.get('question_asked'))} <small>({_e(row.get('query_lang') or 'en')})</small>"),
        ("gold answer", gold),
        ("answer", _e(row.get("answer"))),
        (
            "score",
            f"{_e(score_txt)} — verdict <b>{_e(verdict)}</b> <small>(grader {_e(row.get('grader'))})</small>"
            + (f"<br><small>ungraded: {_e(why)}</small>" if why else ""),
        ),
        ("retrieval", f"{hit}; chars returned: {_e(row.get('chars_returned'))}"),
        (
            "latency",
            f"{_e('-' if latency is None else f'{latency:.1f}')} ms total, "
            f"{_e('-' if lmr is None else f'{lmr:.1f}')} ms minus round trip "
            f"<small>({_e(row.get('speed_status'))})</small>",
        ),
    ]
    if row.get("attribution_version"):
        fields.append(("where it broke", _attribution_html(row)))
    if err:
        fields.append(("error", f'<span style="color:#b00">{_e(err)}</span>'))
    body = "".join(
        f'<tr><th style="text-align:left;vertical-align:top;padding-right:1em">{k}</th>'
        f'<td style="text-align:left">{v}</td></tr>'
        for k, v in fields
    )
    head = (
        f"{_e(row.get('qid'))} · {_e(row.get('system'))} · tier {_e(row.get('tier'))} · "
        f"{_e(row.get('axis'))} (weight {_e(row.get('weight'))}) · epoch {_e(row.get('epoch'))}"
    )
    return (
        f'<div class="trace"><h4 style="margin:4px 0">{head}</h4><table>{body}</table>'
        f"<div><b>memories returned</b> ({len(memories)}; evidence marked when {_e(rule)})</div>"
        f"{mem_html}{_missed_evidence_html(row, evidence_text)}</div>"
    )


def _attribution_html(row: dict) -> str:
    """What ``memeval attribute`` said of the record: its cause, whether the evidence was stored and read,
    and the scores of the conditions asked (oracle evidence, whole haystack, stored dump)."""
    cause = row.get("attribution")
    parts = [f"<b>{_e(cause.replace('_', ' ') if cause else 'not attributed')}</b>"]
    for k, label in (("attribution_stored", "evidence stored"), ("attribution_read", "evidence read")):
        if row.get(k) is not None:
            parts.append(f"{label}: {_e(row.get(k))}")
    scores = [
        f"{name} {row[f'attribution_{name}_score']:g}"
        for name in ("oracle", "context", "stored")
        if row.get(f"attribution_{name}_score") is not None
    ]
    if scores:
        parts.append("conditions: " + _e(", ".join(scores)))
    if row.get("attribution_note"):
        parts.append(f"<small>{_e(row.get('attribution_note'))}</small>")
    return "; ".join(parts)


_WORST_COLUMNS = (
    "system",
    "tier",
    "qid",
    "axis",
    "weight",
    "score",
    "verdict",
    "question_asked",
    "gold_answer",
    "answer",
    "retrieval_hit",
    "attribution",
    "top memory",
)


def worst_questions_table(
    df: pl.DataFrame, n: int = 20, text_limit: int = 240, varied: bool = True, full_credit: bool = True
) -> str:
    """The ``n`` lowest-scoring graded records as a static HTML table (escaped, long text clipped).

    Order: score ascending, then heavier axes first, then larger tiers first. ``varied`` takes the
    worst record of every system × axis before the second worst of any, so the table shows where each
    system fails rather than one group. Ungraded records and errors are not "worst"; they are counted
    in the caption. ``full_credit=False`` leaves out records with full credit (score 1), which
    ``varied`` would otherwise list for an axis a system got all right.
    """
    graded = df.filter(pl.col("score").is_not_null())
    n_ungraded = df.height - graded.height
    n_graded = graded.height
    if not full_credit:
        graded = graded.filter(pl.col("score") < 1)
    order = (["score", "weight", "tier_index", "system", "qid"], [False, True, True, False, False])
    ranked = graded.sort(*order[:1], descending=order[1])
    if varied:
        ranked = (
            ranked.with_columns(pl.int_range(pl.len()).over("system", "axis").alias("_rank"))
            .sort(["_rank", *order[0]], descending=[False, *order[1]])
            .drop("_rank")
        )
    worst = ranked.head(n)
    head = "".join(f"<th>{_e(c)}</th>" for c in _WORST_COLUMNS)
    rows = []
    for r in worst.to_dicts():
        mems = r.get("memories_returned") or []
        cells = {**r, "top memory": _memory_text(mems[0]) if mems else "", "score": f"{r['score']:g}"}
        rows.append(
            "<tr>"
            + "".join(
                f'<td style="vertical-align:top;text-align:left">{_e(_clip(cells.get(c), text_limit))}</td>'
                for c in _WORST_COLUMNS
            )
            + "</tr>"
        )
    below = "" if full_credit else f", {n_graded - graded.height} with full credit left out"
    caption = (
        f"{len(rows)} lowest-scoring of {n_graded} graded records ({n_ungraded} ungraded or errored, not ranked{below})"
    )
    return (
        f'<table class="worst-questions"><caption>{_e(caption)}</caption><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def with_flips(df: pl.DataFrame) -> pl.DataFrame:
    """Add ``flip_tiers`` (the same system got the question right, score 1, in one tier and not in
    another) and ``flip_systems`` (in one tier, one system right and another not). Ungraded records
    take no part.

    >>> df = pl.DataFrame({"system": ["a", "a", "b"], "tier": ["core", "full", "core"], "qid": ["q"] * 3,
    ...                    "epoch": [0] * 3, "score": [1.0, 0.0, 1.0]})
    >>> with_flips(df).select("flip_tiers", "flip_systems").rows()
    [(True, False), (True, False), (False, False)]
    """
    right = pl.when(pl.col("score").is_not_null()).then(pl.col("score") >= 1)
    return df.with_columns(
        (right.drop_nulls().n_unique().over("system", "qid", "epoch") > 1).alias("flip_tiers"),
        (right.drop_nulls().n_unique().over("tier", "qid", "epoch") > 1).alias("flip_systems"),
    ).with_columns(
        (pl.col("flip_tiers") & pl.col("score").is_not_null()),
        (pl.col("flip_systems") & pl.col("score").is_not_null()),
    )


def evidence_texts(df: pl.DataFrame, bench_dir) -> dict[tuple, str]:
    """``{(tier, haystack, turn_id): text}`` of every evidence turn the records name, read from the
    bench folder, so traces can show the evidence a system did not return."""
    bench = load_bench(bench_dir)
    wanted: dict[str, set] = {}
    for r in df.select("tier", "haystack", "evidence_turns").iter_rows():
        wanted.setdefault(r[0], set()).update((r[1], t) for t in r[2] or [])
    out = {}
    for tier in bench.tiers:
        if tier.name in wanted:
            for t in read_turns(Path(bench.root) / tier.turns_file):
                if (t.haystack, t.turn_id) in wanted[tier.name]:
                    out[(tier.name, t.haystack, t.turn_id)] = t.text
    return out


def _options(values: Iterable) -> list[str]:
    return [ALL] + [str(v) for v in values]


class TraceBrowser(widgets.VBox):
    """Browse records one at a time, filtered by system, tier, axis, verdict, flips (between tiers
    or systems) and where an attributed run's misses broke (``memeval attribute``), searched by text (question, gold, answer, memories), or jumped to by question id;
    next/previous. ``evidence_text`` (:func:`evidence_texts`) shows evidence turns not returned.

    >>> from memeval.workbench import load_runs
    >>> browser = TraceBrowser(load_runs([tiny_run]))
    >>> browser.position.value
    '1 / 309'
    >>> browser.next.click(); browser.position.value
    '2 / 309'
    """

    def __init__(self, df: pl.DataFrame, evidence_text: dict | None = None):
        self._evidence_text = evidence_text
        self._rows = with_flips(df).sort(["system", "tier_index", "qid", "epoch"]).to_dicts()
        for r in self._rows:
            r["_haystack_text"] = " ".join(
                [str(r.get(k) or "") for k in ("qid", "question_asked", "gold_answer", "answer")]
                + [_memory_text(m) for m in r.get("memories_returned") or []]
            ).casefold()
        tiers = df.select("tier", "tier_index").unique().sort("tier_index")["tier"].to_list()
        self.system = widgets.Dropdown(description="system", options=_options(df["system"].unique(maintain_order=True)))
        self.tier = widgets.Dropdown(description="tier", options=_options(tiers))
        self.axis = widgets.Dropdown(description="axis", options=_options(sorted(df["axis"].unique().to_list())))
        self.verdict = widgets.Dropdown(
            description="verdict", options=_options(["correct", "partial", "wrong", _UNGRADED])
        )
        self.flips = widgets.Dropdown(description="flips", options=_options(FLIPS))
        causes = df["attribution"].drop_nulls().unique().to_list() if "attribution" in df.columns else []
        self.broke = widgets.Dropdown(
            description="broke at",
            options=_options([c for c in CAUSES if c in causes]),
            disabled=not causes,  # a run not attributed (memeval attribute) has nothing to filter
        )
        self.search = widgets.Text(
            description="search", placeholder="text in question, gold, answer, memories", continuous_update=False
        )
        self.jump = widgets.Text(description="go to id", placeholder="question id, e.g. Q0042", continuous_update=False)
        self.previous = widgets.Button(description="◀ previous")
        self.next = widgets.Button(description="next ▶")
        self.position = widgets.Label()
        self.view = widgets.HTML()
        self.index = 0
        self.matches: list[dict] = []
        for f in (self.system, self.tier, self.axis, self.verdict, self.flips, self.broke, self.search):
            f.observe(self._on_filter, names="value")
        self.jump.observe(lambda change: self.go_to(change["new"]), names="value")
        self.previous.on_click(lambda _: self.step(-1))
        self.next.on_click(lambda _: self.step(1))
        super().__init__(
            [
                widgets.HBox([self.system, self.tier]),
                widgets.HBox([self.axis, self.verdict]),
                widgets.HBox([self.flips, self.search]),
                widgets.HBox([self.broke, self.jump]),
                widgets.HBox([self.previous, self.position, self.next]),
                self.view,
            ]
        )
        self._refilter()

    def _keep(self, r: dict) -> bool:
        verdict = r.get("verdict") or _UNGRADED
        return all(
            (
                self.system.value in (ALL, r["system"]),
                self.tier.value in (ALL, r["tier"]),
                self.axis.value in (ALL, r["axis"]),
                self.verdict.value in (ALL, verdict),
                self.flips.value == ALL or r.get(FLIPS[self.flips.value]),
                self.broke.value in (ALL, r.get("attribution")),
                self.search.value.strip().casefold() in r["_haystack_text"],
            )
        )

    def _on_filter(self, _change) -> None:
        self._refilter()

    def _refilter(self) -> None:
        self.matches = [r for r in self._rows if self._keep(r)]
        self.index = 0
        self._show()

    def step(self, delta: int) -> None:
        """Move by ``delta`` within the filtered records, staying inside the list."""
        if self.matches:
            self.index = max(0, min(len(self.matches) - 1, self.index + delta))
        self._show()

    def go_to(self, qid: str) -> bool:
        """Show the first filtered record of question ``qid`` (case-insensitive); False if none."""
        want = qid.strip().casefold()
        for i, r in enumerate(self.matches):
            if str(r["qid"]).casefold() == want:
                self.index = i
                self._show()
                return True
        return False

    @property
    def current(self) -> dict | None:
        return self.matches[self.index] if self.matches else None

    def _show(self) -> None:
        n = len(self.matches)
        self.position.value = f"{self.index + 1} / {n}" if n else "0 / 0"
        self.previous.disabled = self.index <= 0
        self.next.disabled = self.index >= n - 1
        self.view.value = (
            render_trace_html(self.current, self._evidence_text)
            if n and self.current is not None
            else "<p><em>no record matches these filters</em></p>"
        )
