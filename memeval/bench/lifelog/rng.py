"""Independent, reproducible random streams: one ``random.Random`` per component, seeded from
``sha256(seed | names)`` so adding a component never shifts the draws of another (no ``hash()``)."""

from __future__ import annotations

import hashlib
import random

__all__ = ["stream"]


def stream(seed: int, *names: object) -> random.Random:
    key = "|".join([str(int(seed)), *map(str, names)]).encode()
    return random.Random(int.from_bytes(hashlib.sha256(key).digest()[:8], "big"))
