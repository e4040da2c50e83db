"""Systems for the sweep tests, imported by Dask worker processes by name (``python:sweep_systems:...``)."""

import os
import time

from memeval.systems.baselines import BM25

# A file whose existence ends SlowBM25's waits (its path in this variable, set before the workers start):
# the wait only lets a shard be killed mid-way; once the kill is done the rest of the sweep need not crawl.
FAST_FLAG_ENV = "MEMEVAL_TEST_SLOW_BM25_FAST_FLAG"


class SlowBM25(BM25):
    """BM25 that waits ``delay`` seconds before each answer: a shard slow enough to kill mid-way (no wait
    once the file named by ``$MEMEVAL_TEST_SLOW_BM25_FAST_FLAG`` exists)."""

    name = "slow_bm25"

    def __init__(self, k: int = 10, delay: float = 0.03):
        super().__init__(k)
        self.delay = float(delay)
        self._fast_flag = os.environ.get(FAST_FLAG_ENV)

    def query(self, *args, **kwargs):
        if self.delay and not (self._fast_flag and os.path.exists(self._fast_flag)):
            time.sleep(self.delay)
        return super().query(*args, **kwargs)
