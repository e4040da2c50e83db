"""Planted failures for the attribution tests: systems that lose a fact at a known place, and a
scripted reader and judge simple enough to grade by hand.

- ``DropsAtIngest(session)``: BM25 that never stores the turns of one session (a write loss);
- ``HidesAtQuery(session)``: BM25 that stores every turn but never returns one of that session (a
  retrieval loss); both list what they store (``memories``).
- ``echo_reader(ignore=..., ceiling=...)``: answers with every memory it is shown (one per line), or
  "It was never mentioned." when none; a memory containing ``ignore`` is skipped whenever other
  memories are shown beside it (distracted: a reader loss); a question containing ``ceiling`` is
  answered "I could not say." whatever it is shown (a reader ceiling).
- ``contains_judge``: ``correct`` when the graded text contains the gold or an accepted alternative
  (case-insensitive), or, for ABSTAIN/FALSE_MEMORY, says "never mentioned"; else ``wrong``.
"""

from __future__ import annotations

import json
import re

from memeval.systems.baselines import BM25


class DropsAtIngest(BM25):
    name = "drops-at-ingest"

    def __init__(self, session: str = "2", k: int = 10) -> None:
        super().__init__(k=k)
        self.dropped = str(session)

    def ingest(self, session) -> None:
        if str(session.session_id) != self.dropped:
            super().ingest(session)


class HidesAtQuery(BM25):
    name = "hides-at-query"

    def __init__(self, session: str = "1", k: int = 10) -> None:
        super().__init__(k=k)
        self.hidden = str(session)

    def query(self, question, asked_at):
        r = super().query(question, asked_at)
        keep = [i for i, t in enumerate(r.turn_ids or ()) if str(self._session_of[t]) != self.hidden]
        return type(r)(tuple(r.memories[i] for i in keep), tuple(r.turn_ids[i] for i in keep))

    def ingest(self, session) -> None:
        super().ingest(session)
        self._session_of = getattr(self, "_session_of", {}) | {t.turn_id: session.session_id for t in session.turns}


def drops_at_ingest(session: str = "2") -> DropsAtIngest:
    return DropsAtIngest(session)


def hides_at_query(session: str = "1") -> HidesAtQuery:
    return HidesAtQuery(session)


def echo_reader(ignore: str | None = None, ceiling: str | None = None):
    def respond(body: dict) -> str:
        prompt = body["messages"][-1]["content"]
        question = prompt.rsplit("Question:", 1)[-1]
        if ceiling and ceiling in question:
            return "I could not say."
        block = prompt.split("Memories:", 1)[-1].rsplit("\n\nQuestion:", 1)[0]
        mems = re.findall(r"^- (.+)$", block, re.M)
        if ignore and len(mems) > 1:
            mems = [m for m in mems if ignore not in m]
        return "\n".join(mems) if mems else "It was never mentioned."

    return respond


def contains_judge(body: dict) -> str:
    prompt = body["messages"][-1]["content"]
    axis = re.search(r"^Axis: (.*)$", prompt, re.M)
    gold = re.search(r"^Gold answer: (.*)$", prompt, re.M)
    alts = re.search(r"^Other accepted answers: (.*)$", prompt, re.M)
    text = re.search(r"<<<\n(.*)\n>>>", prompt, re.S)
    said = (text.group(1) if text else "").lower()
    wanted = [gold.group(1) if gold else ""]
    if alts and alts.group(1) != "none":
        wanted += [a.strip() for a in alts.group(1).split(",")]
    if axis and axis.group(1) in ("ABSTAIN", "FALSE_MEMORY"):
        ok = "never mentioned" in said
    else:
        ok = any(w.strip() and w.strip().lower() in said for w in wanted)
    return json.dumps({"verdict": "correct" if ok else "wrong", "evidence": said[:200] or "(empty)"})
