r"""LongMemEval-V2's official answer check (``evaluation/qa_eval_metrics.py`` and ``harness.py`` of
xiaowu0162/LongMemEval-V2), reimplemented to give the same verdict on every input.

A question carries ``eval_function``: ``"name|key=value|..."``. The reader's answer is the content of
its *last* ``\boxed{...}`` (braces nested; the whole reply where there is none, or where the box is
empty); an answer of ``UNKNOWN`` (any case) is always wrong. The four deterministic functions grade
that extracted answer; the two LLM rubrics (``llm_abstention_checker``, ``llm_gotchas_checker``)
grade the full reply, shown beside the extracted answer, with the published prompts (format facts,
kept verbatim in ``prompts/lme_v2_*.md``).

The published quirks are kept, deliberately:

* ``normalize_phrase``: lower-case, ``-``/``_`` → space, ``,``/``;`` → space, drop every character that
  is neither a word character nor whitespace, squeeze spaces;
* ``norm_phrase_set_match``: every gold phrase (split on ``,`` and ``;``) must occur as a whole-word
  match, in any order; ``..._ordered`` searches each phrase after the previous match, in the
  remaining text (so ``\b`` holds at the cut);
* ``mc_choice_match``: a ``\boxed{}`` in the prediction is read *lower-cased* and unnested, the words
  "choice"/"option" and the ``strip_chars`` are removed, then compared upper-cased;
* ``mc_choice_set_match``: every run of ASCII capitals (after upper-casing) that is not a filler word
  (ANSWER, OPTION, ...) counts letter by letter; sets compared;
* option values: ``true``/``false`` → bool, ``none``/``null`` → None, ``separators`` → its
  non-space characters (or a JSON list), a value holding ``.`` → float, else int, else the string;
  an option a function does not take is an error (the published code raises TypeError).

>>> extract_boxed(r"so \boxed{B} ... final \boxed{\text{A}}")
'\\text{A}'
>>> grade("norm_phrase_set_match", "Invoice and Hold", "Hold; invoice")
True
>>> grade("mc_choice_set_match", "Options A and C", "C, A")
True
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any, Callable, Mapping

from ..bench.model import Question
from ..bench.loaders.longmemeval_v2 import EVAL_FUNCTIONS, EvalSpecError, parse_spec
from ..llm import ChatClient, ChatError, prompt_hash

__all__ = [
    "FUNCTIONS",
    "LLM_FUNCTIONS",
    "METRIC",
    "EvalSpecError",
    "parse_spec",
    "grade",
    "extract_boxed",
    "is_unknown",
    "normalize_phrase",
    "is_lme_v2",
    "official_score",
    "LmeV2Judge",
    "parse_judgement",
    "judge_messages",
    "JUDGE_PROMPTS",
    "CATEGORY",
    "CONTEXT_MAX_TOKENS",
    "READER_MAX_TOKENS",
    "reader_prompt",
    "reader_messages",
    "official_reader_rules",
]

METRIC = "longmemeval-v2"
LLM_FUNCTIONS = EVAL_FUNCTIONS[4:]  # ("llm_abstention_checker", "llm_gotchas_checker")
#: question_type → the category the published aggregate reports
CATEGORY: Mapping[str, str] = {
    "static-environment": "static",
    "static-environment-abs": "static-abs",
    "dynamic-environment": "dynamic",
    "dynamic-environment-abs": "dynamic-abs",
    "procedure": "procedure",
    "procedure-abs": "procedure-abs",
    "errors-gotchas": "gotchas",
}
#: eval function → its rubric's prompt files (system, user), in ``prompts/``
JUDGE_PROMPTS: Mapping[str, tuple[str, str]] = {
    "llm_abstention_checker": ("lme_v2_abstention_system_v1", "lme_v2_abstention_user_v1"),
    "llm_gotchas_checker": ("lme_v2_gotchas_system_v1", "lme_v2_gotchas_user_v1"),
}


_PUNCT = re.compile(r"[^\w\s]")
_SEPS = re.compile(r"[,;]")
_SPACE = re.compile(r"\s+")


def _text(v: Any) -> str:
    return "" if v is None else v if isinstance(v, str) else str(v)


def normalize_phrase(text: Any, *, lower: Any = True, normalize_hyphen: Any = True, strip_punct: Any = True) -> str:
    """The published normalisation (see the module docstring).

    >>> normalize_phrase("Re-Order: Blue_Kettle, now!")
    're order blue kettle now'
    """
    s = _text(text)
    if lower:
        s = s.lower()
    if normalize_hyphen:
        s = s.replace("-", " ").replace("_", " ")
    s = _SEPS.sub(" ", s)
    if strip_punct:
        s = _PUNCT.sub("", s)
    return _SPACE.sub(" ", s).strip()


_NORM_KEYS = frozenset({"lower", "normalize_hyphen", "strip_punct"})


def _norm_kw(kw: dict) -> dict:
    bad = set(kw) - _NORM_KEYS
    if bad:
        raise EvalSpecError(f"unexpected option {sorted(bad)[0]!r}")
    return kw


def _phrases(text: Any, separators, kw: dict) -> list[str]:
    if text is None:
        return []
    seps = list(separators)
    if not seps:
        one = normalize_phrase(text, **kw)
        return [one] if one else []
    pieces = re.split("|".join(re.escape(x) for x in seps), _text(text))
    return [p for p in (normalize_phrase(x, **kw) for x in pieces) if p]


def _word(phrase: str) -> re.Pattern:
    return re.compile(r"\b" + re.escape(phrase) + r"\b")


def _phrase_set(pred, gold, *, separators=(",", ";"), require_non_empty=True, **kw) -> bool:
    kw = _norm_kw(kw)
    p = normalize_phrase(pred, **kw)
    phrases = _phrases(gold, separators, kw)
    if require_non_empty and (not p or not phrases):
        return False
    return all(_word(x).search(p) for x in set(phrases))


def _phrase_seq(pred, gold, *, separators=(",", ";"), require_non_empty=True, **kw) -> bool:
    kw = _norm_kw(kw)
    p = normalize_phrase(pred, **kw)
    phrases = _phrases(gold, separators, kw)
    if require_non_empty and (not p or not phrases):
        return False
    at = 0
    for x in phrases:
        m = _word(x).search(p[at:])
        if m is None:
            return False
        at += m.end()
    return True


_BOX_FLAT = re.compile(r"\\boxed\{([^}]*)\}")
_CHOICE_WORD = re.compile(r"\b(choice|option)\b", re.IGNORECASE)


def _mc_one(pred, gold, *, strip_chars=".", require_non_empty=True, **_ignored) -> bool:
    if pred is None or gold is None:
        return False
    pred, gold = _text(pred), _text(gold)
    m = _BOX_FLAT.search(pred.lower())
    cand = m.group(1) if m else pred
    cand = _CHOICE_WORD.sub("", cand)
    try:
        for ch in strip_chars:
            cand = cand.replace(ch, "")
    except TypeError:
        raise EvalSpecError(f"strip_chars must be text, got {strip_chars!r}") from None
    got, want = cand.strip().upper(), gold.strip().upper()
    if require_non_empty and (not got or not want):
        return False
    return got == want


_FILLER = frozenset(
    {"AND", "ANSWER", "ANSWERS", "CHOICE", "CHOICES", "FINAL", "LETTER", "LETTERS", "OPTION", "OPTIONS"}
)
_CAPS = re.compile(r"[A-Z]+")


def _letters(text: Any) -> list[str]:
    if text is None:
        return []
    return [ch for run in _CAPS.findall(_text(text).upper()) if run not in _FILLER for ch in run]


def _mc_set(pred, gold, *, require_non_empty=True, **_ignored) -> bool:
    a, b = _letters(pred), _letters(gold)
    if require_non_empty and (not a or not b):
        return False
    return set(a) == set(b)


#: the deterministic functions by their published names
FUNCTIONS: Mapping[str, Callable[..., bool]] = {
    "norm_phrase_set_match": _phrase_set,
    "norm_phrase_set_match_ordered": _phrase_seq,
    "mc_choice_match": _mc_one,
    "mc_choice_set_match": _mc_set,
}


def grade(spec: str, prediction: Any, gold: Any) -> bool:
    """A deterministic function's verdict on ``prediction`` (already extracted from its box);
    :class:`EvalSpecError` for a bad spec or an LLM function (see :class:`LmeV2Judge`)."""
    name, opts = parse_spec(spec)
    if name in LLM_FUNCTIONS:
        raise EvalSpecError(f"{name} needs a judge model")
    try:
        return bool(FUNCTIONS[name](prediction, gold, **opts))
    except TypeError as e:  # an option value of the wrong kind (e.g. separators=1)
        raise EvalSpecError(f"{name}: {e}") from None
    except re.error as e:
        raise EvalSpecError(f"{name}: {e}") from None


def extract_boxed(text: str) -> str:
    r"""The content of the last ``\boxed{`` (nested braces kept), stripped; the stripped text where
    there is no box or the box is empty; an unclosed box runs to the end.

    >>> extract_boxed("no box "), extract_boxed(r"\boxed{}x"), extract_boxed(r"\boxed{a{b}c")
    ('no box', '\\boxed{}x', 'a{b}c')
    """
    at = text.rfind("\\boxed{")
    if at < 0:
        return text.strip()
    depth, out = 1, []
    for ch in text[at + 7 :]:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                break
        out.append(ch)
    got = "".join(out).strip()
    return got or text.strip()


def is_unknown(answer: str) -> bool:
    """The published UNKNOWN rule: the extracted answer, stripped, is ``unknown`` in any case."""
    return answer.strip().lower() == "unknown"


def is_lme_v2(q: Question) -> bool:
    """Whether ``q`` was imported from LongMemEval-V2 (it carries its published eval function)."""
    return bool(q.extra.get("lme_v2")) and isinstance(q.extra.get("eval_function"), str)


# ---- the LLM rubrics ----------------------------------------------------------------------------


def _prompt(name: str) -> str:
    return resources.files("memeval.scoring").joinpath(f"prompts/{name}.md").read_text(encoding="utf-8")


def _strip(v: Any) -> str:
    return "" if v is None else (v if isinstance(v, str) else str(v)).strip()


def judge_messages(function: str, question: str, gold: str, response: str, final: str) -> list[dict]:
    """The published system + user messages of one rubric (the prompt files hold them verbatim)."""
    system, user = (_prompt(n) for n in JUDGE_PROMPTS[function])
    values = {
        "question": question,
        "reference_answer": gold,
        "model_full_response": response,
        "model_final_answer": final,
    }
    body = _SLOT.sub(lambda m: values[m.group(1)], user)  # one pass: bench text is never read as a slot
    return [{"role": "system", "content": system.rstrip("\n")}, {"role": "user", "content": body.rstrip("\n")}]


_SLOT = re.compile(r"\{(question|reference_answer|model_full_response|model_final_answer)\}")
_FENCE = re.compile(r"\{.*\}", re.S)


def parse_judgement(text: str) -> int | None:
    """The judge's 0/1 label as the published parser reads it (a fenced block unwrapped, the first
    ``{...}`` span as JSON, then ``"label": d`` patterns); None where it finds none (the published
    harness stops there; memeval leaves the question ungraded).

    >>> parse_judgement('```json\\n{"label": 1, "reason": "ok"}\\n```'), parse_judgement("label = 0"), parse_judgement("yes")
    (1, 0, None)
    """
    s = _strip(text)
    if s.startswith("```") and s.endswith("```"):
        lines = s.splitlines()
        if len(lines) >= 3:
            s = "\n".join(lines[1:-1]).strip()
    if not s:
        return None
    m = _FENCE.search(s)
    if m:
        try:
            obj = json.loads(m.group(0))
        except ValueError:
            obj = None
        if isinstance(obj, dict) and obj.get("label") in (0, 1, "0", "1"):
            return int(obj["label"])
    for pat in (r'"label"\s*:\s*([01])', r"'label'\s*:\s*([01])", r"\blabel\b\s*[:=]\s*([01])"):
        m2 = re.search(pat, s, re.IGNORECASE)
        if m2:
            return int(m2.group(1))
    return None


@dataclass(frozen=True)
class Official:
    """One question's official result: ``score`` 1.0/0.0 (None: ungraded, ``reason`` says why)."""

    score: float | None
    extracted: str
    unknown: bool
    function: str
    reason: str | None = None
    judge_reply: str | None = None


class LmeV2Judge:
    """The two rubrics over an OpenAI-compatible client (the leaderboard's judge: ``gpt-5.2``, 4,096
    completion tokens); ``identity`` names prompt hashes and model."""

    MAX_TOKENS = 4096

    def __init__(self, client: ChatClient):
        self.client = client

    def identity(self, function: str) -> str:
        text = "".join(_prompt(n) for n in JUDGE_PROMPTS[function])
        return f"{METRIC}:{function}:{prompt_hash(text)}@{self.client.model}"

    def label(self, function: str, q: Question, response: str, final: str) -> tuple[int | None, str | None, str | None]:
        """(label, reply, reason when unlabelled)."""
        msgs = judge_messages(function, _strip(q.text_to_ask), _strip(q.gold_answer), response, final)
        try:
            reply = self.client.chat(msgs, max_tokens=self.MAX_TOKENS).text
        except ChatError as e:
            return None, None, f"judge failed: {e}"
        got = parse_judgement(reply)
        if got is None:
            return None, reply[:2000], "judge reply has no 0/1 label"
        return got, reply[:2000], None


def official_score(q: Question, response: str | None, judge: LmeV2Judge | None = None) -> Official:
    """The published verdict on a reader's full ``response`` (see the module docstring): the
    deterministic function on the extracted answer, or the rubric on the whole reply; UNKNOWN wrong.
    An empty response scores 0, as the harness scores a failed reader request."""
    spec = str(q.extra.get("eval_function", ""))
    name, _ = parse_spec(spec)
    raw = response or ""
    extracted = extract_boxed(raw)
    unknown = is_unknown(extracted)
    if name in LLM_FUNCTIONS:
        pred, final = _strip(raw), _strip(extracted) or _strip(raw)
        if not pred or not _strip(q.gold_answer) or not final:
            return Official(0.0, extracted, unknown, name)
        if judge is None:
            return Official(None, extracted, unknown, name, f"{name} needs a judge model")
        label, reply, reason = judge.label(name, q, pred, final)
        if label is None:
            return Official(None, extracted, unknown, name, reason, reply)
        ok = label == 1 and not unknown
        return Official(1.0 if ok else 0.0, extracted, unknown, name, None, reply)
    ok = grade(spec, extracted, q.gold_answer) and not unknown
    return Official(1.0 if ok else 0.0, extracted, unknown, name)


# ---- the reader ---------------------------------------------------------------------------------

#: the leaderboard's reader limits (``harness.py`` defaults): memory context and completion tokens
CONTEXT_MAX_TOKENS = 200_000
READER_MAX_TOKENS = 20_000
#: images one question's reader may be shown (the harness bounds them only by the context cap)
READER_MAX_IMAGES = 512
#: the leaderboard's rules (``leaderboard/submission_utils.py``): model names must contain these
LEADERBOARD_READER = "qwen3.5-9b"
LEADERBOARD_JUDGE = "gpt-5.2"


def reader_prompt(domain: str) -> str:
    """The published system prompt of a domain (``web``/``enterprise``), verbatim: it holds a
    backspace character where the source wrote ``\\boxed`` without escaping the backslash."""
    if domain not in ("web", "enterprise"):
        raise EvalSpecError(f"unknown domain {domain!r}")
    return _prompt(f"lme_v2_reader_{domain}_v1").removesuffix("\n")


def reader_messages(
    q: Question, memories, urls: tuple[str, ...] = (), marks=None, question_image: str | None = None
) -> list[dict]:
    """The published message layout: the domain's system prompt; one user message of content parts
    ``### Memory context:`` (``(empty)`` when none), each memory as a text part followed by its image
    (``urls``/``marks`` as ``reader_images`` gives them), the question block, the question's image."""
    intro = "### Memory context:\n" + ("" if memories else "(empty)")
    parts: list[dict] = [{"type": "text", "text": intro}]
    marks = marks or (None,) * len(memories)
    for m, mark in zip(memories, marks):
        parts.append({"type": "text", "text": str(m)})
        if mark:
            parts.append({"type": "image_url", "image_url": {"url": urls[int(mark.strip("[]").split()[1]) - 1]}})
    parts.append({"type": "text", "text": f"\n\n### Question to answer:\n{q.text_to_ask}"})
    if question_image:
        parts.append({"type": "image_url", "image_url": {"url": question_image}})
    domain = str(q.extra.get("domain", "web"))
    return [{"role": "system", "content": reader_prompt(domain)}, {"role": "user", "content": parts}]


def official_reader_rules(reader: Mapping[str, Any] | None, judge: Mapping[str, Any] | None) -> list[str]:
    """Why a run's reader/judge identities do not match the leaderboard's rules (empty: they do)."""
    why = []
    rmodel = str((reader or {}).get("model") or "").lower()
    jmodel = str((judge or {}).get("model") or "").lower()
    if LEADERBOARD_READER not in rmodel:
        why.append(f"reader model {rmodel or 'none'!r} is not {LEADERBOARD_READER}")
    if LEADERBOARD_JUDGE not in jmodel:
        why.append(f"judge model {jmodel or 'none'!r} is not {LEADERBOARD_JUDGE}")
    if reader and not reader.get("images"):
        why.append("the reader was not shown images (--reader-images)")
    return why
