"""Per-request cost of the HTTP adapter: median ``GET /health`` round trip against a running server.

Run once per adapter version to compare them (``PYTHONPATH`` picks the version), e.g. the adapter
before the total-deadline network backend (commit 3c6336c) against the current one:

    git archive 3c6336c | tar -x -C /tmp/old
    .venv/bin/python -m memeval serve no_memory --port 18977 &
    .venv/bin/python benchmarks/http_floor_ab.py http://127.0.0.1:18977
    PYTHONPATH=/tmp/old .venv/bin/python benchmarks/http_floor_ab.py http://127.0.0.1:18977

Prints the median over 5 rounds of each round's median of 201 round trips (ms).
"""

import statistics
import sys

from memeval.systems.http import HttpSystem

if __name__ == "__main__":
    h = HttpSystem(sys.argv[1])
    h.warm(20)
    print(round(statistics.median(h.network_floor_ms(201) for _ in range(5)), 3))
