from memeval.llm import ChatClient, ChatError, parse_json_object
from memeval.testing.chat_stub import ScriptedChatServer

import pytest


def test_chat_round_trip_key_only_in_header(monkeypatch):
    monkeypatch.setenv("MEMEVAL_TEST_KEY", "sk-secret-123")
    with ScriptedChatServer(lambda body: "echo:" + body["messages"][-1]["content"]) as srv:
        with ChatClient(srv.base_url, "m1", api_key_env="MEMEVAL_TEST_KEY") as c:
            r = c.chat([{"role": "user", "content": "hi"}])
            assert r.text == "echo:hi"
            assert "sk-secret-123" not in str(c.identity())
    assert srv.requests[0]["temperature"] == 0.0 and srv.requests[0]["model"] == "m1"
    assert srv.headers[0]["authorization"] == "Bearer sk-secret-123"
    assert "sk-secret-123" not in str(srv.requests[0])


def test_retries_then_gives_up():
    calls = []

    def flaky(body):
        calls.append(1)
        return 503 if len(calls) < 3 else "ok"

    with ScriptedChatServer(flaky) as srv:
        assert ChatClient(srv.base_url, "m", backoff=0.01).chat([]).text == "ok"
    with ScriptedChatServer(lambda b: 500) as srv:
        with pytest.raises(ChatError, match="gave up after 2 attempts"):
            ChatClient(srv.base_url, "m", backoff=0.01, max_attempts=2).chat([])


def test_parse_json_object_from_prose():
    assert parse_json_object('Sure! ```json\n{"a": {"b": 1}}\n``` done') == {"a": {"b": 1}}
    assert parse_json_object("no json") is None
