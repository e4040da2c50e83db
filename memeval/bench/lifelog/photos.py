"""Photos: simple room scenes drawn with Pillow, whose objects, colours and positions are known.

Each scene has one piece of furniture (the anchor) and three objects: one on it, one to its left
and one to its right. The picture carries no caption; questions name it by its date.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw

from .png import encode_png

__all__ = ["Scene", "make_scenes", "draw_scene", "scene_questions", "COLOURS", "OBJECTS", "ANCHORS"]

COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (200, 30, 40),
    "blue": (40, 80, 200),
    "green": (40, 150, 60),
    "yellow": (240, 210, 40),
    "orange": (240, 130, 30),
    "purple": (130, 60, 170),
    "pink": (240, 130, 180),
    "black": (25, 25, 25),
    "white": (250, 250, 250),
}
OBJECTS = ("mug", "book", "vase", "ball", "lamp", "clock", "candle", "box", "teapot")
ANCHORS = ("sofa", "table", "shelf", "bed", "desk", "chair")
_WALLS = ((224, 214, 196), (200, 214, 220), (214, 226, 206), (232, 220, 226), (210, 206, 230))
_FLOORS = ((150, 110, 70), (120, 120, 120), (170, 140, 100), (100, 80, 60))
_ANCHOR_RGB = {
    "sofa": (110, 90, 140),
    "table": (140, 90, 50),
    "shelf": (120, 80, 40),
    "bed": (90, 120, 150),
    "desk": (100, 70, 40),
    "chair": (130, 60, 60),
}
W, H, FLOOR_Y = 480, 320, 230


@dataclass(frozen=True)
class Scene:
    anchor: str
    on: tuple[str, str]  # (colour, object)
    left: tuple[str, str]
    right: tuple[str, str]
    wall: int
    floor: int


def make_scenes(n: int, rng: random.Random) -> list[Scene]:
    out = []
    for _ in range(n):
        objs = rng.sample(OBJECTS, 3)
        cols = rng.sample(sorted(COLOURS), 3)
        out.append(
            Scene(
                rng.choice(ANCHORS),
                (cols[0], objs[0]),
                (cols[1], objs[1]),
                (cols[2], objs[2]),
                rng.randrange(len(_WALLS)),
                rng.randrange(len(_FLOORS)),
            )
        )
    return out


def _object(d: ImageDraw.ImageDraw, kind: str, colour: str, cx: int, base: int) -> None:
    """Draw ``kind`` centred at x=cx standing on y=base."""
    c, o = COLOURS[colour], (40, 40, 40)
    if kind == "mug":
        d.rectangle([cx - 14, base - 30, cx + 14, base], fill=c, outline=o)
        d.arc([cx + 8, base - 24, cx + 26, base - 8], -90, 90, fill=o, width=4)
    elif kind == "book":
        d.rectangle([cx - 24, base - 12, cx + 24, base], fill=c, outline=o)
        d.line([cx - 20, base - 6, cx + 20, base - 6], fill=(240, 240, 230), width=2)
    elif kind == "vase":
        d.polygon([(cx - 10, base - 44), (cx + 10, base - 44), (cx + 18, base), (cx - 18, base)], fill=c, outline=o)
    elif kind == "ball":
        d.ellipse([cx - 18, base - 36, cx + 18, base], fill=c, outline=o)
    elif kind == "lamp":
        d.line([cx, base - 40, cx, base], fill=o, width=4)
        d.polygon(
            [(cx - 20, base - 40), (cx + 20, base - 40), (cx + 10, base - 64), (cx - 10, base - 64)], fill=c, outline=o
        )
    elif kind == "clock":
        d.ellipse([cx - 20, base - 40, cx + 20, base], fill=c, outline=o, width=2)
        d.line([cx, base - 20, cx, base - 34], fill=o, width=2)
        d.line([cx, base - 20, cx + 10, base - 20], fill=o, width=2)
    elif kind == "candle":
        d.rectangle([cx - 7, base - 40, cx + 7, base], fill=c, outline=o)
        d.ellipse([cx - 4, base - 52, cx + 4, base - 40], fill=(255, 190, 40))
    elif kind == "box":
        d.rectangle([cx - 22, base - 28, cx + 22, base], fill=c, outline=o)
        d.line([cx - 22, base - 20, cx + 22, base - 20], fill=o)
    elif kind == "teapot":
        d.ellipse([cx - 20, base - 30, cx + 20, base], fill=c, outline=o)
        d.line([cx + 18, base - 18, cx + 32, base - 28], fill=c, width=5)
        d.rectangle([cx - 4, base - 36, cx + 4, base - 30], fill=o)


def _anchor(d: ImageDraw.ImageDraw, kind: str) -> int:
    """Draw the furniture in the middle; return the y of its top surface."""
    c, o = _ANCHOR_RGB[kind], (30, 30, 30)
    x0, x1 = 170, 310
    if kind == "sofa":
        d.rectangle([x0, FLOOR_Y - 60, x1, FLOOR_Y - 10], fill=c, outline=o)
        d.rectangle([x0 - 14, FLOOR_Y - 74, x0 + 6, FLOOR_Y - 10], fill=c, outline=o)
        d.rectangle([x1 - 6, FLOOR_Y - 74, x1 + 14, FLOOR_Y - 10], fill=c, outline=o)
        d.rectangle([x0, FLOOR_Y - 110, x1, FLOOR_Y - 60], fill=c, outline=o)
        return FLOOR_Y - 60
    if kind in ("table", "desk"):
        top = FLOOR_Y - 80
        d.rectangle([x0, top, x1, top + 10], fill=c, outline=o)
        for x in (x0 + 6, x1 - 16):
            d.rectangle([x, top + 10, x + 10, FLOOR_Y], fill=c, outline=o)
        if kind == "desk":
            d.rectangle([x1 - 60, top + 10, x1 - 16, top + 50], fill=c, outline=o)
        return top
    if kind == "shelf":
        top = FLOOR_Y - 120
        d.rectangle([x0, top, x1, FLOOR_Y], fill=c, outline=o)
        for y in (top + 40, top + 80):
            d.line([x0, y, x1, y], fill=o, width=3)
        return top
    if kind == "bed":
        top = FLOOR_Y - 50
        d.rectangle([x0 - 30, top, x1 + 30, FLOOR_Y - 10], fill=c, outline=o)
        d.rectangle([x0 - 30, top - 50, x0 - 14, FLOOR_Y], fill=(120, 90, 60), outline=o)
        d.ellipse([x0 - 10, top - 14, x0 + 40, top + 6], fill=(245, 245, 245), outline=o)
        return top
    top = FLOOR_Y - 60  # chair
    d.rectangle([x0 + 30, top, x1 - 30, top + 10], fill=c, outline=o)
    d.rectangle([x1 - 40, top - 70, x1 - 30, top], fill=c, outline=o)
    for x in (x0 + 32, x1 - 40):
        d.rectangle([x, top + 10, x + 8, FLOOR_Y], fill=c, outline=o)
    return top


def draw_scene(scene: Scene, path: Path) -> None:
    """Draw ``scene`` and write it as PNG (byte-stable: see ``png.encode_png``)."""
    img = Image.new("RGB", (W, H), _WALLS[scene.wall])
    d = ImageDraw.Draw(img)
    d.rectangle([0, FLOOR_Y, W, H], fill=_FLOORS[scene.floor])
    d.rectangle([360, 40, 440, 120], fill=(180, 210, 240), outline=(90, 90, 90), width=3)  # a window
    top = _anchor(d, scene.anchor)
    _object(d, scene.on[1], scene.on[0], 240, top)
    _object(d, scene.left[1], scene.left[0], 80, FLOOR_Y + 20)
    _object(d, scene.right[1], scene.right[0], 400, FLOOR_Y + 20)
    Path(path).write_bytes(encode_png(img))


def scene_questions(scene: Scene, day: str, k: int) -> list[tuple[str, str, tuple[str, ...]]]:
    """Up to ``k`` (question, gold, alts) about the photo from ``day``; none asks when anything happened."""
    a = scene.anchor
    qs = [
        (f"In the photo from {day}, what is on the {a}?", f"{scene.on[0]} {scene.on[1]}", (scene.on[1],)),
        (f"In the photo from {day}, what colour is the {scene.left[1]} to the left of the {a}?", scene.left[0], ()),
        (
            f"In the photo from {day}, what is to the right of the {a}?",
            f"{scene.right[0]} {scene.right[1]}",
            (scene.right[1],),
        ),
    ]
    return qs[:k]
