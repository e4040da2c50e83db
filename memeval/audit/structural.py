"""The audit's structural checks: evidence resolves and holds the gold, reconcile sides apart,
contradictions unresolved, stories identical across tiers, tiers nested (``memeval.audit`` lists them)."""

from __future__ import annotations

from ..bench.model import Question, Turn
from .haystack import Haystack, turn_text
from .loading import TierData, turn_key
from .report import short
from .state import AuditState

__all__ = ["Structure", "EXEMPT_GOLD"]

EXEMPT_GOLD = frozenset({"ABSTAIN", "FALSE_MEMORY"})


class Structure(AuditState):
    """Structural checks, mixed into the audit run (``memeval.audit._Audit``)."""

    def resolve(self, tier: str, data: TierData, q: Question, h: Haystack | None) -> list[Turn] | None:
        """The evidence turns (empty if none are given), or None when they do not resolve."""
        check = "evidence-resolves"
        if h is None:
            if q.haystack is not None:
                self.fail(check, tier, q.id, f"haystack {q.haystack!r} has no turns in this tier")
            else:
                self.fail(
                    check, tier, q.id, f"question has no haystack id but the tier has {len(data.haystacks)} haystacks"
                )
            return None
        self.add(check, "evidence_turns", len(q.evidence_turns))
        missing = [i for i in q.evidence_turns if i not in h.pos]
        if missing:
            self.fail(
                check,
                tier,
                q.id,
                f"evidence turns {missing} not in the tier's turns"
                + (f" (haystack {h.hid!r})" if h.hid is not None else "")
                + (f", which end at turn {h.turns[-1].turn_id}" if h.turns else ""),
            )
        missing_s = [s for s in q.evidence_sessions if str(s) not in h.sessions]
        if missing_s:
            self.fail(check, tier, q.id, f"evidence sessions {missing_s} not in the tier's turns")
        if q.evidence_sessions:
            cited = {str(s) for s in q.evidence_sessions}
            for tid in q.evidence_turns:
                if tid in h.pos:
                    key = h.turns[h.pos[tid]].session_key(self.session_field)
                    if str(key) not in cited:
                        self.fail(
                            check,
                            tier,
                            q.id,
                            f"evidence turn {tid} is in {self.session_field} {key}, "
                            f"not in evidence_sessions {list(q.evidence_sessions)}",
                        )
                        break
        answerable = q.scored_as not in EXEMPT_GOLD
        if answerable and not q.evidence_turns and q.extra.get("has_gold") is False:
            # the book suite's cases without gold facts: expected, not a fault of the import
            self.add(check, "no_gold_expected")
            self.notes[check] = (
                f"{self.numbers[check]['no_gold_expected']} cases without gold facts have no "
                "evidence turns: expected for this suite (the chapter ships gold facts for only "
                "some cases; they are graded by the judge, not by keyword recall)"
            )
        elif answerable and not q.evidence_turns and q.extra.get("evidence_published") is False:
            # LongMemEval-V2 publishes no evidence annotation: expected, not a fault of the import
            self.add(check, "no_evidence_published")
            self.notes[check] = (
                f"{self.numbers[check]['no_evidence_published']} questions have no evidence turns: the "
                "bench publishes no evidence annotation (retrieval metrics and the oracle's evidence are empty)"
            )
        elif answerable and not q.evidence_turns:
            self.fail(check, tier, q.id, f"{q.axis} question has no evidence turns")
        return h.evidence(q.evidence_turns)

    @staticmethod
    def image_only(q: Question, ev: list[Turn]) -> bool:
        return q.axis == "IMAGE" and any(t.image and not t.caption for t in ev)

    def check_gold(self, tier: str, q: Question, ev: list[Turn]) -> None:
        check = "evidence-contains-gold"
        if q.scored_as in EXEMPT_GOLD:
            self.add(check, "exempt")
            return
        if not ev:
            return  # no evidence given: reported by evidence-resolves
        text = "\n".join(turn_text(t) for t in ev)
        ids = list(q.evidence_turns)
        c = self.contains
        golds = [g for g in (q.gold_answer, *q.gold_alts) if g.strip()]
        if q.axis == "CONTRADICT":
            clashes = [v for v in (q.clash_a, q.clash_b) if v]
            missing = [v for v in clashes if not c(text, v)]
            self.add(check, "checked")
            if missing:
                self.fail(check, tier, q.id, f"clash value {short(missing[0])} not in evidence turns {ids}")
            return
        self.add(check, "checked")
        if q.axis == "GATHER" and q.gold_parts:
            missing = [p for p in q.gold_parts if not c(text, p)]
            if missing:
                self.fail(check, tier, q.id, f"gold part {short(missing[0])} not in evidence turns {ids}")
            return
        if any(c(text, g) for g in golds):
            return
        if q.axis == "RECONCILE" and q.side_a and q.side_b and c(text, q.side_a) and c(text, q.side_b):
            return
        if q.axis == "CONFLICT" and any(c(text, self.latest_value(g)) for g in golds):
            return  # "No, <current>": the evidence holds the current value
        if self.image_only(q, ev):
            self.add(check, "image_only")
            return
        if not golds:
            self.fail(check, tier, q.id, "question has no gold answer")
        else:
            self.fail(check, tier, q.id, f"gold {short(q.gold_answer or golds[0])} not in evidence turns {ids}")

    def check_reconcile(self, tier: str, q: Question, h: Haystack) -> None:
        check = "reconcile-not-in-one-turn"
        self.add(check, "pairs")
        side_a, side_b = q.side_a or "", q.side_b or ""  # both set: the caller checks
        cand_a = set(h.candidates(side_a))
        both = [p for p in h.candidates(side_b) if p in cand_a]
        for p in both:
            t = h.turns[p]
            txt = turn_text(t)
            if self.contains(txt, side_a) and self.contains(txt, side_b):
                self.fail(
                    check,
                    tier,
                    q.id,
                    f"turn {t.turn_id} holds both sides {short(side_a, 40)} and {short(side_b, 40)}",
                )

    def check_contradict(self, tier: str, q: Question, h: Haystack, ev: list[Turn]) -> None:
        check = "contradict-unresolved"
        self.add(check, "pairs")
        after = max(h.pos[t.turn_id] for t in ev) + 1
        later = h.turns[after - 1].turn_id
        hits: dict[int, str] = {}
        for v in (q.clash_a, q.clash_b):
            if not v:
                continue
            for p in h.candidates(v, after):
                if p >= after and p not in hits and self.contains(turn_text(h.turns[p]), v):
                    hits[p] = v
        for p in sorted(hits):
            self.fail(
                check,
                tier,
                q.id,
                f"turn {h.turns[p].turn_id} mentions clash value {short(hits[p], 40)} "
                f"after the later clash turn {later}",
            )

    def story_identical(self, tier: str, q: Question, ev: list[Turn] | None, qset: str = "main") -> None:
        check = "story-identical"
        texts = tuple(t.text for t in ev) if ev is not None else None
        key = qset + "\x00" + (q.haystack or "") + "\x00" + q.id
        first = self.first_seen.get(key)
        if first is None:
            self.first_seen[key] = (tier, texts, q.axis, q.gold_answer)
            return
        self.add(check, "shared_questions")
        t0, texts0, axis0, gold0 = first
        if axis0 != q.axis or gold0 != q.gold_answer:
            self.fail(
                check,
                tier,
                q.id,
                f"axis/gold {q.axis} {short(q.gold_answer, 40)} differ from tier {t0} ({axis0} {short(gold0, 40)})",
            )
        elif texts is not None and texts0 is not None and texts != texts0:
            diff = next((i for i, (a, b) in enumerate(zip(texts, texts0)) if a != b), min(len(texts), len(texts0)))
            which = f"turn {q.evidence_turns[diff]}" if diff < len(q.evidence_turns) else "the evidence list"
            self.fail(check, tier, q.id, f"evidence {which} text differs from tier {t0}")

    # -- two tiers
    def check_nested(self, lower: TierData, upper: TierData) -> None:
        check = "tiers-nested"
        lo, up = lower.tier.name, upper.tier.name
        self.numbers[check].setdefault("pairs", []).append(f"{lo}<{up}")
        for hid, lh in lower.haystacks.items():
            uh = upper.haystacks.get(hid)
            if uh is None:
                if hid is None:
                    self.fail(check, up, None, f"tier {lo}'s turns are not in {up} (it has no tier-wide haystack)")
                continue  # a per-question haystack only in the lower tier: nothing to compare
            self.add(check, "turns_compared", len(lh.turns))
            hay = f" haystack {hid!r}" if hid is not None else ""
            ukeys = set(map(turn_key, uh.turns))
            present = []
            for t in lh.turns:
                if turn_key(t) in ukeys:
                    present.append(t)
                else:
                    self.fail(
                        check,
                        up,
                        None,
                        f"{lo}{hay} turn {t.turn_id} (session {t.session_id}, {t.date}) "
                        f"has no turn with the same text, speaker and date in {up}",
                    )
            j, uturns = 0, uh.turns
            for t in present:
                k = turn_key(t)
                while j < len(uturns) and turn_key(uturns[j]) != k:
                    j += 1
                if j == len(uturns):
                    self.fail(
                        check, up, None, f"{lo}{hay} turns from turn {t.turn_id} on are not in the same order in {up}"
                    )
                    break
                j += 1
