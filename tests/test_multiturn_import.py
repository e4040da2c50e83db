"""`memeval multiturn import`: OpenAI-messages transcripts become samples with recorded fixtures that
replay with no missing fixture; bad input is one line naming file, line and field, nothing written."""

import json

import pytest

from memeval.cli import main
from memeval.errors import InputError
from memeval.multiturn.agents import AgentStep
from memeval.multiturn.runner import run_sample
from memeval.multiturn.config import DEFAULT_CONFIG
from memeval.multiturn.toolsets import fixture_tools
from memeval.multiturn.suite import load_suite
from memeval.multiturn.tools import ToolCall
from multiturn_cli import chat_run_argv


def call(cid, name, args):
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


TRIP = {
    "id": "trip-1",
    "messages": [
        {"role": "system", "content": "You book trains."},
        {"role": "user", "content": "Find me a train from Basel to Milan on Friday."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                call("a", "search_trains", {"from": "Basel", "to": "Milan"}),
                call("b", "get_weather", {"city": "Milan"}),
            ],
        },
        {"role": "tool", "tool_call_id": "a", "content": json.dumps({"trains": ["EC 51 07:33", "EC 53 09:33"]})},
        {"role": "tool", "tool_call_id": "b", "content": "sunny"},
        {"role": "assistant", "content": "", "tool_calls": [call("c", "get_price", {"train": "EC 51"})]},
        {"role": "tool", "tool_call_id": "c", "content": json.dumps({"price": 59.0, "currency": "CHF"})},
        {"role": "assistant", "content": "EC 51 at 07:33 costs 59 CHF. Book it?"},
        {"role": "user", "content": "Yes, book it."},
        {"role": "assistant", "tool_calls": [call("d", "book", {"train": "EC 51"})]},
        {"role": "tool", "tool_call_id": "d", "content": json.dumps({"booking": "B-77"})},
        {"role": "assistant", "content": [{"type": "text", "text": "Booked: B-77."}]},
    ],
}
CHAT = {"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}]}


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_import_writes_samples_that_replay_with_no_missing_fixture(tmp_path, capsys):
    src = write(tmp_path / "t.jsonl", [TRIP, CHAT])
    out = tmp_path / "suite"
    assert main(["multiturn", "import", str(src), "-o", str(out)]) == 0
    assert "every sample replays with no missing fixture" in capsys.readouterr().out
    suite = load_suite(out)
    trip, chat = suite.samples
    assert (trip.sample_id, trip.turn_index, chat.sample_id) == ("trip-1#g1", (0, 1), "tx_0002#g1")
    assert trip.user_text == {0: "Find me a train from Basel to Milan on Friday.", 1: "Yes, book it."}
    fx = suite.fixtures[trip.replay.tool_fixture].calls
    # call indices count every call of the turn, across steps
    assert {k: (c.tool, c.result) for k, c in fx.items()} == {
        "0:0": ("search_trains", {"trains": ["EC 51 07:33", "EC 53 09:33"]}),
        "0:1": ("get_weather", "sunny"),
        "0:2": ("get_price", {"price": 59.0, "currency": "CHF"}),
        "1:0": ("book", {"booking": "B-77"}),
    }
    cfg = suite.configs[trip.replay.config_snapshot]
    assert cfg["system_prompt"] == "You book trains." and set(cfg["tools"]) == {
        "search_trains",
        "get_weather",
        "get_price",
        "book",
    }
    assert trip.process.tools == {0: ("search_trains", "get_weather", "get_price"), 1: ("book",)}
    labs = [l for l in suite.labels if l["session_id"] == "trip-1"]
    assert [l["text"] for l in labs] == ["EC 51 at 07:33 costs 59 CHF. Book it?", "Booked: B-77."]
    assert all(l["state"] is None for l in labs)


def test_imported_sample_judges_a_new_agent_once_labelled(tmp_path):
    src = write(tmp_path / "t.jsonl", [TRIP])
    out = tmp_path / "suite"
    assert main(["multiturn", "import", str(src), "-o", str(out)]) == 0
    suite = load_suite(out)

    class Booker:  # a different agent: same lookups, but it states its own state
        name = "booker"

        def gen(self, messages, seed, turn, step):
            if turn == 0 and step == 0:
                return AgentStep(tool_calls=(ToolCall("search_trains", {"from": "Basel", "to": "Milan"}),))
            if turn == 1 and step == 0:
                return AgentStep(tool_calls=(ToolCall("book", {"train": "EC 51"}),))
            booked = turn == 1
            return AgentStep("ok", state={"train": "EC 51", "booked": booked})

    s = suite.samples[0]
    r = run_sample(s, Booker(), fixture_tools(suite), DEFAULT_CONFIG.with_(runs=1))
    assert r.verdict == "undetermined" and "no assertions" in r.reason  # labels not filled in yet
    # filled in by hand: the booking must be made by the end
    d = json.loads((out / "samples.jsonl").read_text().splitlines()[0])
    d["state_expect"] = [{"key": "booked", "mode": "eq", "value": True, "from_turn": 1}]
    (out / "samples.jsonl").write_text(json.dumps(d) + "\n")
    suite = load_suite(out)
    assert run_sample(suite.samples[0], Booker(), fixture_tools(suite), DEFAULT_CONFIG.with_(runs=1)).verdict == "pass"

    class Hallucinates(Booker):
        def gen(self, messages, seed, turn, step):
            if turn == 0 and step == 0:
                return AgentStep(tool_calls=(ToolCall("search_flights", {"from": "Basel"}),))
            return super().gen(messages, seed, turn, step)

    r = run_sample(suite.samples[0], Hallucinates(), fixture_tools(suite), DEFAULT_CONFIG.with_(runs=1))
    assert r.verdict == "fail" and "unknown tool 'search_flights'" in r.reason


@pytest.mark.parametrize(
    "bad, field",
    [
        (
            {
                "id": "x",
                "messages": [
                    {"role": "user", "content": "a"},
                    {"role": "assistant", "tool_calls": [call("a", "f", {})]},
                ],
            },
            "tool call a has no tool result",
        ),
        (
            {
                "id": "x",
                "messages": [
                    {"role": "user", "content": "a"},
                    {"role": "assistant", "tool_calls": [{"id": "a", "function": {"name": "f", "arguments": "{oops"}}]},
                ],
            },
            "field 'messages[1].tool_calls[0].function.arguments'",
        ),
        ({"id": "../escape", "messages": CHAT["messages"]}, "field 'id'"),
        ({"id": "x", "messages": [{"role": "assistant", "content": "hi"}]}, "before the first user turn"),
        (
            {
                "id": "x",
                "messages": [{"role": "user", "content": "a"}, {"role": "tool", "tool_call_id": "zz", "content": "1"}],
            },
            "field 'messages[1].tool_call_id'",
        ),
    ],
)
def test_bad_transcripts_name_line_and_field_and_write_nothing(tmp_path, capsys, bad, field):
    src = write(tmp_path / "t.jsonl", [CHAT, bad])
    out = tmp_path / "suite"
    assert main(["multiturn", "import", str(src), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "t.jsonl:2" in err and field in err
    assert not out.exists()


def test_own_tools_plug_in_for_live_runs_and_drift(tmp_path, monkeypatch, capsys):
    """A transcript imported, then re-run against the user's own live tools (a Python entry point):
    same returns -> pass; a changed return and a failing check -> env_drift, not a regression."""
    src = write(tmp_path / "t.jsonl", [TRIP])
    out = tmp_path / "suite"
    assert main(["multiturn", "import", str(src), "-o", str(out)]) == 0
    d = json.loads((out / "samples.jsonl").read_text().splitlines()[0])
    d["final_expect"] = {"answer_must_contain": ["B-77"]}
    (out / "samples.jsonl").write_text(json.dumps(d) + "\n")
    pkg = tmp_path / "mytools"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "import json\n"
        "BOOKING = {'booking': 'B-77'}\n"
        "CALLS = []\n"
        "def run(name, args):\n"
        "    CALLS.append(name)\n"
        "    return {'search_trains': {'trains': ['EC 51 07:33', 'EC 53 09:33']}, 'get_weather': 'sunny',\n"
        "            'get_price': {'price': 59.0, 'currency': 'CHF'}, 'book': BOOKING}[name]\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    suite = load_suite(out)
    from memeval.multiturn.toolsets import live_tools, load_tool_runner
    from memeval.multiturn.transcripts import TranscriptAgent
    import mytools

    class Reader(TranscriptAgent):
        """Plays the recorded calls back but writes the booking id it was given."""

        def gen(self, messages, seed, turn, step):
            out = super().gen(messages, seed, turn, step)
            if out.tool_calls or turn == 0:
                return out
            got = json.loads(messages[-1]["content"])
            return AgentStep(f"Booked: {got['booking']}.")

    def verdict():
        agent = Reader(suite.sessions)
        return run_sample(
            suite.samples[0],
            agent,
            live_tools(suite, call=load_tool_runner("mytools:run")),
            DEFAULT_CONFIG.with_(runs=1),
        )

    assert verdict().verdict == "pass" and mytools.CALLS == ["search_trains", "get_weather", "get_price", "book"]
    mytools.BOOKING["booking"] = "B-78"  # the live system changed under the recording
    r = verdict()
    assert r.verdict == "env_drift" and "1:0" in r.reason
    with pytest.raises(InputError, match="--tool-runner"):
        load_tool_runner("mytools")


def test_a_chat_agent_is_offered_the_imported_suites_tools(tmp_path, capsys):
    from memeval.testing.chat_stub import ScriptedChatServer

    src = write(tmp_path / "t.jsonl", [TRIP])
    out = tmp_path / "suite"
    assert main(["multiturn", "import", str(src), "-o", str(out)]) == 0
    with ScriptedChatServer(lambda body: "Sure.") as srv:
        assert main(chat_run_argv(str(out), str(tmp_path / "r.jsonl"), srv.base_url, "MT_NONE")) == 0
    offered = {t["function"]["name"] for t in srv.requests[0]["tools"]}
    assert offered == {"search_trains", "get_weather", "get_price", "book", "report_state"}
    assert "undetermined=1" in capsys.readouterr().out
