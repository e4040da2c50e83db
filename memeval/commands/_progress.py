"""A heartbeat on stderr for commands whose work has no natural steps to count (``memeval import``)."""

from __future__ import annotations

import sys
import threading
import time


class Heartbeat:
    """``with Heartbeat("importing locomo", every=2.0):`` prints nothing for work done within ``every``
    seconds (so a quick failure stays one line); after that, the task and the time spent so far every
    ``every`` seconds, and the total at the end. ``enabled=False`` prints nothing."""

    def __init__(self, task: str, every: float = 2.0, enabled: bool = True, stream=None):
        self.task, self.every, self.enabled = task, every, enabled
        self.stream = stream or sys.stderr
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.t0 = 0.0
        self.beats = 0

    def _beat(self) -> None:
        while not self._stop.wait(self.every):
            if not self.beats:
                print(f"{self.task} ...", file=self.stream, flush=True)
            self.beats += 1
            print(f"  ... {self.task}: {time.perf_counter() - self.t0:.0f} s", file=self.stream, flush=True)

    def __enter__(self) -> "Heartbeat":
        self.t0 = time.perf_counter()
        if self.enabled:
            self._thread = threading.Thread(target=self._beat, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            if exc[0] is None and self.beats:
                print(f"{self.task}: done in {time.perf_counter() - self.t0:.1f} s", file=self.stream, flush=True)
