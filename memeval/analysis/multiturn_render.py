"""Pure HTML renderers for the multi-turn bad_turn drill-down (used by the widget and the static
report).

Every value from a record is HTML-escaped; the breaking turn carries ``class="bad-turn"``. Plain
tables of rows go through :func:`memeval.analysis.tables.rows_table` (the one table renderer); the
turn and check tables here carry per-cell markup (the breaking turn, mismatches, tool returns).
"""

from __future__ import annotations

import html
import json
from typing import Any, Iterable, Mapping


__all__ = ["failed_records", "render_turns", "render_checks", "render_sample", "STYLE", "NON_PASS"]

STYLE = (
    "<style>.mt table{border-collapse:collapse;font:13px sans-serif}.mt td,.mt th{border:1px solid #ccc;"
    "padding:3px 6px;vertical-align:top;text-align:left}.mt .pre{color:#888}.mt tr.bad-turn{background:#fde2e2}.mt tr.context{color:#888}.mt .mismatch{color:#b00;"
    "font-weight:bold}.mt pre{margin:0;white-space:pre-wrap;max-width:28em}</style>"
)

NON_PASS = ("fail", "env_drift", "flaky", "undetermined", "incomplete")


def _text(x: Any) -> str:
    return x if isinstance(x, str) else json.dumps(x, ensure_ascii=False)


def _e(x: Any) -> str:
    return html.escape(_text(x))


def failed_records(records: Iterable[Mapping], verdicts: Iterable[str] = ("fail", "env_drift")) -> list[Mapping]:
    """The sample records whose verdict is one of ``verdicts`` (by default the failures to read first)."""
    want = set(verdicts)
    return [r for r in records if r.get("verdict") in want]


def _run(record: Mapping, run: int | None) -> Mapping:
    runs = record.get("runs") or [{}]
    if run is None:  # the first run whose verdict is the sample's, else the first
        run = next((i for i, r in enumerate(runs) if r.get("verdict") == record.get("verdict")), 0)
    return runs[min(run, len(runs) - 1)]


def render_checks(record: Mapping, run: int | None = None) -> str:
    r = _run(record, run)
    rows = "".join(
        f"<tr><td>{_e(c['key'])}</td><td>{_e(c['mode'])}</td><td>{_e(c['status'])}</td><td>{_e(c['want'])}</td>"
        f"<td>{_e(c['got_last'])}</td><td>{_e(c['bad_turn'])}</td></tr>"
        for c in r.get("state_checks", [])
    )
    rows += "".join(
        f"<tr><td>{_e(c['name'])}</td><td>rule</td><td>{_e(c['status'])}</td>"
        f"<td colspan=3>{_e(c.get('detail', ''))}</td></tr>"
        for c in r.get("final_checks", [])
    )
    return (
        "<table><tr><th>key</th><th>mode</th><th>status</th><th>expected</th><th>last value</th>"
        f"<th>bad_turn</th></tr>{rows}</table>"
    )


def render_turns(record: Mapping, run: int | None = None) -> str:
    """One row per turn: user text, reply, expected vs actual per asserted key, the tool returns."""
    r = _run(record, run)
    bad = record.get("bad_turn") if record.get("bad_turn") is not None else r.get("bad_turn")
    checks = r.get("state_checks", [])
    head = (
        "<tr><th>turn</th><th>user</th><th>assistant</th><th>state (expected / actual)</th><th>tool returns</th></tr>"
    )
    rows = []
    for t in r.get("trace", []):
        state = t.get("state") or {}
        cells = []
        for c in checks:
            got = state.get(c["key"], "(missing)")
            if t["turn"] < c.get("from_turn", 0):  # not asserted yet: the value only
                cells.append(f'<div class="pre">{_e(c["key"])}: {_e(got)}</div>')
                continue
            flagged = got == "(missing)" or c.get("bad_turn") == t["turn"]
            cls = ' class="mismatch"' if flagged else ""
            cells.append(f"<div>{_e(c['key'])}: {_e(c['mode'])} {_e(c['want'])} / <span{cls}>{_e(got)}</span></div>")
        rets = "".join(
            f"<div><b>{_e(k)}</b> <pre>{_e(v)}</pre></div>" for k, v in (t.get("tool_returns") or {}).items()
        )
        calls = "".join(
            f"<div>{_e(c['key'])} {_e(c['name'])}({_e(c['args'])})</div>" for c in t.get("tool_calls") or []
        )
        ctx = record.get("graded_from") is not None and t["turn"] < record["graded_from"]
        cls = ' class="bad-turn"' if bad is not None and t["turn"] == bad else ' class="context"' if ctx else ""
        rows.append(
            f"<tr{cls}><td>{_e(t['turn'])}</td><td>{_e(t.get('user_text', ''))}</td>"
            f"<td>{_e(t.get('text', ''))}</td><td>{''.join(cells)}</td><td>{calls}{rets}</td></tr>"
        )
    return f"<table>{head}{''.join(rows)}</table>"


def render_sample(record: Mapping, run: int | None = None) -> str:
    """Header (verdict, reason, bad_turn, grader version), the checks and the turn table."""
    head = (
        f"<h4>{_e(record.get('sample_id'))} — {_e(record.get('agent'))}: {_e(record.get('verdict'))}</h4>"
        f"<p>reason: {_e(record.get('reason'))}; bad_turn: {_e(record.get('bad_turn'))}; "
        f"grader_version: {_e(record.get('grader_version'))}; process score: {_e(record.get('process_score'))}"
        + (
            f"; graded from turn {_e(record['graded_from'])} (earlier turns are context)"
            if record.get("graded_from") is not None
            else ""
        )
        + "</p>"
    )
    return f'<div class="mt">{STYLE}{head}{render_checks(record, run)}{render_turns(record, run)}</div>'
