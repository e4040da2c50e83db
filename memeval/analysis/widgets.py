"""Per-question trace browser (ipywidgets) and its static HTML fallbacks.

Rendering is pure: ``render_trace_html(row)`` and ``worst_questions_table(df, n)`` turn records
into HTML strings, every piece of bench or system text passed through ``html.escape``. The
widget only wires filters and buttons to those functions; in a static HTML report (where widget
callbacks do not run) use the tables instead.
"""

from __future__ import annotations

import html
from typing import Any, Iterable

import ipywidgets as widgets
import polars as pl

__all__ = ["ALL", "render_trace_html", "worst_questions_table", "evidence_flags", "TraceBrowser"]

ALL = "(all)"
_UNGRADED = "ungraded"
_EVIDENCE_STYLE = "background:#fff3b0;border-left:4px solid #e0a800;"
_PLAIN_STYLE = "border-left:4px solid #ddd;"


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def _clip(text: Any, limit: int) -> str:
    s = "" if text is None else str(text)
    return s if len(s) <= limit else s[: limit - 1] + "…"


def evidence_flags(row: dict) -> tuple[list[bool], str]:
    """Which returned memories hold evidence, and how that was decided.

    With turn ids (``retrieved_turns`` aligned with ``memories_returned``) a memory is evidence
    when its id is in ``evidence_turns``; without ids, when it contains the gold answer text.
    """
    memories = list(row.get("memories_returned") or [])
    ids = row.get("retrieved_turns")
    evidence = set(row.get("evidence_turns") or [])
    if ids is not None and len(ids) == len(memories):
        return [i in evidence for i in ids], "turn id in evidence_turns"
    gold = (row.get("gold_answer") or "").strip().casefold()
    return [bool(gold) and gold in (m or "").casefold() for m in memories], "contains the gold answer (no turn ids)"


def render_trace_html(row: dict) -> str:
    """One record as an HTML fragment: question as asked, gold, answer, memories (evidence marked),
    score, verdict, retrieval and latency. All text is escaped."""
    memories = list(row.get("memories_returned") or [])
    ids = row.get("retrieved_turns")
    flags, rule = evidence_flags(row)
    items = []
    for k, (mem, is_ev) in enumerate(zip(memories, flags)):
        tid = f"turn {_e(ids[k])}: " if ids is not None and len(ids) == len(memories) else ""
        badge = ' <b style="color:#a66b00">[evidence]</b>' if is_ev else ""
        style = _EVIDENCE_STYLE if is_ev else _PLAIN_STYLE
        items.append(f'<li class="memory{" evidence" if is_ev else ""}" style="{style}padding:2px 6px;'
                     f'margin:2px 0;white-space:pre-wrap">{tid}{_e(mem)}{badge}</li>')
    mem_html = f"<ol>{''.join(items)}</ol>" if items else "<p><em>no memories returned</em></p>"
    score = row.get("score")
    score_txt = "ungraded" if score is None else f"{score:g}"
    verdict = row.get("verdict") or _UNGRADED
    err = row.get("error")
    why = row.get("ungraded_reason")
    latency = row.get("latency_ms")
    lmr = row.get("latency_minus_rtt_ms")
    fields = [
        ("question as asked", f"{_e(row.get('question_asked'))} <small>({_e(row.get('query_lang') or 'en')})</small>"),
        ("gold answer", _e(row.get("gold_answer"))),
        ("answer", _e(row.get("answer"))),
        ("score", f"{_e(score_txt)} — verdict <b>{_e(verdict)}</b> <small>(grader {_e(row.get('grader'))})</small>"
                  + (f"<br><small>ungraded: {_e(why)}</small>" if why else "")),
        ("retrieval", f"hit: {_e(row.get('retrieval_hit'))}; evidence turns: "
                      f"{_e(', '.join(str(t) for t in row.get('evidence_turns') or []) or 'none')}; "
                      f"chars returned: {_e(row.get('chars_returned'))}"),
        ("latency", f"{_e('-' if latency is None else f'{latency:.1f}')} ms total, "
                    f"{_e('-' if lmr is None else f'{lmr:.1f}')} ms minus round trip "
                    f"<small>({_e(row.get('speed_status'))})</small>"),
    ]
    if err:
        fields.append(("error", f'<span style="color:#b00">{_e(err)}</span>'))
    body = "".join(f'<tr><th style="text-align:left;vertical-align:top;padding-right:1em">{k}</th>'
                   f'<td style="text-align:left">{v}</td></tr>' for k, v in fields)
    head = (f"{_e(row.get('qid'))} · {_e(row.get('system'))} · tier {_e(row.get('tier'))} · "
            f"{_e(row.get('axis'))} (weight {_e(row.get('weight'))}) · epoch {_e(row.get('epoch'))}")
    return (f'<div class="trace"><h4 style="margin:4px 0">{head}</h4><table>{body}</table>'
            f"<div><b>memories returned</b> ({len(memories)}; evidence marked when {_e(rule)})</div>"
            f"{mem_html}</div>")


_WORST_COLUMNS = ("system", "tier", "qid", "axis", "weight", "score", "verdict", "question_asked", "gold_answer",
                  "answer", "retrieval_hit", "top memory")


def worst_questions_table(df: pl.DataFrame, n: int = 20, text_limit: int = 240) -> str:
    """The ``n`` lowest-scoring graded records as a static HTML table (escaped, long text clipped).

    Order: score ascending, then heavier axes first, then larger tiers first. Ungraded records and
    errors are not "worst"; they are counted in the caption.
    """
    graded = df.filter(pl.col("score").is_not_null())
    n_ungraded = df.height - graded.height
    worst = graded.sort(["score", "weight", "tier_index", "system", "qid"],
                        descending=[False, True, True, False, False]).head(n)
    head = "".join(f"<th>{_e(c)}</th>" for c in _WORST_COLUMNS)
    rows = []
    for r in worst.to_dicts():
        mems = r.get("memories_returned") or []
        cells = {**r, "top memory": mems[0] if mems else "", "score": f"{r['score']:g}"}
        rows.append("<tr>" + "".join(f'<td style="vertical-align:top;text-align:left">{_e(_clip(cells.get(c), text_limit))}</td>'
                                     for c in _WORST_COLUMNS) + "</tr>")
    caption = (f"{len(rows)} lowest-scoring of {graded.height} graded records"
               f" ({n_ungraded} ungraded or errored, not ranked)")
    return (f'<table class="worst-questions"><caption>{_e(caption)}</caption><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>")


def _options(values: Iterable) -> list[str]:
    return [ALL] + [str(v) for v in values]


class TraceBrowser(widgets.VBox):
    """Browse records one at a time, filtered by system, tier, axis and verdict; next/previous."""

    def __init__(self, df: pl.DataFrame):
        self._rows = df.sort(["system", "tier_index", "qid", "epoch"]).to_dicts()
        tiers = df.select("tier", "tier_index").unique().sort("tier_index")["tier"].to_list()
        self.system = widgets.Dropdown(description="system", options=_options(df["system"].unique(maintain_order=True)))
        self.tier = widgets.Dropdown(description="tier", options=_options(tiers))
        self.axis = widgets.Dropdown(description="axis", options=_options(sorted(df["axis"].unique().to_list())))
        self.verdict = widgets.Dropdown(description="verdict",
                                        options=_options(["correct", "partial", "wrong", _UNGRADED]))
        self.previous = widgets.Button(description="◀ previous")
        self.next = widgets.Button(description="next ▶")
        self.position = widgets.Label()
        self.view = widgets.HTML()
        self.index = 0
        self.matches: list[dict] = []
        for f in (self.system, self.tier, self.axis, self.verdict):
            f.observe(self._on_filter, names="value")
        self.previous.on_click(lambda _: self.step(-1))
        self.next.on_click(lambda _: self.step(1))
        super().__init__([
            widgets.HBox([self.system, self.tier]), widgets.HBox([self.axis, self.verdict]),
            widgets.HBox([self.previous, self.position, self.next]), self.view,
        ])
        self._refilter()

    def _keep(self, r: dict) -> bool:
        verdict = r.get("verdict") or _UNGRADED
        return all((
            self.system.value in (ALL, r["system"]), self.tier.value in (ALL, r["tier"]),
            self.axis.value in (ALL, r["axis"]), self.verdict.value in (ALL, verdict),
        ))

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

    @property
    def current(self) -> dict | None:
        return self.matches[self.index] if self.matches else None

    def _show(self) -> None:
        n = len(self.matches)
        self.position.value = f"{self.index + 1} / {n}" if n else "0 / 0"
        self.previous.disabled = self.index <= 0
        self.next.disabled = self.index >= n - 1
        self.view.value = render_trace_html(self.current) if n else "<p><em>no record matches these filters</em></p>"
