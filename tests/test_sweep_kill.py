"""A Dask worker killed (SIGKILL) in the middle of a shard: the sweep, rerun, completes every shard
with no duplicate record, and the records equal a ``memeval run`` of the same system."""

import json
import os
import signal
import threading
import time

from memeval.bench import load_bench
from memeval.cli import main
from memeval.run.sweep import load_spec, run_sweep
from sweep_helpers import keyed, records, sweep_records, tiny_benches, write_spec
from sweep_systems import FAST_FLAG_ENV

SLOW = "python:sweep_systems:SlowBM25:delay=0.03"


def _kill_a_worker_mid_shard(sw, sweeping, deadline=120.0):
    """Wait until a shard has some records but is not complete, then SIGKILL the worker writing it
    (its pid is in the run folder's lock file). Returns (pid, records seen at the kill)."""
    end = time.monotonic() + deadline
    while time.monotonic() < end and sweeping.is_alive():
        for d in sorted(p for p in sw.glob("*") if p.is_dir()):
            rec, lock, man = d / "records.jsonl", d / ".lock", d / "manifest.json"
            if not (rec.is_file() and lock.is_file() and man.is_file()):
                continue
            n = sum(1 for _ in rec.open())
            if 5 <= n <= 50 and json.loads(man.read_text()).get("status") == "started":
                pid = int(lock.read_text().split()[0])
                assert pid != os.getpid()
                os.kill(pid, signal.SIGKILL)
                return pid, d, n
        time.sleep(0.05)
    raise AssertionError("no shard was seen mid-way")


def test_killed_worker_then_rerun_completes_without_duplicates(tmp_path, monkeypatch):
    fast = tmp_path / "fast"  # once it exists SlowBM25 no longer waits: the rest of the first sweep need not crawl
    monkeypatch.setenv(FAST_FLAG_ENV, str(fast))  # before the workers start: they inherit it
    bench = tiny_benches(tmp_path / "data", seeds=(1,))[1]
    spec_path = write_spec(tmp_path / "SWEEP.yaml", name="k", systems=[SLOW], benches=[str(bench)])
    spec = load_spec(spec_path)
    sw = tmp_path / "sw"
    box = {}

    def sweep():
        box["first"] = run_sweep(spec, sw, n_workers=2, dashboard_address=None, progress=False)

    t = threading.Thread(target=sweep)
    t.start()
    pid, shard_dir, seen = _kill_a_worker_mid_shard(sw, t)
    fast.touch()  # the kill is done: the remaining questions (252 x 0.03 s in all) are asked without the wait
    t.join(timeout=300)
    assert not t.is_alive()
    assert 5 <= seen <= 50 < load_bench(bench).tier(shard_dir.name.rsplit("_", 1)[1]).n_questions  # mid-shard
    try:
        os.kill(pid, 0)
        raise AssertionError(f"worker {pid} still alive")
    except ProcessLookupError:
        pass
    # the rerun: the kill was the first sweep's subject; resuming needs no worker processes of its own
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        with Client(cluster) as client:
            again = run_sweep(spec, sw, client=client, progress=False)
    assert again.complete and len(again.outcome) == 4
    ref = tmp_path / "ref"
    # the reference: the same ranking without the sleep (it only slows a shard enough to be killed mid-way;
    # 252 questions x 0.03 s), named as the sweep's system so its records carry the same label
    same = ["--system", SLOW.replace("delay=0.03", "delay=0"), "--name", SLOW]
    assert main(["run", "--bench", str(bench), *same, "--out", str(ref), "--no-progress"]) == 0
    got = sweep_records(sw, "lifelog-tiny-s1")
    assert got == keyed(records(ref))  # keyed() fails on a duplicate (tier, qid, epoch)
