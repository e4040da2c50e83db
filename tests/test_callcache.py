"""The model-call cache (issue 28, item 4): a request asked once is served from disk, byte for byte;
only complete replies are kept; threads, processes and a killed writer leave it whole; no secret in it."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from memeval.callcache import FILENAME, ModelCache, request_key, resolve_cache
from memeval.cli import main
from memeval.llm import ChatClient, ChatError, metered
from memeval.run import read_manifest, read_records, run_system
from memeval.testing.chat_stub import ScriptedChatServer
from memeval.testing.judge_stubs import judge_responder, reader_responder
from minibench import make_minibench

ROOT = Path(__file__).resolve().parents[1]
GRADED = ("answer", "score", "verdict", "judge_evidence", "ungraded_reason")


def _rows(cache_dir: Path) -> list[tuple[str, bytes]]:
    with sqlite3.connect(cache_dir / FILENAME) as db:
        return [(k, bytes(b)) for k, b in db.execute("SELECT key, body FROM reply ORDER BY created")]


def _counter(prefix: str = "reply"):
    """A responder whose every reply differs (reply 1, reply 2, ...): a served reply shows which call made it."""
    n = iter(range(1, 10**6))
    return lambda body: f"{prefix} {next(n)}"


# --- the regrade: a second one with the same judge asks nothing --------------------------------


@pytest.fixture
def source(tmp_path):
    bench = make_minibench(tmp_path / "bench")
    return bench, run_system(bench, "bm25:k=2", mode="dry", out=tmp_path / "src", progress=False)


def test_a_second_regrade_with_the_same_judge_and_reader_makes_no_model_call(source, tmp_path):
    bench, src = source
    cache = tmp_path / "cache"
    with ScriptedChatServer(judge_responder("strict")) as judge, ScriptedChatServer(reader_responder) as reader:

        def regrade(out: str, *extra: str) -> Path:
            args = ["regrade", str(src), "--mode", "answer", "--out", str(tmp_path / out), *extra]
            args += ["--judge-url", judge.base_url, "--judge-model", "j", "--reader-url", reader.base_url]
            assert main(args + ["--reader-model", "r"]) == 0
            return tmp_path / out

        cold = regrade("cold", "--cache", str(cache))
        asked = len(judge.requests), len(reader.requests)
        sent = sorted(judge.replies + reader.replies)
        assert sorted(body for _, body in _rows(cache)) == sent  # every reply stored byte for byte
        warm = regrade("warm", "--cache", str(cache))
        assert (len(judge.requests), len(reader.requests)) == asked  # not one new call, judge or reader
        fresh = regrade("fresh", "--no-cache")
        assert (len(judge.requests), len(reader.requests)) == (2 * asked[0], 2 * asked[1])
    n = len(read_records(src))
    assert asked == (n, n) and n == 8
    key = lambda r: (r["tier"], r["qid"], r["epoch"])  # noqa: E731
    a, b = ({key(r): r for r in read_records(d)} for d in (cold, warm))
    assert a.keys() == b.keys() and all({f: a[k][f] for f in GRADED} == {f: b[k][f] for f in GRADED} for k in a)
    assert [r["usage"] for r in read_records(cold)] == [r["usage"] for r in read_records(warm)]  # nominal tokens
    m_cold, m_warm = read_manifest(cold)["model_cache"], read_manifest(warm)["model_cache"]
    assert (m_cold["hits"], m_cold["misses"], m_cold["stored"]) == (0, 2 * n, 2 * n)
    assert (m_warm["hits"], m_warm["misses"], m_warm["stored"]) == (2 * n, 0, 0)
    assert m_warm["roles"]["judge"]["hits"] == n and m_warm["roles"]["reader"]["hits"] == n
    assert m_warm["dir"] == str(cache)
    assert "model_cache" not in read_manifest(fresh)


def test_a_run_reports_its_cache_counts_and_a_resumed_run_keeps_them(tmp_path):
    from memeval.scoring.judge import Judge, Reader

    bench = make_minibench(tmp_path / "bench")
    with ScriptedChatServer(judge_responder("strict")) as judge, ScriptedChatServer(reader_responder) as reader:

        def go():
            cache = ModelCache(tmp_path / "cache")  # a new command: counts from zero
            return run_system(
                bench,
                "bm25:k=2",
                tiers=["core"],
                mode="answer",
                judge=Judge(ChatClient(judge.base_url, "j", cache=cache)),
                reader=Reader(ChatClient(reader.base_url, "r", cache=cache)),
                out=tmp_path / "run",
                progress=False,
            )

        m1 = read_manifest(go())["model_cache"]
        m2 = read_manifest(go())["model_cache"]  # resumed: every question done, nothing asked
        assert len(judge.requests) == len(reader.requests) == 4
    assert (m1["hits"], m1["misses"], m1["stored"]) == (0, 8, 8)  # 4 questions: a reader and a judge call each
    assert m2 == m1  # the earlier session's counts kept, this one's (none) added


# --- byte-identical hits, and what is never stored ----------------------------------------------


def test_a_hit_returns_the_bytes_the_endpoint_sent_and_sends_nothing(tmp_path):
    with ScriptedChatServer(_counter()) as srv:
        cache = ModelCache(tmp_path / "c")
        ask = [{"role": "user", "content": "hello"}]
        first = ChatClient(srv.base_url, "m", cache=cache).chat(ask)
        with metered() as calls:
            again = ChatClient(srv.base_url, "m", cache=cache).chat(ask)  # a new client: a new command
        assert len(srv.requests) == 1 and len(srv.replies) == 1
    assert (first.text, first.cached, again.text, again.cached) == ("reply 1", False, "reply 1", True)
    assert _rows(tmp_path / "c")[0][1] == srv.replies[0]  # stored byte for byte
    assert again.raw == json.loads(srv.replies[0]) == first.raw
    assert calls[0].cached and (calls[0].prompt_tokens, calls[0].completion_tokens) == (1, 2)  # nominal usage


def test_the_key_covers_the_whole_request():
    base = {"model": "m", "messages": [{"role": "user", "content": "q"}], "temperature": 0.0, "max_tokens": 256}
    k = request_key("chat", "http://h/v1/chat/completions", base)
    changed = [
        request_key("chat", "http://h/v1/chat/completions", base | {"model": "m2"}),
        request_key("chat", "http://h/v1/chat/completions", base | {"temperature": 0.7}),
        request_key("chat", "http://h/v1/chat/completions", base | {"max_tokens": 64}),
        request_key("chat", "http://h/v1/chat/completions", base | {"seed": 1}),
        request_key("chat", "http://h/v1/chat/completions", base | {"response_format": {"type": "json_object"}}),
        request_key("chat", "http://other/v1/chat/completions", base),
        request_key("chat", "http://h/v1/chat/completions", base, sample=1),
        request_key("embed", "http://h/v1/chat/completions", base),
    ]
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    other = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAB"}}
    msg = lambda part: [{"role": "user", "content": [{"type": "text", "text": "q"}, part]}]  # noqa: E731
    with_image = request_key("chat", "u", base | {"messages": msg(image)})
    assert len({k, *changed}) == len(changed) + 1
    assert with_image != request_key("chat", "u", base | {"messages": msg(other)})  # one byte of the image


@pytest.mark.parametrize(
    "reply, schema",
    [
        (500, None),  # an error status (retried, then given up)
        ((400, {"error": {"message": "bad request"}}), None),
        ({"choices": [{"message": {"role": "assistant", "content": "half a sent"}, "finish_reason": "length"}]}, None),
        ({"choices": [{"message": {"role": "assistant", "content": "x"}, "finish_reason": "content_filter"}]}, None),
        ("   ", None),  # empty
        ({"choices": []}, None),  # malformed
        ("no json in this verdict", {"type": "object"}),  # a JSON object was asked for
    ],
    ids=["5xx", "4xx", "truncated", "filtered", "empty", "malformed", "unparseable"],
)
def test_only_complete_replies_are_stored(tmp_path, reply, schema):
    with ScriptedChatServer(lambda body: reply) as srv:
        cache = ModelCache(tmp_path / "c")
        client = ChatClient(srv.base_url, "m", cache=cache, max_attempts=1, backoff=0.001)
        for _ in range(2):
            try:
                client.chat([{"role": "user", "content": "q"}], schema=schema)
            except ChatError:
                pass
        assert len(srv.requests) == 2  # asked again each time: nothing was served from the cache
    assert _rows(tmp_path / "c") == []
    counts = cache.counts()
    assert counts["hits"] == 0 and counts["stored"] == 0


def test_the_first_complete_reply_after_an_incomplete_one_is_stored(tmp_path):
    replies = iter(["not json", json.dumps({"verdict": "correct"})])
    with ScriptedChatServer(lambda body: next(replies)) as srv:
        cache = ModelCache(tmp_path / "c")
        client = ChatClient(srv.base_url, "m", cache=cache)
        texts = [client.chat([{"role": "user", "content": "q"}], schema={"type": "object"}).text for _ in range(2)]
        again = ChatClient(srv.base_url, "m", cache=cache).chat(
            [{"role": "user", "content": "q"}], schema={"type": "object"}
        )
    assert texts == ["not json", '{"verdict": "correct"}'] and len(srv.requests) == 2
    assert again.cached and again.text == '{"verdict": "correct"}'  # the parse retry's reply, sample 0 now
    assert cache.counts()["not_stored"] == 1


def test_a_repeated_request_gets_a_reply_of_its_own_and_a_rerun_the_same_ones(tmp_path):
    with ScriptedChatServer(_counter()) as srv:
        cache = ModelCache(tmp_path / "c")
        ask = [{"role": "user", "content": "same"}]
        first = ChatClient(srv.base_url, "m", temperature=0.7, cache=cache)
        assert [first.chat(ask).text for _ in range(2)] == ["reply 1", "reply 2"]  # two epochs, two samples
        rerun = ChatClient(srv.base_url, "m", temperature=0.7, cache=cache)
        assert [rerun.chat(ask).text for _ in range(3)] == ["reply 1", "reply 2", "reply 3"]
        assert len(srv.requests) == 3  # only the third sample was asked


def test_a_warm_structured_call_skips_the_form_the_server_refused(tmp_path):
    def refuse_json_schema(body):
        if (body.get("response_format") or {}).get("type") == "json_schema":
            return (400, {"error": {"message": "response_format json_schema is not supported"}})
        return json.dumps({"verdict": "correct"})

    with ScriptedChatServer(refuse_json_schema) as srv:
        cache = ModelCache(tmp_path / "c")
        ask = [{"role": "user", "content": "grade"}]
        cold = ChatClient(srv.base_url, "m", cache=cache).chat(ask, schema={"type": "object"})
        n = len(srv.requests)
        warm = ChatClient(srv.base_url, "m", cache=cache).chat(ask, schema={"type": "object"})
        assert len(srv.requests) == n == 2  # refused, then answered; warm: nothing
    assert (cold.form, warm.form, warm.cached) == ("json_object", "json_object", True)


# --- secrets ------------------------------------------------------------------------------------


def test_the_api_key_is_in_no_cache_key_and_no_cache_file(tmp_path, monkeypatch):
    secret = "sk-test-5ecret-7a1b9c"
    monkeypatch.setenv("H28B_KEY", secret)
    monkeypatch.setenv("H28B_OTHER_KEY", "sk-another-one")
    with ScriptedChatServer(_counter()) as srv:
        cache = ModelCache(tmp_path / "c")
        ask = [{"role": "user", "content": "q"}]
        ChatClient(srv.base_url, "m", api_key_env="H28B_KEY", cache=cache).chat(ask)
        other = ChatClient(srv.base_url, "m", api_key_env="H28B_OTHER_KEY", cache=cache).chat(ask)
        assert srv.headers[0]["authorization"] == f"Bearer {secret}"  # sent, in the header
        assert other.cached and len(srv.requests) == 1  # another key, the same request: the key is no part of it
    cache.close()
    files = [p for p in (tmp_path / "c").rglob("*") if p.is_file()]
    assert files and all(secret.encode() not in p.read_bytes() for p in files)
    assert all(b"sk-" not in p.read_bytes() for p in files)


# --- concurrent writers, a killed writer, the size bound ----------------------------------------


def _value(i: int, tag: str) -> bytes:
    return json.dumps({"i": i, "tag": tag, "pad": "x" * (200 + i % 50)}).encode()


def _write_many(folder: str, tag: str, n: int) -> None:
    cache = ModelCache(folder)
    for i in range(n):
        cache.put(request_key("chat", tag, {"i": i}), _value(i, tag), "judge", "m")
        if i % 7 == 0:
            cache.get(request_key("chat", tag, {"i": i // 2}), "judge")
    cache.close()


def test_threads_and_processes_write_at_once_without_loss_or_damage(tmp_path):
    folder = str(tmp_path / "c")
    ModelCache(folder).close()
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_write_many, args=(folder, f"p{j}", 150)) for j in range(2)]
    shared = ModelCache(folder)
    for p in procs:
        p.start()
    threads = [
        threading.Thread(
            target=lambda t=t: [
                shared.put(request_key("chat", f"t{t}", {"i": i}), _value(i, f"t{t}"), "reader") for i in range(60)
            ]
        )
        for t in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0]
    fresh = ModelCache(folder)
    for tag, n in [("p0", 150), ("p1", 150), *((f"t{t}", 60) for t in range(4))]:
        assert all(fresh.get(request_key("chat", tag, {"i": i})) == _value(i, tag) for i in range(n)), tag
    with sqlite3.connect(tmp_path / "c" / FILENAME) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert db.execute("SELECT COUNT(*) FROM reply").fetchone()[0] == 2 * 150 + 4 * 60
    assert shared.counts()["roles"]["reader"]["stored"] == 240


_KILLED_WRITER = """
import sys
from memeval.callcache import ModelCache, request_key
cache = ModelCache(sys.argv[1])
i = 0
while True:
    cache.put(request_key("chat", "k", {"i": i}), (str(i) * 500).encode(), "judge", "m")
    i += 1
    if i % 50 == 0:
        print(i, flush=True)
"""


def test_a_killed_writer_leaves_a_readable_cache(tmp_path):
    folder = tmp_path / "c"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-c", _KILLED_WRITER, str(folder)], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        written = 0
        while written < 300:
            line = proc.stdout.readline()
            assert line, f"the writer stopped early (exit {proc.poll()})"
            written = int(line)
        os.kill(proc.pid, signal.SIGKILL)  # mid-write, most likely
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()
    cache = ModelCache(folder)
    with sqlite3.connect(folder / FILENAME) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        n = db.execute("SELECT COUNT(*) FROM reply").fetchone()[0]
    assert n >= written
    assert all(cache.get(request_key("chat", "k", {"i": i})) == (str(i) * 500).encode() for i in range(n))
    cache.put(request_key("chat", "k", {"i": -1}), b"after", "judge")  # and it takes writes again
    assert cache.get(request_key("chat", "k", {"i": -1})) == b"after"


def test_the_cache_keeps_to_its_size_dropping_the_least_recently_used(tmp_path):
    cache = ModelCache(tmp_path / "c", max_bytes=10_000)
    keys = [request_key("chat", "u", {"i": i}) for i in range(40)]
    for i, k in enumerate(keys):
        cache.put(k, b"x" * 1000, "judge")
        with sqlite3.connect(tmp_path / "c" / FILENAME) as db:  # ages apart: the first written is the oldest
            db.execute("UPDATE reply SET used = ?, created = ? WHERE key = ?", (i, i, k))
    assert cache.size() == 40_000  # 40 stores: fewer than a size check's period
    reopened = ModelCache(tmp_path / "c", max_bytes=10_000)  # the next command checks at open
    assert reopened.size() <= 10_000 and reopened.size() == 9_000  # down to 90% of the bound
    assert reopened.get(keys[0]) is None and reopened.get(keys[-1]) == b"x" * 1000  # the oldest went
    assert cache.prune() == 0  # nothing more to drop


# --- where the cache is --------------------------------------------------------------------------


def test_the_default_cache_is_under_the_project_root_and_off_turns_it_off(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "notebooks").mkdir()
    monkeypatch.chdir(tmp_path / "notebooks")
    monkeypatch.delenv("MEMEVAL_CACHE", raising=False)
    assert resolve_cache().folder == tmp_path / ".memeval" / "cache"
    assert resolve_cache(off=True) is None
    assert resolve_cache(str(tmp_path / "mine")).folder == tmp_path / "mine"
    monkeypatch.setenv("MEMEVAL_CACHE", "off")
    assert resolve_cache() is None
    monkeypatch.setenv("MEMEVAL_CACHE", str(tmp_path / "env"))
    assert resolve_cache().folder == tmp_path / "env"


def test_a_symlinked_cache_folder_is_refused(tmp_path, capsys):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with ScriptedChatServer(judge_responder("strict")) as judge:
        bench = make_minibench(tmp_path / "bench")
        src = run_system(bench, "bm25:k=2", mode="dry", out=tmp_path / "src", progress=False)
        args = [
            "regrade",
            str(src),
            "--mode",
            "memory",
            "--out",
            str(tmp_path / "re"),
            "--cache",
            str(tmp_path / "link"),
        ]
        assert main(args + ["--judge-url", judge.base_url, "--judge-model", "j"]) != 0
        assert judge.requests == [] and not (tmp_path / "re").exists()  # nothing half-written
    err = capsys.readouterr().err
    assert "symbolic link" in err and "Traceback" not in err


def test_the_manifest_counts_the_embeddings_served_from_the_embedding_cache(tmp_path):
    bench = make_minibench(tmp_path / "bench")
    with ScriptedChatServer(lambda body: 404) as srv:
        spec = f"vector:k=2,model=stub-embed,base_url={srv.base_url},cache={tmp_path / 'e.sqlite'}"
        runs = [run_system(bench, spec, tiers=["core"], out=tmp_path / f"r{i}", progress=False) for i in range(2)]
        sent = sum(len(b["input"]) for b in srv.embedding_requests)
    cold, warm = (read_manifest(r)["system_usage"] for r in runs)
    assert cold["embedding_texts_sent"] == sent and cold["embedding_calls"] == srv.embedding_calls
    assert warm["embedding_texts_sent"] == warm["embedding_calls"] == 0
    assert warm["embedding_texts_cached"] == cold["embedding_texts_sent"] + cold["embedding_texts_cached"] > 0


def test_attributing_a_run_again_makes_no_model_call(tmp_path):
    from memeval.scoring.judge import Judge, Reader

    bench = make_minibench(tmp_path / "bench")
    with ScriptedChatServer(judge_responder("strict")) as judge, ScriptedChatServer(reader_responder) as reader:
        src = run_system(
            bench,
            "bm25:k=1",
            mode="answer",
            judge=Judge(ChatClient(judge.base_url, "j")),
            reader=Reader(ChatClient(reader.base_url, "r")),
            out=tmp_path / "src",
            progress=False,
        )
        before = len(judge.requests), len(reader.requests)

        def attribute(out: str) -> Path:
            args = ["attribute", str(src), "--out", str(tmp_path / out), "--cache", str(tmp_path / "cache")]
            args += ["--judge-url", judge.base_url, "--judge-model", "j", "--reader-url", reader.base_url]
            assert main(args + ["--reader-model", "r", "--all-conditions"]) == 0
            return tmp_path / out

        first = attribute("a1")
        asked = len(judge.requests), len(reader.requests)
        second = attribute("a2")
        assert (len(judge.requests), len(reader.requests)) == asked  # the second attribution asks nothing
    assert asked[0] > before[0] and asked[1] > before[1]  # the first asked the conditions
    m1, m2 = read_manifest(first)["model_cache"], read_manifest(second)["model_cache"]
    assert m2["misses"] == 0 and m2["hits"] == m1["misses"] == m1["stored"] > 0
    fields = ("attribution", "attribution_oracle_score", "attribution_context_score")
    assert [[r[f] for f in fields] for r in read_records(first)] == [
        [r[f] for f in fields] for r in read_records(second)
    ]


def test_a_cache_file_that_is_not_one_is_one_line_and_no_call(tmp_path, capsys):
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / FILENAME).write_bytes(b"this is not a database, just some bytes" * 100)
    with ScriptedChatServer(judge_responder("strict")) as judge:
        bench = make_minibench(tmp_path / "bench")
        src = run_system(bench, "bm25:k=2", mode="dry", out=tmp_path / "src", progress=False)
        args = ["regrade", str(src), "--mode", "memory", "--out", str(tmp_path / "re"), "--cache", str(tmp_path / "c")]
        assert main(args + ["--judge-url", judge.base_url, "--judge-model", "j"]) != 0
        assert judge.requests == [] and not (tmp_path / "re").exists()  # nothing half-written
    err = capsys.readouterr().err
    assert "not a model-call cache" in err and str(tmp_path / "c" / FILENAME) in err and "Traceback" not in err
