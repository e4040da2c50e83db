"""Sample schema: round trip, clear InputErrors (file, line, field), split by goal, the CLI on bad input."""

import json

import pytest

from memeval.cli import main
from memeval.errors import InputError
from memeval.multiturn.sample_io import read_samples, sample_from_dict, sample_to_dict
from memeval.multiturn.split import split_session
from multiturn_cli import chat_run_argv

GOOD = {
    "sample_id": "ss_20261021_0417#g2",
    "session_ref": "ss_20261021_0417",
    "unit_type": "task",
    "turn_index": [3, 4, 5, 6, 9],
    "goal": "tax-inclusive quote as a sheet",
    "user_text": {str(t): f"user says {t}" for t in (3, 4, 5, 6, 9)},
    "state_expect": [
        {"key": "currency", "mode": "eq", "value": "CNY", "from_turn": 3},
        {"key": "tax_mode", "mode": "persist", "value": "inclusive", "from_turn": 4},
        {"key": "extra_tax_line", "mode": "absent", "value": True, "from_turn": 6},
    ],
    "final_expect": {
        "artifact_type": "sheet",
        "must_have_columns": ["含税单价", "含税合计"],
        "must_not_have_columns": ["未税单价"],
        "answer_must_contain": ["含税"],
    },
    "replay": {
        "tool_fixture": "fx_20261018_a",
        "config_snapshot": "cfg_7f3c",
        "seed": 20261018,
        "grader_version": "r5",
    },
    "labels": {"turns": 5, "goal_changes": 1, "corrections": 2, "has_artifact": True},
}


def test_round_trip_keeps_turn_index_as_a_list():
    s = sample_from_dict(json.loads(json.dumps(GOOD)))
    assert s.turn_index == (3, 4, 5, 6, 9) and s.state_expect[1].mode == "persist"
    assert s.final_expect.must_not_have_columns == ("未税单价",)
    back = sample_to_dict(s)
    assert back["turn_index"] == [3, 4, 5, 6, 9]
    assert sample_from_dict(back) == s


@pytest.mark.parametrize(
    "patch, field, msg",
    [
        (
            {"state_expect": [{"key": "k", "mode": "approx", "value": 1}]},
            "state_expect[0].mode",
            "unknown mode 'approx'",
        ),
        ({"turn_index": "3-9"}, "turn_index", "list of integers"),
        ({"turn_index": [9, 3]}, "turn_index", "in order"),
        ({"sample_id": "ss_1_7"}, "sample_id", "#g"),
        (
            {"labels": {"turns": 4, "goal_changes": 0, "corrections": 0, "has_artifact": False}},
            "labels.turns",
            "turn_index has 5",
        ),
        ({"user_text": {"3": "x"}}, "user_text.4", "missing user text"),
        (
            {"replay": {"tool_fixture": "fx", "config_snapshot": "c", "seed": "1", "grader_version": "r5"}},
            "replay.seed",
            "expected int",
        ),
        ({"state_expect": [{"key": "k", "mode": "one_of", "value": "a"}]}, "state_expect[0].value", "list"),
    ],
)
def test_bad_fields_name_file_line_and_field(tmp_path, patch, field, msg):
    p = tmp_path / "samples.jsonl"
    p.write_text(
        json.dumps(GOOD) + "\n" + json.dumps({**GOOD, **patch, "sample_id": patch.get("sample_id", "x#g3")}) + "\n"
    )
    with pytest.raises(InputError) as ei:
        read_samples(p)
    text = str(ei.value)
    assert text.startswith(f"{p}:2: field '{field}'") and msg in text and "\n" not in text


def test_duplicate_sample_id_and_bad_json(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_text(json.dumps(GOOD) + "\n" + json.dumps(GOOD) + "\n")
    with pytest.raises(InputError, match=r":2: field 'sample_id': duplicate of line 1"):
        read_samples(p)
    p.write_text("{not json\n")
    with pytest.raises(InputError, match=r":1: not valid JSON"):
        read_samples(p)


def test_split_detour_goal_change_and_replay_test():
    turns = [
        {"goal": 1},
        {"goal": 1},
        {"goal": 2, "needs_context": False},
        {"goal": 1},
        {"goal": 3, "needs_context": True},
        {"goal": 1},
        {"goal": 4, "needs_context": True},
        {"goal": 4},
    ]
    cuts = {c.sample_id: c for c in split_session("ss_9", turns)}
    # detour replayable alone: its own turn sample; the task keeps the turns around it
    assert cuts["ss_9#g2"].unit_type == "turn" and cuts["ss_9#g2"].turn_index == (2,)
    # detour needing context: the replay test wins, it stays in the task
    assert "ss_9#g3" not in cuts
    assert cuts["ss_9#g1"].turn_index == (0, 1, 3, 4, 5)
    # goal change needing context: shares the prefix of the old goal
    assert cuts["ss_9#g4"].turn_index == (0, 1, 3, 4, 5, 6, 7) and cuts["ss_9#g4"].goal_changes == 1
    alone = split_session("ss_8", [{"goal": 1}, {"goal": 2, "needs_context": False}, {"goal": 2}])
    assert [c.turn_index for c in alone] == [(0,), (1, 2)]


def test_cli_bad_sample_file_exits_2_with_one_line(tmp_path, capsys):
    assert (
        main(["multiturn", "generate", "-o", str(tmp_path / "suite"), "--sessions", "3", "--cross-session", "0"]) == 0
    )
    p = tmp_path / "suite" / "samples.jsonl"
    lines = p.read_text().splitlines()
    bad = json.loads(lines[1])
    bad["state_expect"] = [{"key": "k", "mode": "approx", "value": 1}]
    lines[1] = json.dumps(bad)
    p.write_text("\n".join(lines) + "\n")
    out = tmp_path / "r.jsonl"
    capsys.readouterr()
    assert main(["multiturn", "run", str(tmp_path / "suite"), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "samples.jsonl:2: field 'state_expect[0].mode'" in err
    assert not out.exists()


def test_cli_run_writes_versioned_records_and_checks_agents_first(tmp_path, capsys):
    from memeval.multiturn.config import GraderConfig
    from memeval.multiturn.records import read_sample_records

    suite = tmp_path / "suite"
    assert main(["multiturn", "generate", "-o", str(suite), "--sessions", "3", "--cross-session", "1"]) == 0
    bad_out = tmp_path / "never.jsonl"
    assert main(["multiturn", "run", str(suite), "-o", str(bad_out), "--agent", "correct", "--agent", "nobody"]) == 2
    assert not bad_out.exists() and "unknown agent 'nobody'" in capsys.readouterr().err
    out = tmp_path / "r.jsonl"
    assert main(["multiturn", "run", str(suite), "-o", str(out), "--agent", "drops_constraint"]) == 0
    recs = read_sample_records(out)
    n_samples = len((suite / "samples.jsonl").read_text().splitlines())
    assert len(recs) == n_samples
    for r in recs:
        cfg = GraderConfig.from_dict(r["config"])
        assert r["grader_version"] == cfg.grader_version == "r5" and r["config_id"] == cfg.config_id
        assert cfg.blend == {"final": 0.6, "process": 0.3, "guard": 0.1} and cfg.coverage_gate == 0.8
        assert len(r["runs"]) == 3 and r["verdict"] in ("pass", "fail")
    assert main(["multiturn", "summary", str(out)]) == 0
    text = capsys.readouterr().out
    assert "total (weighted)" in text and "1-3" in text and "9+" in text


def test_bad_hand_label_names_its_line(tmp_path):
    from memeval.multiturn.suite import load_suite

    suite = tmp_path / "suite"
    assert main(["multiturn", "generate", "-o", str(suite), "--sessions", "2", "--cross-session", "0"]) == 0
    p = suite / "state_labels.jsonl"
    lines = p.read_text().splitlines()
    lines[2] = json.dumps({**json.loads(lines[2]), "state": "USD"})
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"state_labels.jsonl:3: field 'state': expected an object or null"):
        load_suite(suite)


def test_cli_chat_agent_with_untrusted_extractor_gives_undetermined_records(tmp_path, monkeypatch, capsys):
    from memeval.multiturn.records import read_sample_records
    from memeval.testing.chat_stub import ScriptedChatServer

    monkeypatch.setenv("MT_CLI_KEY", "sk-cli-secret")
    suite = tmp_path / "suite"
    assert main(["multiturn", "generate", "-o", str(suite), "--sessions", "2", "--cross-session", "0"]) == 0
    out = tmp_path / "chat.jsonl"
    with ScriptedChatServer(lambda body: "Quote for Nobody: 0 lines, total 0.00 CNY (excl. tax).") as srv:
        assert main(chat_run_argv(str(suite), str(out), srv.base_url, "MT_CLI_KEY")) == 0
    assert "NOT trusted" in capsys.readouterr().out
    recs = read_sample_records(out)
    assert recs and all(r["agent"] == "chat:m" for r in recs)
    assert all(r["verdict"] == "undetermined" and "extractor" in r["reason"] for r in recs)
    assert "sk-cli-secret" not in out.read_text()
    assert srv.headers[0]["authorization"] == "Bearer sk-cli-secret"
