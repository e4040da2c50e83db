"""Systems for the sweep tests, imported by Dask worker processes by name (``python:sweep_systems:...``)."""

import time

from memeval.systems.baselines import BM25


class SlowBM25(BM25):
    """BM25 that waits ``delay`` seconds before each answer: a shard slow enough to kill mid-way."""

    name = "slow_bm25"

    def __init__(self, k: int = 10, delay: float = 0.03):
        super().__init__(k)
        self.delay = float(delay)

    def query(self, *args, **kwargs):
        time.sleep(self.delay)
        return super().query(*args, **kwargs)
