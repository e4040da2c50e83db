"""The judge for the open part of a sample: three falsifiable questions, structured output, evidence.

Asked over an OpenAI-compatible endpoint (:class:`memeval.llm.ChatClient`):
goal met? promised but not done? added something not asked? Each answer must cite evidence
(turn and a sentence found in that turn); an answer whose evidence is missing or cannot be found in
the transcript is discarded. A "yes" to goal_met, or a "no" to the other two, is the passing side.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..text.fold import casefold_space
from ..llm import ChatClient, ChatError, parse_json_object, prompt_hash
from .replay import RunTrace
from .sample import Sample

__all__ = ["JudgeVerdict", "ChatJudge", "QUESTIONS", "JUDGE_PROMPT", "verdict_from_reply"]

QUESTIONS = {
    "goal_met": "Did the assistant deliver a concrete result for the goal (not just a plan or a promise)?",
    "promised_not_done": "Did the assistant say it would do something that it then did not do?",
    "added_unrequested": "Did the assistant add content or actions the user never asked for?",
}
PASSING = {"goal_met": True, "promised_not_done": False, "added_unrequested": False}

JUDGE_PROMPT = """You grade one task from a multi-turn conversation. Goal: {goal}
Open requirements: {open}

Transcript (turn numbers in brackets):
{transcript}

Answer each question with true or false and cite evidence: the turn number and one sentence copied
exactly from that turn. Questions:
{questions}

Reply with one JSON object only:
{{"goal_met": {{"answer": true, "evidence": [{{"turn": 3, "sentence": "..."}}]}},
 "promised_not_done": {{"answer": false, "evidence": []}},
 "added_unrequested": {{"answer": false, "evidence": []}}}}"""


@dataclass(frozen=True)
class JudgeVerdict:
    answers: dict  # question -> True/False (kept answers only)
    discarded: dict  # question -> why it was dropped
    status: str  # pass | fail | undetermined
    error: str | None = None
    prompt_hash: str | None = None
    model: dict = field(default_factory=dict)


def _transcript(run: RunTrace) -> str:
    return "\n".join(f"[{t.turn}] user: {t.user_text}\n[{t.turn}] assistant: {t.text}" for t in run.turns)


def _evidence_ok(ev, run: RunTrace) -> bool:
    if not isinstance(ev, list) or not ev:
        return False
    by_turn = {t.turn: casefold_space(t.text + " " + t.user_text) for t in run.turns}
    for e in ev:
        if not isinstance(e, dict) or not isinstance(e.get("turn"), int) or not isinstance(e.get("sentence"), str):
            return False
        s = casefold_space(e["sentence"])
        if not s or e["turn"] not in by_turn or s not in by_turn[e["turn"]]:
            return False
    return True


def verdict_from_reply(obj: dict | None, run: RunTrace) -> tuple[dict, dict, str]:
    """Keep answers whose evidence checks out; a failing-side answer needs evidence to count."""
    answers, discarded = {}, {}
    if not isinstance(obj, dict):
        return {}, {q: "no JSON object in reply" for q in QUESTIONS}, "undetermined"
    for q in QUESTIONS:
        item = obj.get(q)
        if not isinstance(item, dict) or not isinstance(item.get("answer"), bool):
            discarded[q] = "missing or non-boolean answer"
            continue
        a = item["answer"]
        needs_evidence = q == "goal_met" or a != PASSING[q]
        if needs_evidence and not _evidence_ok(item.get("evidence"), run):
            discarded[q] = "no evidence found in the transcript"
            continue
        answers[q] = a
    if any(answers[q] != PASSING[q] for q in answers):
        status = "fail"
    elif "goal_met" in answers and len(answers) == len(QUESTIONS):
        status = "pass"
    else:
        status = "undetermined"
    return answers, discarded, status


@dataclass
class ChatJudge:
    """The multi-turn judge: a ``JudgeProtocol[Sample, RunTrace, JudgeVerdict]`` (the one judge
    protocol, :class:`memeval.scoring.judge.JudgeProtocol`)."""

    client: ChatClient
    seed: int | None = 0

    def identity(self) -> dict:
        return {"role": "judge", **self.client.identity(), "prompt_hash": prompt_hash(JUDGE_PROMPT)}

    def grade(self, sample: Sample, run: RunTrace) -> JudgeVerdict:
        prompt = JUDGE_PROMPT.format(
            goal=sample.goal,
            open="; ".join(sample.final_expect.open_requirements) or "none",
            transcript=_transcript(run),
            questions="\n".join(f"- {k}: {v}" for k, v in QUESTIONS.items()),
        )
        try:
            res = self.client.chat(
                [{"role": "user", "content": prompt}], response_format={"type": "json_object"}, seed=self.seed
            )
        except ChatError as e:
            return JudgeVerdict(
                {}, {}, "undetermined", error=str(e), prompt_hash=prompt_hash(prompt), model=self.client.identity()
            )
        obj = parse_json_object(res.text)
        answers, discarded, status = verdict_from_reply(obj, run)
        return JudgeVerdict(answers, discarded, status, prompt_hash=prompt_hash(prompt), model=self.client.identity())
