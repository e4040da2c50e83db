"""A stand-in for a system that waits on a model or a service: bm25 plus a fixed wait per question.
Named by ``benchmarks/sweep.py --wait-ms`` as ``python:sweep_systems:Waiting:...`` (benchmarks/ on the path)."""

import time

from memeval.systems.registry import make_system


class Waiting:
    """``inner`` (a built-in system spec) that sleeps ``wait_ms`` before each answer: I/O-bound work."""

    def __init__(self, inner: str = "bm25", wait_ms: float = 5.0):
        self._inner = make_system(inner)
        self._wait = float(wait_ms) / 1000
        self.name, self.version = f"waiting-{self._inner.name}", "1"
        self.params = {"inner": inner, "wait_ms": float(wait_ms)}
        if hasattr(self._inner, "prepare"):  # the oracle is handed each question's evidence first
            self.prepare = self._inner.prepare

    def reset(self):
        self._inner.reset()

    def ingest(self, session):
        self._inner.ingest(session)

    def query(self, question, asked_at=None):
        time.sleep(self._wait)
        return self._inner.query(question, asked_at)
