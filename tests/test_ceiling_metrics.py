"""Issue 9: the oracle as a true ceiling, floor <= always-IDK <= ceiling per tier, ranked retrieval
metrics (LongMemEval's definitions, on hand-computed rankings), and the dry validity gate."""

import math

import pytest
from test_loaders_locomo import _conv, _write as _write_locomo
from test_loaders_longmemeval import _sample as _lme_sample, _write as _write_lme

from memeval.bench import load_bench, read_questions, read_turns
from memeval.audit import audit
from memeval.bench.lifelog import generate
from memeval.bench.loaders.locomo import import_locomo
from memeval.bench.loaders.longmemeval import import_longmemeval
from memeval.bench.model import Question, Turn
from memeval.cli import main
from memeval.run.records import read_records
from memeval.run.runner import run_system
from memeval.scoring.bounds import order_problems, tier_bounds
from memeval.scoring.retrieval import Corpus, ranking_metrics, retrieval_hit

L3 = math.log2(3)


# ---------------------------------------------------------------------------------------------
# ranked retrieval metrics on a hand-computed ranking

# sessions A: turns 1-3, B: 4-5, C: 6; evidence turns 2 (A) and 5 (B)
TURNS = [
    Turn(i, s, "me", f"turn {i} text", "2026-01-01")
    for i, s in ((1, "A"), (2, "A"), (3, "A"), (4, "B"), (5, "B"), (6, "C"))
]
CORPUS = Corpus.of(TURNS, lambda t: f"[{t.date}] {t.speaker}: {t.text}")
Q = Question("q", "BASIC", "?", "x", evidence_turns=(2, 5))


def _expected():
    # turn level, ranking 4, 2, 6, 5 (rank 2 undiscounted, rank i>=2 over log2(i)); ideal: two relevant turns
    turn = {1: (0, 0, 0.0), 3: (1, 0, 1 / 2), 5: (1, 1, (1 + 1 / 2) / 2), 10: (1, 1, (1 + 1 / 2) / 2)}
    # session level: ranked B, A, C, B; gold A, B; corpus labels A A A B B C (5 relevant turns)
    ideal5 = 1 + 1 + 1 / L3 + 1 / 2 + 1 / math.log2(5)
    sess = {
        1: (1, 0, 1.0),  # k stays 1: B
        3: (1, 1, 2 / (2 + 1 / L3)),  # B, A, C span 3 sessions at k=3
        5: (1, 1, (2 + 1 / 2) / ideal5),  # never 5 sessions: k grows past the corpus (7)
        10: (1, 1, (2 + 1 / 2) / ideal5),
    }
    out = {}
    for lv, table in (("turn", turn), ("session", sess)):
        for k, (a, al, n) in table.items():
            out[f"{lv}_recall_any@{k}"], out[f"{lv}_recall_all@{k}"], out[f"{lv}_ndcg@{k}"] = a, al, n
    return out


def test_ranked_turn_ids_match_longmemeval_formulas_by_hand():
    got, source = ranking_metrics(Q, [4, 2, 6, 5], [], CORPUS)
    assert source == "turn_ids"
    assert got == pytest.approx(_expected())


def test_text_only_systems_are_mapped_to_turns_and_score_the_same():
    mems = [f"[2026-01-01] me: turn {i} text" for i in (4, 2)] + ["turn 6 text", "turn 5 text"]
    got, source = ranking_metrics(Q, None, mems, CORPUS)
    assert source == "text" and got == pytest.approx(_expected())
    # an unmapped memory keeps its rank as an irrelevant item: evidence at ranks 2 and 3
    got, _ = ranking_metrics(Q, None, ["something else", "turn 2 text", "turn 5 text"], CORPUS)
    assert got["turn_recall_any@1"] == 0 and got["turn_ndcg@3"] == pytest.approx((1 + 1 / L3) / 2)


def test_nothing_returned_is_all_zero_not_excluded():
    got, _ = ranking_metrics(Q, [], [], CORPUS)
    assert set(got.values()) == {0.0}


@pytest.mark.parametrize("ids,mems", [([1, 2], []), (None, ["turn 1 text"]), ([], []), (None, None)])
def test_questions_without_evidence_are_excluded_for_every_system_alike(ids, mems):
    for q in (
        Question("a", "ABSTAIN", "?", "never", expect="no_memory"),
        Question("b", "FALSE_MEMORY", "?"),
        Question("c", "BASIC", "?", "turn 1 text"),
    ):  # answerable, but no evidence turns listed
        assert ranking_metrics(q, ids, mems, CORPUS) == (None, None)
        assert retrieval_hit(q, ids, mems) is None


# ---------------------------------------------------------------------------------------------
# floor <= always-IDK <= ceiling


def test_order_problems_fire_when_the_ceiling_is_below_idk():
    # an UPDATE question whose evidence lacks the new value: IDK earns 0.5, the "ceiling" 0
    q = Question("u", "UPDATE", "Where do I live now?", "Bergen", evidence_turns=(1,))
    b = tier_bounds([q], lambda q: [Turn(1, 1, "me", "I live in Oslo.", "2026-01-01")])
    assert (b.floor.weighted, b.idk.weighted, b.ceiling.weighted) == (0.0, 0.5, 0.0)
    assert order_problems(b) == [
        "always-IDK 0.500 > ceiling 0.000 (weighted)",
        "always-IDK 0.500 > ceiling 0.000 (unweighted)",
    ]


@pytest.fixture(scope="module", params=["tiny", "demo", "full"])
def preset(request, tmp_path_factory):
    # tiny and demo: the session's seed-1 benches (built once for every worker; read here, never written);
    # full: generated here, the one test that reads it
    if request.param == "tiny":
        return "tiny", request.getfixturevalue("_tiny")[0]
    if request.param == "demo":
        return "demo", request.getfixturevalue("demo1_bench")
    out = tmp_path_factory.mktemp(request.param) / "bench"
    generate(request.param, 0, out)
    return request.param, out


def _ordered(nums):
    for label, v in nums.items():
        assert v["floor"] <= v["idk"] <= v["ceiling"], label


def test_every_preset_bounds_are_ordered_and_the_oracle_abstains(preset):
    name, root = preset
    rep = audit(root, bounds_only=True)  # the one check read here (the other checks: test_audit.py, on tiny)
    assert rep.check("bounds").status == "pass"
    nums = rep.check("bounds").numbers
    assert {t.name for t in load_bench(root).tiers} <= set(nums)
    assert any("/probes" in k for k in nums)  # the FALSE_MEMORY probes set is bounded too
    _ordered(nums)
    # the oracle, graded as a dry run grades it: >= 0.9 on ABSTAIN and FALSE_MEMORY in every tier and set
    b = load_bench(root)
    for t in b.tiers:
        by_id = {x.turn_id: x for x in read_turns(root / t.turns_file)}  # once per tier, not per question set
        for qset in ("main", *t.question_sets):
            qs = read_questions(root / t.questions_path(qset))
            tb = tier_bounds(qs, lambda q: [by_id[i] for i in q.evidence_turns])
            for axis in ("ABSTAIN", "FALSE_MEMORY"):
                if axis in tb.ceiling_by_axis:
                    assert tb.ceiling_by_axis[axis] >= 0.9, (name, t.name, qset, axis)
    # a text-only oracle cannot see photos: named beside the ceiling
    assert any("IMAGE" in str(v.get("ceiling_cannot_reach")) for v in nums.values())


def test_oracle_dry_run_on_tiny_abstains_on_abstain_and_false_memory(tmp_path):
    root = tmp_path / "tiny"
    generate("tiny", 0, root)
    scores: dict[str, list[float]] = {}
    for qset in ("main", "probes"):
        rd = run_system(root, "oracle", out=tmp_path / qset, progress=False, question_set=qset)
        for r in read_records(rd):
            scores.setdefault(r["axis"], []).append(r["score"])
            if r["axis"] in ("ABSTAIN", "FALSE_MEMORY"):
                assert r["memories_returned"] == [] and r["rule"].endswith(":idk")
    for axis in ("ABSTAIN", "FALSE_MEMORY"):
        assert len(scores[axis]) >= 3 and sum(scores[axis]) / len(scores[axis]) >= 0.9


def test_imported_locomo_and_longmemeval_shapes_are_bounded(tmp_path):
    import_locomo([_write_locomo(tmp_path, [_conv("conv-26")])], tmp_path / "locomo")
    import_longmemeval([_write_lme(tmp_path / "longmemeval_s.json", _lme_sample())], tmp_path / "lme")
    for root in (tmp_path / "locomo", tmp_path / "lme"):
        rep = audit(root)
        assert rep.check("bounds").status == "pass", rep.summary()
        nums = rep.check("bounds").numbers
        assert nums
        _ordered(nums)
        # the abstention questions (LoCoMo category 5, LongMemEval _abs) lift the oracle above 0
        assert all(v["ceiling"] > 0 for v in nums.values())


# ---------------------------------------------------------------------------------------------
# the validity gate


def test_abstractive_bench_is_gated_in_run_and_summary(tmp_path, capsys):
    import_locomo([_write_locomo(tmp_path, [_conv("conv-26")])], tmp_path / "locomo")
    assert (
        main(
            [
                "run",
                "--bench",
                str(tmp_path / "locomo"),
                "--system",
                "bm25",
                "--out",
                str(tmp_path / "r"),
                "--no-progress",
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    gate = [ln for ln in err.splitlines() if ln.startswith("NOT VALID")]
    assert len(gate) == 1 and "evidence ceiling" in gate[0]
    assert "evidence retrieval over" in err
    assert main(["summary", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    assert out.count("NOT VALID") == 2  # the gate line, and the label on the dry scores
    assert out.index("Evidence retrieval") < out.index("Overall dry answer scores -- NOT VALID")


def test_generated_bench_is_not_gated(tmp_path, capsys):
    generate("tiny", 0, tmp_path / "tiny")
    assert (
        main(
            [
                "run",
                "--bench",
                str(tmp_path / "tiny"),
                "--system",
                "no_memory",
                "--tiers",
                "core",
                "--out",
                str(tmp_path / "r"),
                "--no-progress",
            ]
        )
        == 0
    )
    assert "NOT VALID" not in capsys.readouterr().err
    assert main(["summary", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    assert "NOT VALID" not in out and out.index("Overall dry answer scores") < out.index("Evidence retrieval")


def _lme_reference(ranking_idx, correct, corpus_ids, k):
    """LongMemEval's formulas as its eval_utils states them (indices into the corpus, the whole
    corpus's relevances sorted for the ideal), written out plainly as the test's reference."""

    def dcg(rel, k):
        rel = rel[:k]
        return (rel[0] + sum(r / math.log2(i) for i, r in enumerate(rel[1:], start=2))) if rel else 0.0

    recalled = {corpus_ids[i] for i in ranking_idx[:k]}
    rel_all = [1 if c in correct else 0 for c in corpus_ids]
    ideal = dcg(sorted(rel_all, reverse=True), k)
    actual = dcg([rel_all[i] for i in ranking_idx[:k]], k)
    return (
        float(any(c in recalled for c in correct)),
        float(all(c in recalled for c in correct)),
        actual / ideal if ideal else 0.0,
    )


def _lme_turn2session(ranking_idx, correct, corpus_ids, session_of, k):
    sess_correct = list({session_of[c] for c in correct})
    sess_corpus = [session_of[c] for c in corpus_ids]
    eff = k
    while eff <= len(sess_corpus) and len({sess_corpus[i] for i in ranking_idx[:eff]}) < k:
        eff += 1
    return _lme_reference(ranking_idx, sess_correct, sess_corpus, eff)


def test_metrics_equal_longmemeval_formulas_on_random_rankings():
    import random

    rng = random.Random(7)
    for _ in range(300):
        n_sess = rng.randint(1, 6)
        turns = []
        for s in range(n_sess):
            for _ in range(rng.randint(1, 5)):
                turns.append(Turn(len(turns) + 1, f"S{s}", "me", f"t{len(turns) + 1}", "2026-01-01"))
        corpus = Corpus.of(turns)
        ids = [t.turn_id for t in turns]
        ev = tuple(rng.sample(ids, rng.randint(1, min(3, len(ids)))))
        ranked = rng.sample(ids, rng.randint(0, len(ids)))  # a returned prefix of some ranking
        got, _ = ranking_metrics(Question("q", "BASIC", "?", "x", evidence_turns=ev), ranked, [], corpus)
        idx = [ids.index(t) for t in ranked]
        session_of = {t.turn_id: t.session_id for t in turns}
        for k in (1, 3, 5, 10):
            want_t = _lme_reference(idx, list(ev), ids, k)
            want_s = _lme_turn2session(idx, list(ev), ids, session_of, k)
            assert [got[f"turn_{m}@{k}"] for m in ("recall_any", "recall_all", "ndcg")] == pytest.approx(want_t)
            assert [got[f"session_{m}@{k}"] for m in ("recall_any", "recall_all", "ndcg")] == pytest.approx(want_s)


def test_validity_reads_the_dry_rules_answerable_ceiling_not_keyword_recall(tmp_path):
    from booksuite_paths import SUITE

    from memeval.bench.loaders.booksuite import import_booksuite
    from memeval.audit.validity import dry_validity, gate_line

    import_booksuite(SUITE, tmp_path / "book")  # graded by its own keyword recall: no dry-rule ceiling
    v = dry_validity(tmp_path / "book")
    assert v["valid"] is None and gate_line("book", v) is None
    import_locomo([_write_locomo(tmp_path, [_conv("conv-26")])], tmp_path / "locomo")
    v = dry_validity(tmp_path / "locomo")
    # LoCoMo-shaped: "7 May 2023" for a turn saying "yesterday", "Likely yes" for a lake photo, ...
    assert v["valid"] is False and v["evidence_ceiling"]["all"] < 0.9
    generate("tiny", 0, tmp_path / "tiny")
    v = dry_validity(tmp_path / "tiny")
    assert v["valid"] is True and set(v["evidence_ceiling"].values()) == {1.0}


def test_reports_name_what_the_ceiling_cannot_reach(tmp_path, capsys):
    from memeval.analysis.aggregate import ceiling_gap_line, load_records
    from memeval.analysis.plots import degradation_curve

    generate("tiny", 0, tmp_path / "tiny")
    runs = [run_system(tmp_path / "tiny", s, out=tmp_path / s, progress=False) for s in ("no_memory", "oracle", "bm25")]
    df = load_records(runs)
    # tiny: 9 IMAGE questions about uncaptioned photos in each of the three tiers above core
    assert ceiling_gap_line(df) == "ceiling (oracle) cannot reach: IMAGE 0.00 (n=27)"
    names = [t.name for t in degradation_curve(df, core=False).data]
    assert "ceiling: oracle, cannot reach IMAGE" in names
    assert main(["summary", *map(str, runs)]) == 0
    out = capsys.readouterr().out
    assert out.index("ceiling (oracle) cannot reach: IMAGE") > out.index("Overall dry answer scores")
