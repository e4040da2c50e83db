"""The bad_turn drill-down widget (live sessions only; the report uses :mod:`.multiturn_render` directly)."""

from __future__ import annotations

from typing import Mapping, Sequence

import ipywidgets as w

from .multiturn_render import NON_PASS, render_sample

__all__ = ["drilldown"]


def drilldown(records: Sequence[Mapping], verdicts=NON_PASS):
    """Pick a non-passing sample; see its turns, state trace, breaking turn and that turn's tool returns."""
    picks = [r for r in records if r.get("verdict") in set(verdicts)]
    options = [
        (f"{r['agent']} | {r['sample_id']} | {r['verdict']} | bad_turn={r.get('bad_turn')}", i)
        for i, r in enumerate(picks)
    ]
    dd = w.Dropdown(
        options=options or [("(no failed samples)", -1)], description="sample", layout=w.Layout(width="80%")
    )
    run = w.BoundedIntText(value=0, min=0, max=2, description="run")
    out = w.HTML()

    def show(*_):
        i = dd.value
        out.value = render_sample(picks[i], run.value) if i is not None and i >= 0 else "<p>nothing to show</p>"

    dd.observe(show, names="value")
    run.observe(show, names="value")
    show()
    return w.VBox([w.HBox([dd, run]), out])
