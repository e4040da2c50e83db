"""Two scripted judges for :class:`~memeval.testing.chat_stub.ScriptedChatServer`, with rules simple
enough to grade by hand (tests and the offline judges notebook use them; they are not graders).

- ``strict``: ``correct`` only when the text, lower-cased and without a final full stop, *is* the gold
  or an accepted alternative; ``partial`` when it says "don't know" or "not sure"; else ``wrong``.
- ``lenient`` (accepts anything plausible): ``wrong`` if it says "don't know"; ``partial`` if it says
  "might"; ``correct`` if it holds a value (a token with a digit, or a capitalised word other than
  I, I'm, It, It's, Yes, No, Maybe, Sorry); else ``wrong``.
- ``mute``: replies without a verdict (every answer ungraded).

``reader_responder`` is a scripted reader for ``answer`` mode: the last word of the first memory
(without punctuation), or "I don't know" when there is none.

Each verdict quotes the whole graded text as its evidence.
"""

from __future__ import annotations

import contextlib
import json
import re
from typing import Callable, Iterator

from .chat_stub import ScriptedChatServer

__all__ = [
    "STUB_JUDGES",
    "judge_responder",
    "strict_verdict",
    "lenient_verdict",
    "reader_responder",
    "stub_endpoints",
]

_NOT_VALUES = frozenset({"I", "I'm", "It", "It's", "Yes", "No", "Maybe", "Sorry"})


def _norm(s: str) -> str:
    return s.strip().lower().rstrip(".").strip()


def strict_verdict(text: str, gold: str, alts: list[str]) -> str:
    """
    >>> strict_verdict("Halstead.", "Halstead", []), strict_verdict("It's Halstead.", "Halstead", [])
    ('correct', 'wrong')
    """
    if _norm(text) and _norm(text) in {_norm(gold), *map(_norm, alts)}:
        return "correct"
    low = text.lower()
    return "partial" if "don't know" in low or "not sure" in low else "wrong"


def lenient_verdict(text: str, gold: str, alts: list[str]) -> str:
    """
    >>> lenient_verdict("It's blue mug.", "x", []), lenient_verdict("It's Garminster.", "x", [])
    ('wrong', 'correct')
    """
    low = text.lower()
    if "don't know" in low:
        return "wrong"
    if "might" in low:
        return "partial"
    tokens = re.findall(r"[\w'’]+", text)
    if any(any(c.isdigit() for c in t) or (t[0].isupper() and t not in _NOT_VALUES) for t in tokens):
        return "correct"
    return "wrong"


def _parse(prompt: str) -> tuple[str, str, list[str]]:
    gold = re.search(r"^Gold answer: (.*)$", prompt, re.M)
    alts = re.search(r"^Other accepted answers: (.*)$", prompt, re.M)
    text = re.search(r"<<<\n(.*)\n>>>", prompt, re.S)
    alt_list = [] if not alts or alts.group(1) == "none" else [a.strip() for a in alts.group(1).split(",")]
    return (text.group(1) if text else ""), (gold.group(1) if gold else ""), alt_list


def judge_responder(kind: str) -> Callable[[dict], str]:
    """The responder of the ``strict``, ``lenient`` or ``mute`` stub judge."""
    rule = {"strict": strict_verdict, "lenient": lenient_verdict, "mute": None}[kind]

    def respond(body: dict) -> str:
        prompt = body["messages"][-1]["content"]
        text, gold, alts = _parse(prompt)
        if rule is None:
            return "Looks fine to me."
        return json.dumps({"verdict": rule(text, gold, alts), "evidence": text or "(empty)"})

    return respond


STUB_JUDGES: tuple[str, ...] = ("strict", "lenient")


def reader_responder(body: dict) -> str:
    """
    >>> reader_responder({"messages": [{"content": "Memories:\\n- Ingrid lives in Halstead.\\n\\nQuestion: ?"}]})
    'Halstead'
    """
    prompt = body["messages"][-1]["content"]
    first = re.search(r"^- (.+)$", prompt.split("Memories:", 1)[-1], re.M)
    words = re.findall(r"[\w'’-]+", first.group(1)) if first else []
    return words[-1] if words else "I don't know"


@contextlib.contextmanager
def stub_endpoints() -> Iterator[dict[str, tuple[str, str]]]:
    """The scripted ``strict`` and ``lenient`` judges and the scripted ``reader`` on loopback, as
    ``{role: (base URL, model)}`` (what the judges notebook uses when no judge is given)."""
    with (
        ScriptedChatServer(judge_responder("strict")) as s,
        ScriptedChatServer(judge_responder("lenient")) as l,
        ScriptedChatServer(reader_responder) as r,
    ):
        yield {
            "strict": (s.base_url, "strict-stub"),
            "lenient": (l.base_url, "lenient-stub"),
            "reader": (r.base_url, "reader-stub"),
        }
