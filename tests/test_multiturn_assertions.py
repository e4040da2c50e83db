"""check_state: eq / one_of / persist / absent, bad_turn semantics, undetermined, unknown modes."""

import pytest

from memeval.multiturn.assertions import Snapshot, UnknownModeError, check_state
from memeval.multiturn.sample import StateExpect


def trace(turns, key, values):
    return [Snapshot(t, {} if v is ... else {key: v}) for t, v in zip(turns, values)]


def one(tr, *expect):
    (c,) = check_state(tr, [StateExpect(*expect)])
    return c


def test_eq_judges_last_turn_and_bad_turn_is_last_wrong_turn():
    tr = trace([3, 4, 5, 6, 9], "currency", ["CNY", "CNY", "USD", "CNY", "USD"])
    c = one(tr, "currency", "eq", "USD", 3)
    assert (c.status, c.bad_turn) == ("pass", 6)
    c = one(trace([3, 4, 5], "currency", ["USD", "CNY", "CNY"]), "currency", "eq", "USD", 3)
    assert (c.status, c.bad_turn, c.got_last) == ("fail", 5, "CNY")


def test_eq_ignores_turns_before_from_turn():
    # the value before the correction turn was right at the time: not a bad turn
    c = one(trace([0, 1, 2], "currency", ["CNY", "USD", "USD"]), "currency", "eq", "USD", 1)
    assert (c.status, c.bad_turn) == ("pass", None)


def test_one_of():
    tr = trace([0, 1], "group_by", ["month", "region"])
    assert one(tr, "group_by", "one_of", ["region", "customer"], 0).status == "pass"
    c = one(trace([0, 1], "group_by", ["region", "month"]), "group_by", "one_of", ["region", "customer"], 0)
    assert (c.status, c.bad_turn) == ("fail", 1)


def test_persist_bad_turn_is_the_first_break_even_when_the_end_is_right():
    # the constraint is lost at turn 5 and remembered at 8: eq would pass, persist points at 5
    tr = trace([3, 4, 5, 6, 8], "tax_mode", ["excl", "incl", "excl", "excl", "incl"])
    assert one(tr, "tax_mode", "eq", "incl", 4).status == "pass"
    c = one(tr, "tax_mode", "persist", "incl", 4)
    assert (c.status, c.bad_turn) == ("fail", 5)


def test_absent_bad_turn_is_first_appearance_from_from_turn():
    tr = trace([1, 2, 6, 7, 9], "extra_tax_line", [True, False, False, True, True])
    c = one(tr, "extra_tax_line", "absent", True, 6)
    assert (c.status, c.bad_turn) == ("fail", 7)
    assert one(tr[:3], "extra_tax_line", "absent", True, 6).status == "pass"


def test_missing_key_is_undetermined_never_a_pass_of_absent():
    tr = trace([6, 7], "extra_tax_line", [False, ...])
    c = one(tr, "extra_tax_line", "absent", True, 6)
    assert (c.status, c.missing_turns) == ("undetermined", (7,))
    assert one(trace([4, 5], "tax", ["incl", ...]), "tax", "persist", "incl", 4).status == "undetermined"
    assert one(trace([4, 5], "cur", ["USD", ...]), "cur", "eq", "USD", 4).status == "undetermined"
    # a definite break is a failure whatever else is missing
    c = one(trace([4, 5, 6], "tax", [..., "excl", ...]), "tax", "persist", "incl", 4)
    assert (c.status, c.bad_turn) == ("fail", 5)
    # nothing observed from from_turn on: undetermined
    assert one(trace([1, 2], "tax", ["incl", "incl"]), "tax", "persist", "incl", 5).status == "undetermined"


def test_unknown_mode_is_an_error_naming_it():
    with pytest.raises(UnknownModeError, match="'approx'"):
        check_state([Snapshot(0, {"k": 1})], [{"key": "k", "mode": "approx", "value": 1}])


def test_dict_trace_and_expect_forms():
    out = check_state([{"turn": 2, "state": {"k": 1}}], [{"key": "k", "mode": "eq", "value": 1, "from_turn": 2}])
    assert out[0].status == "pass"


def test_docstring_examples():
    import doctest

    import memeval.multiturn.assertions as check_mod
    import memeval.multiturn.split as split_mod

    for mod in (check_mod, split_mod):
        res = doctest.testmod(mod)
        assert res.attempted > 0 and res.failed == 0
