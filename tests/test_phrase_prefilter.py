"""The phrase pre-filter (``PhraseSet``'s word and literal index) decides exactly as the plain path,
``re.search`` of every original pattern (``PhraseSet._search_reference``): on matches generated from
every pattern, on near-misses made from them (a word dropped, a letter changed, cut short), and on the
dry scorer's grades of a large generated set of (question, answer) pairs on all 17 axes."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memeval.bench.axes import AXES
from memeval.bench.model import Question
from memeval.scoring import dry, idk
from memeval.scoring.dry import _CORRECTION, _DISAGREEMENT, score_answer
from memeval.scoring.idk import _DENIAL, _IDK
from memeval.scoring.phrases import PhraseSet, required_literals, text_words
from memeval.text.fold import fold_for_phrases

SETS = {"idk": _IDK, "denial": _DENIAL, "disagreement": _DISAGREEMENT, "correction": _CORRECTION}
CONTEXT = ["", "Well, ", "ok so ", "I think ", "Hmm. ", "«", "x", "3 ", "user: ", "Señor ", "我", "Да, "]
TAIL = ["", ".", " today", "!", "s", "x", " 42", ", sorry.", " — ", "ing", "?"]


def _near_misses(text: str, rng: random.Random) -> list[str]:
    """Texts close to a match: a word dropped, a letter changed, cut short."""
    words = text.split(" ")
    out = [text[: rng.randrange(len(text) + 1)]]
    if len(words) > 1:
        k = rng.randrange(len(words))
        out.append(" ".join(words[:k] + words[k + 1 :]))
    if text:
        i = rng.randrange(len(text))
        out.append(text[:i] + rng.choice("aeqzé ") + text[i + 1 :])
    return out


@pytest.mark.parametrize("name", sorted(SETS))
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_index_decides_as_the_plain_search_on_matches_and_near_misses(name, data):
    phrases = SETS[name]
    pattern = data.draw(st.sampled_from(phrases._patterns[0] + phrases._patterns[1]), label="pattern")
    core = data.draw(st.from_regex(pattern, fullmatch=True), label="match")
    text = data.draw(st.sampled_from(CONTEXT)) + core + data.draw(st.sampled_from(TAIL))
    rng = random.Random(data.draw(st.integers(0, 2**32), label="seed"))
    for t in [text, *_near_misses(text, rng)]:
        folded = fold_for_phrases(t)
        assert phrases.search(folded) == phrases._search_reference(folded), (pattern, folded)


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(list("nodtkwaisem' .,!?ñé不知道모르없ноلا")), max_size=40))
def test_index_decides_as_the_plain_search_on_arbitrary_text(text):
    for phrases in SETS.values():
        assert phrases.search(text) == phrases._search_reference(text), text


def test_a_missed_literal_would_be_caught():
    """The check above can fail: a set whose index drops a word disagrees with its plain search."""
    broken = PhraseSet([r"\bi (?:do not|don't) know\b", r"\bnever said\b"])
    word = next(iter(broken.common.by_word))
    broken.common.by_word = {w: ps for w, ps in broken.common.by_word.items() if w != word}
    broken.common.words = frozenset(broken.common.by_word)
    texts = ["i don't know", "you never said so", "i know"]
    assert any(broken.search(t) != broken._search_reference(t) for t in texts)


ALL_PHRASES = sorted(
    (p for ps in SETS.values() for index in (ps.common, ps.non_ascii) for p in index.phrases()),
    key=lambda p: (p.regex.pattern, p.left_boundary),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_required_literals_are_in_every_match(data):
    """What the index relies on, checked on generated matches of every pattern variant."""
    p = data.draw(st.sampled_from(ALL_PHRASES), label="phrase")
    req = required_literals(p.regex.pattern, p.left_boundary)
    assert req is not None  # every pattern of the four sets has one (none always runs)
    whole_words, literals = req
    m = data.draw(st.from_regex(p.regex.pattern, fullmatch=True), label="match")
    text = data.draw(st.sampled_from(CONTEXT)) + m + data.draw(st.sampled_from(TAIL))
    if not p.search(text):
        return  # the context broke a \b the phrase checks by hand
    found = text_words(text)
    for need in p.needs:
        assert not found.isdisjoint(need), (p.regex.pattern, text, need)
    if whole_words:
        assert not found.isdisjoint(literals), (p.regex.pattern, text, literals)
    else:
        assert any(lit in text for lit in literals), (p.regex.pattern, text, literals)


# ---------------------------------------------------------------------------------------------
# The dry scorer's grades, pre-filter on and bypassed

IDK_11 = [
    "I don't know.",
    "That was never mentioned.",
    "No lo sé.",
    "Je ne sais pas.",
    "Ich weiß nicht.",
    "Não sei.",
    "Non lo so.",
    "不知道",
    "わかりません",
    "모르겠습니다",
    "Не знаю.",
    "لا أعرف",
    "You haven't mentioned that.",
    "I do not have any information about it.",
    "There is no record of that in our chats.",
    "我没有这方面的信息",
    "記憶にありません",
    "말씀하신 적이 없어요",
    "لم تخبرني بذلك",
    "Vous ne m'avez jamais dit ça.",
]
# a prefix of some phrase, but not the phrase
NEAR = [
    "I don't knot the rope.",
    "Never mind, it was Tuesday.",
    "Was it the blue one?",
    "I had no trouble with it.",
    "Did you mean Lyon?",
    "No, it was sunny.",
    "There is no conflict here.",
    "It doesn't contradict anything.",
    "not sure",
    "We discussed the garden.",
    "He never told them.",
    "no se preocupe",
    "Ich weiß es.",
    "不是",
    "모르는 사람",
    "не знал",
    "Actually, it was great, not just good.",
    "You said Tuesday, not Monday.",
    "That never happened.",
    "The two accounts conflict: first 3, later 5.",
    "They switched to oat milk; it's no longer soy.",
    "At one point it was Lyon, later Paris.",
]
NAMES = ["Dr Lee", "Lyon", "oat milk", "metal pipe", "March 13", "$150", "25%", "two weeks", "東京", "Алена"]
FILLER = "We talked about the garden, the train times to the coast and the cat's vet appointment. "


def _pairs(n: int, seed: int = 5) -> list[tuple[Question, object]]:
    rng = random.Random(seed)
    out: list[tuple[Question, object]] = []
    for i in range(n):
        axis = AXES[i % len(AXES)]
        gold, old, a, b = rng.sample(NAMES, 4)
        kw: dict = {}
        if axis in ("UPDATE", "STALE"):
            kw["stale_answer"] = old
        if axis == "CONTRADICT":
            kw.update(clash_a=a, clash_b=b)
        if axis == "RECONCILE":
            kw.update(side_a=a, side_b=b)
        if axis == "GATHER":
            kw["gold_parts"] = (a, b)
        if axis == "CONFLICT":
            gold = f"No, it's {gold} now."
        if axis in ("ABSTAIN", "FALSE_MEMORY"):
            gold, kw["expect"] = "Never stated", "no_memory"
        if i % 23 == 0:
            gold = rng.choice(["I don't know why", "never said anything"])  # golds that read as IDK
        q = Question(id=f"Q{i}", axis=axis, question_en="?", gold_answer=gold, gold_alts=(f"{gold}!",), **kw)
        core = rng.choice([gold, old, a, b, rng.choice(IDK_11), rng.choice(NEAR), f"{a} and later {b}"])
        shape = i % 4
        if shape == 0:
            answer: object = core
        elif shape == 1:
            answer = f"{rng.choice(NEAR)} {core} {rng.choice(IDK_11 + NEAR)}"
        elif shape == 2:
            answer = (FILLER * rng.randint(1, 6)) + core
        else:
            answer = [FILLER, core, rng.choice(NEAR)]  # a memory-only response
        out.append((q, answer))
    return out


def _clear() -> None:
    idk.clear_caches()
    dry.clear_caches()


def test_dry_grades_unchanged_with_the_prefilter_bypassed(monkeypatch):
    pairs = _pairs(3400)
    _clear()
    fast = [score_answer(q, a) for q, a in pairs]
    monkeypatch.setattr(PhraseSet, "search", lambda self, text, words=None: self._search_reference(text))
    _clear()
    plain = [score_answer(q, a) for q, a in pairs]
    monkeypatch.undo()
    _clear()
    assert fast == plain
    rules = {s.rule for s in fast}
    # the set reaches the phrase rules it is meant to check, on all 17 axes
    for rule in (
        "idk-net",
        "abstain:idk",
        "false_memory:denial",
        "contradict:names-disagreement",
        "conflict:corrected",
    ):
        assert rule in rules
    assert {r.split(":")[0] for r in rules} >= {a.lower() for a in AXES if a not in ("ABSTAIN",)} | {"abstain"}


# ---------------------------------------------------------------------------------------------
# The memo of graded pairs


def test_memo_serves_a_repeated_pair_and_is_keyed_by_every_graded_field(monkeypatch):
    _clear()
    q = Question(id="Q1", axis="BASIC", question_en="?", gold_answer="Lyon", gold_alts=("Lyons",))
    calls = []
    real = dry._grade
    monkeypatch.setattr(dry, "_grade", lambda plan, answer: calls.append(answer) or real(plan, answer))
    first = score_answer(q, "She moved to Lyon.")
    assert score_answer(q, "She moved to Lyon.") is first and calls == ["She moved to Lyon."]
    # the same id and text with another gold, axis or expect is another key: graded afresh
    import dataclasses

    other_gold = dataclasses.replace(q, gold_answer="Paris")
    assert score_answer(other_gold, "She moved to Lyon.").score == 0.0
    abstain = dataclasses.replace(q, expect="no_memory")
    assert score_answer(abstain, "She moved to Lyon.").rule == "abstain:went-along"
    published = dataclasses.replace(q, extra={"eval_function": "llm_abstention_checker"})
    assert score_answer(published, "She moved to Lyon.").rule == "false_memory:went-along"
    assert len(calls) == 4
    # a list where a tuple belongs cannot be a key: graded without the memo, not an error
    unhashable = dataclasses.replace(q, gold_alts=["Lyons"])  # type: ignore[arg-type]
    assert score_answer(unhashable, "She moved to Lyon.") == first
    # memories (a list) are not memoised; an over-long answer neither
    score_answer(q, ["She moved to Lyon."])
    score_answer(q, "Lyon " * 2000)
    assert len(dry._MEMO) == 4


def test_memo_is_bounded(monkeypatch):
    _clear()
    monkeypatch.setattr(dry, "_MEMO_MAX", 50)
    monkeypatch.setattr(dry, "_PLANS_MAX", 5)
    qs = [Question(id=f"Q{i}", axis="BASIC", question_en="?", gold_answer=f"v{i}") for i in range(20)]
    for q in qs:
        for k in range(10):
            score_answer(q, f"answer {k}")
    assert len(dry._MEMO) == 50 and len(dry._PLANS) == 5
    assert score_answer(qs[0], "v0").score == 1.0 and score_answer(qs[0], "v1").score == 0.0
    _clear()
