"""A tiny LongMemEval-V2 data folder in the published format (``xiaowu0162/LongMemEval-V2``,
``data/public_data.py``), for the loader, scorer, export and LAFS tests and the BENCHMARKS section.

``make_fixture(root)`` writes::

    questions.jsonl                    one row per question: every question_type and eval_function
    trajectories.jsonl                 5 trajectories (3 web, 2 enterprise) with states
    haystacks/lme_v2_small.json        {question_id: [trajectory ids]}: one ordered haystack per domain
    haystacks/lme_v2_medium.json       per-question haystacks (some shared, some reordered)
    screenshots/<trajectory>/<n>.png   one small PNG per state
    question_images/<qid>.png          the screenshot a question shows
    checksums.sha256                   sha256sum lines over every file above

Run as a script to write it into a folder: ``python tests/lme_v2_fixture.py OUT``.
"""

from __future__ import annotations

import hashlib
import json
import struct
import sys
import zlib
from pathlib import Path

__all__ = ["make_fixture", "png_bytes", "QUESTIONS", "TRAJECTORIES", "SMALL", "MEDIUM"]


def png_bytes(seed: int, size: int = 4) -> bytes:
    """A valid ``size``×``size`` RGB PNG whose colour depends on ``seed`` (no third-party encoder)."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    rgb = bytes(((seed * 53) % 256, (seed * 97) % 256, (seed * 31) % 256))
    raw = b"".join(b"\x00" + rgb * size for _ in range(size))
    ihdr = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def _state(tid: str, i: int, url: str, action: str | None, thought: str | None, tree: str) -> dict:
    return {
        "state_index": i,
        "url": url,
        "action": action,
        "thought": thought,
        "accessibility_tree": tree,
        "screenshot": f"screenshots/{tid}/{i}.png",
    }


def _traj(tid: str, domain: str, env: str, goal: str, url: str, outcome: str, states: list[tuple]) -> dict:
    return {
        "id": tid,
        "domain": domain,
        "environment": env,
        "goal": goal,
        "start_url": url,
        "outcome": outcome,
        "states": [_state(tid, i, *s) for i, s in enumerate(states)],
    }


TRAJECTORIES: list[dict] = [
    _traj(
        "web_shop_001",
        "web",
        "shopping",
        "Find the price of the blue kettle",
        "http://shop.local/",
        "success",
        [
            ("http://shop.local/", "click [12] Kitchen", "The kettle is under Kitchen.", "[12] link 'Kitchen'"),
            (
                "http://shop.local/kitchen",
                "click [40] Blue Kettle",
                "Open the product page.",
                "[40] link 'Blue Kettle' [41] StaticText '$29.99'",
            ),
            ("http://shop.local/p/blue-kettle", None, "The price is $29.99.", "heading 'Blue Kettle' price $29.99"),
        ],
    ),
    _traj(
        "web_admin_002",
        "web",
        "shopping_admin",
        "Change the order status of order 000123 to complete",
        "http://admin.local/",
        "failure",
        [
            ("http://admin.local/", "click [5] Sales", "Orders live under Sales.", "[5] menuitem 'Sales'"),
            (
                "http://admin.local/sales/order",
                "click [77] Invoice",
                "An invoice must exist before shipping; the Ship button is hidden until then.",
                "[77] button 'Invoice' [78] button 'Hold'",
            ),
        ],
    ),
    _traj(
        "web_forum_003",
        "web",
        "reddit",
        "Post a reply in the gardening forum",
        "http://forum.local/f/gardening",
        "success",
        [
            ("http://forum.local/f/gardening", "click [9] Reply", "Reply is under each post.", "[9] link 'Reply'"),
            ("http://forum.local/f/gardening/1", "type [3] 'Nice tomatoes'", None, "[3] textbox 'Comment'"),
        ],
    ),
    _traj(
        "ent_incident_004",
        "enterprise",
        "servicenow",
        "Create an incident with priority 2",
        "https://sn.local/now/nav/ui/classic",
        "success",
        [
            (
                "https://sn.local/incident.do",
                "fill [20] Impact=2",
                "Priority is derived from impact and urgency.",
                "combobox 'Impact'",
            ),
            (
                "https://sn.local/incident.do",
                "fill [21] Urgency=2",
                "Priority now shows 3 - Moderate.",
                "combobox 'Urgency'",
            ),
            ("https://sn.local/incident_list.do", "click [30] Submit", "Submitted.", "button 'Submit'"),
        ],
    ),
    _traj(
        "ent_catalog_005",
        "enterprise",
        "servicenow",
        "Order a laptop from the service catalog",
        "https://sn.local/sp",
        "success",
        [
            ("https://sn.local/sp?id=sc_home", "click [4] Hardware", "Hardware category first.", "link 'Hardware'"),
            ("https://sn.local/sp?id=sc_cat_item", "click [8] Order Now", "Then Order Now.", "button 'Order Now'"),
        ],
    ),
]


def _q(qid: str, domain: str, qtype: str, question: str, answer: str, spec: str, image: str | None = None) -> dict:
    env = "servicenow" if domain == "enterprise" else "shopping"
    return {
        "id": qid,
        "domain": domain,
        "environment": env,
        "question_type": qtype,
        "question": question,
        "image": image,
        "answer": answer,
        "eval_function": spec,
    }


QUESTIONS: list[dict] = [
    _q(
        "w_static_1",
        "web",
        "static-environment",
        "What is the price of the blue kettle?",
        "$29.99",
        "norm_phrase_set_match",
    ),
    _q(
        "w_static_abs_1",
        "web",
        "static-environment-abs",
        "What is the price of the red kettle on the Kitchen page?",
        "There is no red kettle; only a blue kettle is listed.",
        "llm_abstention_checker",
    ),
    _q(
        "w_dyn_1",
        "web",
        "dynamic-environment",
        "Which buttons appear on the order page, in order?",
        "Invoice; Hold",
        "norm_phrase_set_match_ordered|separators=;",
        image="question_images/w_dyn_1.png",
    ),
    _q(
        "w_dyn_abs_1",
        "web",
        "dynamic-environment-abs",
        "After order 000123 was shipped, what was its tracking number?",
        "The order was never shipped; no tracking number exists.",
        "llm_abstention_checker",
    ),
    _q(
        "w_proc_1",
        "web",
        "procedure",
        "To reply in the gardening forum, what do you click first? (A) Reply (B) Submit (C) Vote",
        "A",
        "mc_choice_match",
    ),
    _q(
        "w_gotcha_1",
        "web",
        "errors-gotchas",
        "Why can't I find the Ship button on an order?",
        "An invoice must be created first; the Ship button is hidden until then.",
        "llm_gotchas_checker",
    ),
    _q(
        "e_proc_1",
        "enterprise",
        "procedure",
        "Which fields set an incident's priority? (A) Impact (B) Urgency (C) Category (D) State",
        "A, B",
        "mc_choice_set_match",
    ),
    _q(
        "e_proc_abs_1",
        "enterprise",
        "procedure-abs",
        "Which button sets the Priority field directly on the incident form?",
        "Priority cannot be set directly; it is derived from impact and urgency.",
        "llm_abstention_checker",
    ),
    _q(
        "e_static_1",
        "enterprise",
        "static-environment",
        "What category holds laptops in the service catalog?",
        "Hardware",
        "norm_phrase_set_match|normalize_hyphen=false",
    ),
]

WEB = [t["id"] for t in TRAJECTORIES if t["domain"] == "web"]
ENT = [t["id"] for t in TRAJECTORIES if t["domain"] == "enterprise"]
#: small: every question of a domain shares that domain's ordered haystack (2 builds)
SMALL: dict[str, list[str]] = {q["id"]: list(WEB if q["domain"] == "web" else ENT) for q in QUESTIONS}
#: medium: per-question haystacks; w_static_1 and w_proc_1 share one, w_dyn_1 has the same ids in
#: another order (a distinct build), e_* share one
MEDIUM: dict[str, list[str]] = {
    "w_static_1": ["web_shop_001", "web_forum_003"],
    "w_static_abs_1": ["web_shop_001", "web_admin_002", "web_forum_003"],
    "w_dyn_1": ["web_forum_003", "web_shop_001"],
    "w_dyn_abs_1": ["web_admin_002"],
    "w_proc_1": ["web_shop_001", "web_forum_003"],
    "w_gotcha_1": ["web_admin_002", "web_shop_001"],
    "e_proc_1": list(ENT),
    "e_proc_abs_1": list(ENT),
    "e_static_1": list(ENT),
}
MEDIUM_BUILDS = 6  # distinct ordered haystacks in MEDIUM


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def make_fixture(root, *, checksums: bool = True, screenshots: bool = True) -> Path:
    """Write the fixture into ``root`` (created); returns it."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    lines = "".join(json.dumps(q) + "\n" for q in QUESTIONS)
    _write(root / "questions.jsonl", lines.encode())
    _write(root / "trajectories.jsonl", "".join(json.dumps(t) + "\n" for t in TRAJECTORIES).encode())
    _write(root / "haystacks" / "lme_v2_small.json", json.dumps(SMALL, indent=2).encode())
    _write(root / "haystacks" / "lme_v2_medium.json", json.dumps(MEDIUM, indent=2).encode())
    n = 0
    if screenshots:
        for t in TRAJECTORIES:
            for s in t["states"]:
                n += 1
                _write(root / s["screenshot"], png_bytes(n))
    for q in QUESTIONS:
        if q["image"]:
            n += 1
            _write(root / q["image"], png_bytes(n))
    if checksums:
        files = sorted(p for p in root.rglob("*") if p.is_file() and p.name != "checksums.sha256")
        text = "".join(
            f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.relative_to(root).as_posix()}\n" for p in files
        )
        _write(root / "checksums.sha256", text.encode())
    return root


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python tests/lme_v2_fixture.py OUT")
    print(make_fixture(sys.argv[1]))
