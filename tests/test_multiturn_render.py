"""The drill-down renderers are pure: tested directly on a record, HTML-escaped, bad turn marked."""

import re

from memeval.multiturn.agents import DropsConstraint
from memeval.multiturn.runner import run_sample
from memeval.multiturn.records import result_record
from memeval.analysis.multiturn_render import failed_records, render_sample, render_turns
from memeval.analysis.tables import rows_table
from memeval.multiturn.toolsets import fixture_tools
from memeval.multiturn.suite import generate_suite

PAYLOAD = "<script>window.__pwned=1</script>"


def _failed_record():
    suite = generate_suite(seed=20261018, sessions=24, cross_session=0)
    for s in suite.samples:
        if any(e.key == "tax_mode" for e in s.state_expect):
            r = run_sample(s, DropsConstraint(after=2), fixture_tools(suite))
            if r.verdict == "fail":
                return result_record(r)
    raise AssertionError("no failing sample")


def test_turn_table_marks_the_breaking_turn_with_expected_actual_and_tool_returns():
    rec = _failed_record()
    bad = rec["bad_turn"]
    html = render_turns(rec)
    rows = re.findall(r"<tr( class=\"bad-turn\")?><td>(\d+)</td>", html)
    assert [int(t) for cls, t in rows if cls] == [bad]
    assert [int(t) for _, t in rows] == rec["turn_index"]
    bad_row = html.split('<tr class="bad-turn">', 1)[1].split("</tr>", 1)[0]
    # expected vs actual for the broken key, the actual value flagged
    assert 'tax_mode: persist inclusive / <span class="mismatch">exclusive</span>' in bad_row
    # before its from_turn a key is shown (greyed) but not asserted
    tm = next(c for c in rec["runs"][0]["state_checks"] if c["key"] == "tax_mode")
    first = rec["turn_index"][0]
    assert first < tm["from_turn"]
    first_row = re.search(rf"<tr><td>{first}</td>(.*?)</tr>", html).group(1)
    assert '<div class="pre">tax_mode: exclusive</div>' in first_row and "tax_mode: persist" not in first_row
    # each turn's row carries that turn's tool returns (and no other turn's)
    row_of = {
        int(m.group(2)): m.group(3) for m in re.finditer(r"<tr( class=\"bad-turn\")?><td>(\d+)</td>(.*?)</tr>", html)
    }
    with_returns = [t for t in rec["runs"][0]["trace"] if t["tool_returns"]]
    assert with_returns
    for t in rec["runs"][0]["trace"]:
        for key in t["tool_returns"]:
            assert f"<b>{key}</b>" in row_of[t["turn"]]
            assert all(f"<b>{key}</b>" not in row for turn, row in row_of.items() if turn != t["turn"])


def test_everything_is_escaped():
    rec = _failed_record()
    rec["sample_id"] = PAYLOAD
    rec["runs"][0]["trace"][0]["text"] = PAYLOAD
    rec["runs"][0]["trace"][0]["user_text"] = PAYLOAD
    out = render_sample(rec, 0) + rows_table([{"a": PAYLOAD}], ["a"])
    assert "<script>" not in out and "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in out


def test_failed_records_filter():
    recs = [{"verdict": "pass"}, {"verdict": "fail"}, {"verdict": "env_drift"}, {"verdict": "flaky"}]
    assert [r["verdict"] for r in failed_records(recs)] == ["fail", "env_drift"]


def test_rows_table_takes_mixed_rows_in_column_order():
    rows = [{"agent": "a", "rate": 2 / 3, "n": 3}, {"agent": "<b>", "n": "", "extra": "not shown"}]
    out = rows_table(rows, ["n", "agent", "rate"], caption="x")
    cells = [c.split("</td>")[0] for c in out.split("<td>")[1:]]
    assert cells == ["3", "a", "0.667", "", "&lt;b&gt;", "–"]  # a missing key is null, "" stays blank
    assert "not shown" not in out and 'class="memeval-table"' in out
