"""Model-call cache storage: SQLite (WAL) against a file per reply (temp file + rename), per reply.

    .venv/bin/python benchmarks/cache_storage.py [N]

Writes N replies of ~1 KB, reads them back, then has two processes write N each at once; 5 repeats,
medians in ms per reply, and the disk each layout takes after 3N replies (``du``). The measurement
behind the storage choice in docs/DECISIONS.md (issue 28, model-call cache).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from multiprocessing import Process

PAYLOAD = json.dumps({"choices": [{"message": {"content": "x" * 900}}]}).encode()


def key(i: int, tag: str) -> str:
    return hashlib.sha256(f"{tag}{i}".encode()).hexdigest()


def sq_put(path: str, tag: str, n: int) -> None:
    db = sqlite3.connect(path, timeout=60, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("CREATE TABLE IF NOT EXISTS r (k TEXT PRIMARY KEY, v BLOB)")
    for i in range(n):
        db.execute("INSERT OR IGNORE INTO r VALUES (?, ?)", (key(i, tag), PAYLOAD))
    db.close()


def sq_get(path: str, tag: str, n: int) -> None:
    db = sqlite3.connect(path, timeout=60)
    for i in range(n):
        db.execute("SELECT v FROM r WHERE k = ?", (key(i, tag),)).fetchone()
    db.close()


def f_put(folder: str, tag: str, n: int) -> None:
    for i in range(n):
        k = key(i, tag)
        sub = os.path.join(folder, k[:2])
        os.makedirs(sub, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=sub)
        os.write(fd, PAYLOAD)
        os.close(fd)
        os.replace(tmp, os.path.join(sub, k))


def f_get(folder: str, tag: str, n: int) -> None:
    for i in range(n):
        k = key(i, tag)
        with open(os.path.join(folder, k[:2], k), "rb") as fh:
            fh.read()


def timed(f, *a) -> float:
    t = time.perf_counter()
    f(*a)
    return time.perf_counter() - t


def two(f, target: str, n: int) -> float:
    ps = [Process(target=f, args=(target, f"p{j}", n)) for j in range(2)]
    t = time.perf_counter()
    for p in ps:
        p.start()
    for p in ps:
        p.join()
    return time.perf_counter() - t


def du_kib(path: str) -> int:
    return int(subprocess.run(["du", "-sk", path], capture_output=True, text=True).stdout.split()[0])


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    res: dict[str, list[float]] = {k: [] for k in ("sqlite put", "sqlite get", "files put", "files get")}
    res |= {"sqlite put, 2 processes": [], "files put, 2 processes": []}
    disk = (0, 0)
    with tempfile.TemporaryDirectory() as root:
        for rep in range(5):
            d = os.path.join(root, str(rep))
            os.makedirs(d)
            db, files = os.path.join(d, "c.sqlite"), os.path.join(d, "files")
            res["sqlite put"].append(timed(sq_put, db, "a", n) / n)
            res["sqlite get"].append(timed(sq_get, db, "a", n) / n)
            res["files put"].append(timed(f_put, files, "a", n) / n)
            res["files get"].append(timed(f_get, files, "a", n) / n)
            res["sqlite put, 2 processes"].append(two(sq_put, db, n) / (2 * n))
            res["files put, 2 processes"].append(two(f_put, files, n) / (2 * n))
            disk = (du_kib(d) - du_kib(files), du_kib(files))
    print(f"{n} replies of {len(PAYLOAD)} B, 5 repeats, medians (ms per reply):")
    for k, v in res.items():
        print(f"  {k:24s} {1000 * statistics.median(v):.3f}")
    print(f"  disk after {3 * n} replies: sqlite {disk[0]} KiB, files {disk[1]} KiB")


if __name__ == "__main__":
    main()
