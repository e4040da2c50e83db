"""Tokens and cost per question: usage from the endpoints' ``usage``, by role, priced by a table."""

import json

import pytest

from memeval.analysis.aggregate import load_records
from memeval.analysis.costs import cost_table
from memeval.cli import main
from memeval.llm import ChatClient
from memeval.run import read_manifest, read_records, run_system
from memeval.run.cost import load_prices
from memeval.scoring.judge import Judge, Reader
from memeval.testing.chat_stub import ScriptedChatServer, completion
from minibench import make_minibench

VERDICT = json.dumps({"verdict": "correct", "evidence": "the answer"})
PRICES = "r-model: {input: 2.0, output: 8.0}\nj-model: {input: 0.5, output: 1.5}\n"


def _reader(body):
    return completion("Biscuit", usage=(120, 5))


def _judge(body):
    return completion(VERDICT, usage=(300, 20))


def _answer_run(tmp_path, bench, reader_reply=_reader, judge_reply=_judge, system="bm25", prices=PRICES, out="run"):
    (tmp_path / "prices.yaml").write_text(prices)
    with ScriptedChatServer(reader_reply) as r, ScriptedChatServer(judge_reply) as j:
        rd = run_system(
            bench,
            system,
            tiers=["core"],
            mode="answer",
            judge=Judge(ChatClient(j.base_url, "j-model", backoff=0.001)),
            reader=Reader(ChatClient(r.base_url, "r-model", backoff=0.001)),
            out=tmp_path / out,
            progress=False,
            prices=load_prices(tmp_path / "prices.yaml"),
        )
    return rd


def test_cost_of_a_hand_made_run(tmp_path):
    bench = make_minibench(tmp_path / "b")
    rd = _answer_run(tmp_path, bench)
    recs = read_records(rd)
    assert len(recs) == 4
    # by hand: reader 120 in x $2 + 5 out x $8, judge 300 in x $0.5 + 20 out x $1.5, per million tokens
    by_hand = (120 * 2.0 + 5 * 8.0 + 300 * 0.5 + 20 * 1.5) / 1_000_000  # = 0.00046
    for rec in recs:
        assert sorted(
            (u["role"], u["model"], u["calls"], u["prompt_tokens"], u["completion_tokens"]) for u in rec["usage"]
        ) == [
            ("judge", "j-model", 1, 300, 20),
            ("reader", "r-model", 1, 120, 5),
        ]
        assert (rec["prompt_tokens"], rec["completion_tokens"]) == (420, 25)
        assert rec["cost_usd"] == pytest.approx(0.00046) and rec["cost_usd"] == pytest.approx(by_hand)
    row = cost_table(load_records(rd)).row(0, named=True)
    assert row["cost_per_q"] == pytest.approx(0.00046) and row["cost_total"] == pytest.approx(4 * 0.00046)
    assert (row["prompt_tokens"], row["completion_tokens"], row["priced"], row["unpriced"]) == (420, 25, 4, 0)
    assert row["n"] == 4 and row["accuracy"] == 1.0


def test_summary_reprices_from_usage_and_shows_tokens_and_cost(tmp_path, capsys):
    bench = make_minibench(tmp_path / "b")
    rd = _answer_run(tmp_path, bench)
    cheaper = tmp_path / "cheaper.yaml"
    cheaper.write_text("r-model: {input: 1.0, output: 0}\nj-model: {input: 0, output: 10}\n")
    assert main(["summary", str(rd), "--no-bounds", "--format", "json", "--prices", str(cheaper)]) == 0
    out = json.loads(capsys.readouterr().out)
    (row,) = out["cost"]
    assert row["cost_per_q"] == pytest.approx((120 * 1.0 + 20 * 10) / 1e6)  # 0.00032
    assert main(["summary", str(rd), "--no-bounds"]) == 0  # the run's own cost, in the table
    text = capsys.readouterr().out
    assert "Tokens per question and cost" in text and "usd_per_1k_q" in text
    assert "| 420.000 " in text and "| 0.460 " in text  # tokens in per question; 1,000 x $0.00046
    assert max(len(line) for line in text.splitlines()) <= 100


def test_no_usage_or_unknown_model_is_unknown_cost_not_zero(tmp_path):
    bench = make_minibench(tmp_path / "b")

    def bare(body):  # an endpoint that reports no usage
        return {"choices": [{"message": {"role": "assistant", "content": "Biscuit"}}]}

    rd = _answer_run(tmp_path, bench, reader_reply=bare)
    for rec in read_records(rd):
        reader = next(u for u in rec["usage"] if u["role"] == "reader")
        assert reader["prompt_tokens"] is None and rec["prompt_tokens"] is None and rec["cost_usd"] is None
    rd2 = _answer_run(tmp_path, bench, prices="r-model: {input: 1, output: 1}\n", out="run2")  # judge unpriced
    row = cost_table(load_records(rd2)).row(0, named=True)
    assert row["cost_per_q"] is None and row["unpriced"] == 4 and row["priced"] == 0
    assert row["prompt_tokens"] == 420  # the tokens are still known


def test_records_without_usage_still_load(tmp_path):
    bench = make_minibench(tmp_path / "b")
    rd = run_system(bench, "bm25", tiers=["core"], out=tmp_path / "dry", progress=False)
    path = rd / "records.jsonl"
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert all(r["usage"] == [] and r["cost_usd"] is None for r in lines)  # dry: no model call, no table
    old = [
        {k: v for k, v in r.items() if k not in ("usage", "prompt_tokens", "completion_tokens", "cost_usd")}
        for r in lines
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in old))
    df = load_records(rd)
    assert df.height == 4 and df["cost_usd"].null_count() == 4 and df["usage"].null_count() == 4


def test_system_side_calls_are_counted_as_system(tmp_path):
    bench = make_minibench(tmp_path / "b")
    with ScriptedChatServer(lambda body: completion("a memory", usage=(7, 3))) as sys_llm:
        rd = _answer_run(
            tmp_path,
            bench,
            system=f"python:test_cost:ChattySystem:url={sys_llm.base_url}",
            prices=PRICES + "sys-model: {input: 10, output: 10}\n",
        )
    for rec in read_records(rd):
        roles = {u["role"]: u for u in rec["usage"]}
        assert roles["system"]["model"] == "sys-model" and roles["system"]["prompt_tokens"] == 7
        assert rec["cost_usd"] == pytest.approx(0.00046 + (7 + 3) * 10 / 1e6)
    # ingest calls are the haystack's, not a question's: the manifest keeps them, one call per session
    (entry,) = read_manifest(rd)["ingest_usage"]["core"]
    assert entry == {"role": "system", "model": "sys-model", "calls": 4, "prompt_tokens": 28, "completion_tokens": 12}


class ChattySystem:
    """An in-process system that asks a model at ingest and at query time (as mem0 does)."""

    name, version = "chatty", "1"

    def __init__(self, url):
        self.params = {"url": url}
        self.client = ChatClient(url, "sys-model", backoff=0.001)

    def reset(self):
        pass

    def ingest(self, session):
        self.client.chat([{"role": "user", "content": "summarise"}])

    def query(self, question, asked_at):
        from memeval.systems.base import Recall

        return Recall((self.client.chat([{"role": "user", "content": question}]).text,))


@pytest.mark.parametrize(
    "text, field",
    [
        ("gpt-x: {input: -1, output: 2}\n", "gpt-x.input"),
        ("gpt-x: {input: 1}\n", "gpt-x.output"),
        ("gpt-x: {input: 1, output: cheap}\n", "gpt-x.output"),
        ("gpt-x: {input: 1, output: 2, cached: 0.5}\n", "gpt-x.cached"),
        ("gpt-x: 3\n", "gpt-x"),
        ("- a\n- b\n", None),
        ("gpt-x: {input: [1\n", None),
    ],
)
def test_bad_price_table_is_one_line_exit_2(tmp_path, capsys, text, field):
    bench = make_minibench(tmp_path / "b")
    bad = tmp_path / "prices.yaml"
    bad.write_text(text)
    for argv in (
        [
            "run",
            "--bench",
            bench,
            "--system",
            "bm25",
            "--prices",
            str(bad),
            "--out",
            str(tmp_path / "r"),
            "--no-progress",
        ],
        ["summary", str(tmp_path), "--prices", str(bad)],
    ):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "prices.yaml" in err and "Traceback" not in err
        if field:
            assert f"field '{field}'" in err
    assert not (tmp_path / "r").exists()  # nothing half-written


def test_a_malformed_usage_entry_names_line_and_field(tmp_path, capsys):
    bench = make_minibench(tmp_path / "b")
    rd = run_system(bench, "bm25", tiers=["core"], out=tmp_path / "dry", progress=False)
    path = rd / "records.jsonl"
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    lines[1]["usage"] = [{"role": "reader", "model": "m", "calls": 1, "prompt_tokens": "many", "completion_tokens": 1}]
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    assert main(["summary", str(rd), "--no-bounds"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "records.jsonl:2: field 'usage'" in err
