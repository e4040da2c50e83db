"""The life story: planted facts and the questions on them, as lifelog.md "How each axis is planted".

``Story`` places statements (one planted sentence each) in story sessions under each axis' rules,
then ``write`` packs them into user turns (a few statements per turn, with glue) followed by
assistant replies. Questions point at statements; statements learn their turn ``uid`` when written.
"""

from __future__ import annotations

import math

from ...errors import BenchContractError
from .draft import Counter, DQuestion, DSession, DTurn, Statement
from .rng import stream
from .story_base import Hook, KeyedFact, StoryBase

__all__ = ["Story", "KeyedFact", "Hook"]


class Story(StoryBase):
    """The axes (one method each, as lifelog.md plants them) and ``write``."""

    # ------------------------------------------------------------------ axes
    def basic(self, n: int, axis: str = "BASIC") -> None:
        key = "ask" if axis == "BASIC" else "para"
        for _ in range(n):
            kind = self._next_kind()
            for _skip in range(4 * len(self.d["keyed"])):  # a kind whose values ran out gives way
                if self.values.has(self.d["keyed"][kind]["value"]):
                    break
                kind = self._next_kind()
            spec = self.d["keyed"][kind]
            st, value, person, extra, rel = self._keyed(kind, self.rng.randrange(len(self.dates)))
            q = self._ask(
                DQuestion(axis, self._form(spec[key], who=self._ref(person, rel), **extra), value, [st], [st.fact])
            )
            self.hooks.append(Hook(person, None, kind, tuple(extra.items())))
            self.keyed_facts.append(KeyedFact(q, kind, person, value, extra, st))

    def _event(self, session: int) -> tuple[Statement, str, str]:
        ev = self.rng.choice(self.d["events"])
        slots = self._slots(ev["say"], ev["name"], ev["key"])
        return self._say(session, ev["say"].format(**slots)), ev["name"].format(**slots), ev["key"].format(**slots)

    def temporal(self, n: int) -> None:
        for _ in range(n):
            a, b = self._sessions(2)
            first, second = self._event(a), self._event(b)
            shown = [first, second]
            self.rng.shuffle(shown)
            verb = self.rng.choice(["came first", "happened first", "was earlier"])
            self._ask(
                DQuestion(
                    "TEMPORAL",
                    f"Which {verb}: {shown[0][1]} or {shown[1][1]}?",
                    first[1],
                    [first[0], second[0]],
                    [first[0].fact, second[0].fact],
                    fields={"gold_alts": (first[2],)},
                )
            )

    def changing(self, n: int, axis: str) -> None:
        kinds = list(self.d["changing"])
        for _ in range(n):
            kind = self.rng.choice(kinds)
            spec = self.d["changing"][kind]
            person, rel = self._person(), self._rel()
            old, new = self.values.draw(spec["value"]), self.values.draw(spec["value"])
            self.stated[person].add(kind)
            self.hooks.append(Hook(person, None, kind))
            fill = {"P": person, "rel": rel, "O": old, "who": self._ref(person, rel)}
            if axis == "STALE":
                sess = self._sessions(4)
                olds = [spec["old"][0]] + self.rng.sample(spec["old"][1:], 2)
                for s, t in zip(sess, olds):
                    self._say(s, t.format(**fill, V=old), person=person)
                new_st = self._say(sess[3], spec["passing"].format(**fill, V=new), long=True, person=person)
                self._ask(
                    DQuestion(
                        "STALE",
                        self._form(spec["ask_stale"], **fill),
                        new,
                        [new_st],
                        [new_st.fact],
                        fields={"stale_answer": old},
                    )
                )
                continue
            a, b = self._sessions(2)
            self._say(a, spec["old"][0].format(**fill, V=old), person=person)
            if axis == "UPDATE":
                new_st = self._say(b, spec["new"].format(**fill, V=new), person=person)
                self._ask(
                    DQuestion(
                        "UPDATE",
                        self._form(spec["ask"], **fill),
                        new,
                        [new_st],
                        [new_st.fact],
                        fields={"stale_answer": old},
                    )
                )
            else:  # CONFLICT: the question presupposes the old value
                new_st = self._say(b, spec["conflict"].format(**fill, V=new), person=person)
                self._ask(
                    DQuestion(
                        "CONFLICT", self._form(spec["ask_conflict"], **fill), f"no, {new}", [new_st], [new_st.fact]
                    )
                )

    def contradict(self, n: int) -> None:
        kinds = list(self.d["clashing"])
        for _ in range(n):
            kind = self.rng.choice(kinds)
            spec = self.d["clashing"][kind]
            person, rel = self._person(), self._rel()
            self.hooks.append(Hook(person, None, f"clashing.{kind}"))
            v1, v2 = self.values.draw(spec["value"]), self.values.draw(spec["value"])
            a, b = self._sessions(2, min_gap_days=21)
            sa = self._say(a, spec["a"].format(P=person, rel=rel, V=v1), person=person)
            sb = self._say(b, spec["b"].format(P=person, rel=rel, V=v2), person=person)
            self._ask(
                DQuestion(
                    "CONTRADICT",
                    self._form(spec["ask"], who=self._ref(person, rel)),
                    f"{v1} or {v2}: both were said and nothing settles which",
                    [sa, sb],
                    [sa.fact, sb.fact],
                    fields={"clash_a": v1, "clash_b": v2},
                )
            )

    def reconcile(self, n: int) -> None:
        kinds = list(self.d["conditional"])
        for _ in range(n):
            kind = self.rng.choice(kinds)
            spec = self.d["conditional"][kind]
            person, rel = self._person(), self._rel()
            self.hooks.append(Hook(person, None, f"conditional.{kind}"))
            v1, v2 = self.values.draw(spec["value"]), self.values.draw(spec["value"])
            s1, s2 = self._sessions(2)
            if self.rng.random() < 0.5:
                s1, s2 = s2, s1
            sa = self._say(s1, spec["a"].format(P=person, rel=rel, V=v1), person=person)
            sb = self._say(s2, spec["b"].format(P=person, rel=rel, V=v2), person=person)
            gold = f"{v1} {spec['cond_a']}, {v2} {spec['cond_b']}"
            self._ask(
                DQuestion(
                    "RECONCILE",
                    self._form(spec["ask"], who=self._ref(person, rel)),
                    gold,
                    [sa, sb],
                    [sa.fact, sb.fact],
                    fields={"side_a": v1, "side_b": v2},
                )
            )

    def gather(self, n: int) -> None:
        kinds = list(self.d["parts"])
        for _ in range(n):
            kind = self.rng.choice(kinds)
            spec = self.d["parts"][kind]
            person, rel = self._person(), self._rel()
            self.hooks.append(Hook(person, None, f"parts.{kind}"))
            v1, v2 = self.values.draw(spec["value"]), self.values.draw(spec["value"])
            a, b = self._sessions(2)
            sa = self._say(a, spec["a"].format(P=person, rel=rel, V=v1), person=person)
            sb = self._say(b, spec["b"].format(P=person, rel=rel, V=v2), person=person)
            self._ask(
                DQuestion(
                    "GATHER",
                    self._form(spec["ask"], who=self._ref(person, rel)),
                    f"{v1} and {v2}",
                    [sa, sb],
                    [sa.fact, sb.fact],
                    fields={"gold_parts": (v1, v2)},
                )
            )

    def _joined(self, axis: str, n: int, intros: list[dict], rel: str, exclude: set[str]) -> None:
        kinds = [k for k in self.d["keyed"] if k not in exclude]
        for _ in range(n):
            for _try in range(50):
                intro = self.rng.choice(intros)
                slots = self._slots(intro["at"], intro["who"])
                who = intro["who"].format(**slots)
                if who not in self._who_used:
                    break
            self._who_used.add(who)
            a, b = self._sessions(2)
            st_a = self._say(a, intro["at"].format(**slots))
            kind = self.rng.choice(kinds)
            if not self.values.has(self.d["keyed"][kind]["value"]):  # its values ran out: another kind
                kind = self.rng.choice([k for k in kinds if self.values.has(self.d["keyed"][k]["value"])] or [kind])
            spec = self.d["keyed"][kind]
            st_b, value, person, extra, _rel = self._keyed(kind, b, person=slots["P"], rel=rel)
            ask = spec.get("ask_of", spec["ask"])
            if "A" in slots:
                self.hooks.append(Hook(slots["A"], None, kind, tuple(extra.items())))
            elif "course" in slots:
                self.hooks.append(Hook(None, f"the teacher of my {slots['course']} course", kind, tuple(extra.items())))
            elif "proj" in slots:
                self.hooks.append(Hook(None, f"the lead on the {slots['proj']} project", kind, tuple(extra.items())))
            self._ask(DQuestion(axis, self._form(ask, who=who, **extra), value, [st_a, st_b], [st_a.fact, st_b.fact]))

    def multi(self, n: int) -> None:
        self._joined("MULTI", n, self.d["meetings"], "new friend", {"locker"})

    def cross(self, n: int) -> None:
        self._joined("CROSS", n, self.d["work_intro"], "colleague", {"locker", "employer"})

    def implicit(self, n: int) -> None:
        if self._dishes is None:
            self._dishes = list(self.values.v["dish"])
            self.rng.shuffle(self._dishes)
        for i in range(n):
            use_allergy = i % 2 == 0 and self._dishes
            spec = self.d["implicit"]["allergy" if use_allergy else "fear"]
            given = {"dish": self._dishes.pop()} if use_allergy else {}
            asks = spec["ask"] if isinstance(spec["ask"], list) else [spec["ask"]]
            slots = self._slots(spec["a"], spec["b"], *asks, **given)
            a, b = self._sessions(2)
            sa = self._say(a, spec["a"].format(**slots))
            sb = self._say(b, spec["b"].format(**slots))
            self._ask(DQuestion("IMPLICIT", self._form(spec["ask"], **slots), slots["P"], [sa, sb], [sa.fact, sb.fact]))

    def polar_facts(self, n: int) -> None:
        for _ in range(n):
            tmpl = self.rng.choice(self.d["polar"])
            slots = self._slots(tmpl["say"], tmpl["claim"])
            st = self._say(self.rng.randrange(len(self.dates)), tmpl["say"].format(**slots))
            self.polar.append((tmpl["claim"].format(**slots), st))

    def _probe(self, claim: str, kind: str, source: Statement | None, qset: str) -> DQuestion:
        text = self.rng.choice(self.d["fm_questions"]).format(claim=claim)
        fields = {"kind": kind, "false_claim_en": claim}
        if source is not None:
            fields["source_fact"] = source.fact
        need = [source.fact] if source is not None else []
        return self._ask(
            DQuestion("FALSE_MEMORY", text, "", [], need, fields={"expect": "no_memory", **fields}, qset=qset)
        )

    def false_memory(self, swap: int, invert: int, ghost: int, qset: str = "main") -> None:
        """False-memory questions for question set ``qset``; each call uses facts no earlier call used."""
        if self._swap_facts is None:
            self._swap_facts = list(self.keyed_facts)
            self.rng.shuffle(self._swap_facts)
        if swap > len(self._swap_facts):
            raise BenchContractError(
                f"{swap} more swap probes need as many unused BASIC/PARAPHRASE facts, have {len(self._swap_facts)}"
            )
        if invert > len(self.polar) - self._polar_used:
            raise BenchContractError(f"{invert} more invert probes need as many unused polar facts")
        for f in self._swap_facts[:swap]:
            spec = self.d["keyed"][f.kind]
            wrong = self.values.wrong(spec["value"])
            self._probe(spec["claim"].format(P=f.person, X=wrong, **f.extra), "swap", f.statement, qset)
        del self._swap_facts[:swap]
        for claim, st in self.polar[self._polar_used : self._polar_used + invert]:
            self._probe(claim, "invert", st, qset)
        self._polar_used += invert
        for _ in range(ghost):
            tmpl = self.rng.choice(self.d["ghost"])
            slots = self._slots(tmpl)
            self._probe(tmpl.format(**slots), "ghost", None, qset)

    def abstain(self, n: int) -> None:
        kinds = self.d["abstain_kinds"]
        people = [p for p in self.stated if len(self.stated[p]) < len(kinds)]
        self.rng.shuffle(people)
        if n > len(people):
            raise BenchContractError(f"{n} ABSTAIN questions need as many story people, have {len(people)}")
        for person in people[:n]:
            free = [i for i, k in enumerate(kinds) if k not in self.stated[person]]
            i = self.rng.choice(free)
            tmpl = self.d["abstain"][i]
            animal = self.values.pick("animal")
            text = tmpl.format(who=person, animal=animal)
            self.hooks.append(Hook(person, None, kinds[i], (("animal", animal),) if kinds[i] == "pet" else ()))
            self._ask(DQuestion("ABSTAIN", text, "", [], [], fields={"expect": "no_memory"}))

    # ------------------------------------------------------------------ writing the sessions
    def write(self, uid: Counter, user_turns: int, seq: Counter) -> list[DSession]:
        """Pack statements into user turns (about ``user_turns`` in all), each followed by a reply."""
        rng = stream(self.seed, "story-write")
        n = len(self.dates)
        per: list[list[Statement]] = [[] for _ in range(n)]
        for st in self.statements:
            per[st.session].append(st)
        need = []
        for sts in per:
            n_long = sum(st.long for st in sts)
            need.append(max(1, n_long + math.ceil((len(sts) - n_long) / 3)))
        extra = max(0, user_turns - sum(need))
        for _ in range(extra):
            need[rng.randrange(n)] += 1
        out = []
        for i, sts in enumerate(per):
            out.append(DSession(self.dates[i].isoformat(), seq(), 0, self._write_session(rng, uid, sts, need[i])))
        return out

    def _write_session(self, rng, uid: Counter, sts: list[Statement], n_user: int) -> list[DTurn]:
        d = self.d
        longs = [st for st in sts if st.long]
        shorts = [st for st in sts if not st.long]
        rng.shuffle(shorts)
        slots: list[list[Statement]] = [[st] for st in longs]
        plain: list[list[Statement]] = [[] for _ in range(n_user - len(longs))]
        for st in shorts:  # uneven packing (1 to 4 statements a turn) so turn lengths vary
            open_slots = [p for p in plain if len(p) < 4] or plain
            rng.choice(open_slots).append(st)
        slots += plain
        rng.shuffle(slots)
        turns: list[DTurn] = []
        for slot in slots:
            if slot and slot[0].long:
                pad = rng.sample(d["long_padding"], 3)
                text = " ".join([pad[0], slot[0].text, pad[1], pad[2]])
            elif slot:
                opener = rng.choice(d["openers"])
                parts = [opener] if opener else []
                for k, st in enumerate(slot):  # a connector between two things, so it reads as talk
                    parts += ([rng.choice(d["connectors"])] if k else []) + [st.text]
                if rng.random() < 0.2:
                    parts.append(rng.choice(d["glue_user"]))
                text = " ".join(parts)
            else:
                text = rng.choice(d["glue_user"])
            turn = DTurn(uid(), "user", text)
            for st in slot:
                st.uid = turn.uid
            turns.append(turn)
            about = [st.person for st in slot if st.person]
            if about and rng.random() < 0.8:  # the reply engages with someone the turn talked about
                reply = rng.choice(d["engage"]).format(first=rng.choice(about).split(" ")[0])
            else:
                reply = rng.choice(d["replies"]) if rng.random() < 0.7 else rng.choice(self._short_replies)
            turns.append(DTurn(uid(), "assistant", reply))
        return turns
