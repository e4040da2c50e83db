"""Run a sweep's shards as tasks on dask.distributed: a ``LocalCluster`` of worker processes by
default, or an existing cluster at ``scheduler`` (``tcp://HOST:PORT``; dask-jobqueue or
dask-kubernetes start one on a batch queue or Kubernetes). Each task is :func:`run_shard`: the ordinary
runner with ``out`` = the shard's folder, so records, resume and locking are those of ``memeval run``;
rerunning a sweep resumes every shard that is not complete (a killed worker's shard included).
"""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from tqdm.auto import tqdm

from ...errors import MemevalError
from ...llm import ChatClient
from ...scoring.judge import Judge, Reader
from ...workspace import anchored
from ..folder import RunLock, read_manifest
from ..runner import run_system
from .plan import Shard, plan_shards, resolve_benches, write_sweep
from .spec import ModelRef, SweepSpec

__all__ = ["run_shard", "run_sweep", "SweepResult", "default_sweep_dir"]

# how long to keep trying an existing scheduler (--scheduler) before the one-line refusal; dask retries a
# refused connection until then (a test shortens it, the refusal being what it checks)
SCHEDULER_CONNECT_TIMEOUT = "15s"


@dataclass(frozen=True)
class SweepResult:
    sweep_dir: Path
    outcome: dict  # shard id -> {"status", "n_records", "error"?}
    dashboard: str | None

    @property
    def complete(self) -> bool:
        return all(o.get("status") == "complete" for o in self.outcome.values())


def default_sweep_dir(spec: SweepSpec, runs_root="runs") -> Path:
    return anchored(runs_root) / f"sweep_{spec.name}"


def run_shard(shard: Shard, judge: ModelRef | None = None, reader: ModelRef | None = None) -> dict:
    """The task a worker runs: one shard through :func:`memeval.run.run_system`, resumed if begun.
    Input errors come back as the shard's ``error`` (a record of why), never as a crashed worker."""
    try:
        j = (
            None
            if judge is None
            else Judge(ChatClient(judge.url, judge.model, api_key_env=judge.key_env, role="judge"))
        )
        r = (
            None
            if reader is None
            else Reader(ChatClient(reader.url, reader.model, api_key_env=reader.key_env, role="reader"))
        )
        run_system(
            shard.bench_dir,
            shard.system,
            tiers=[shard.tier],
            mode=shard.mode,
            epochs=shard.epochs,
            out=shard.run_dir,
            progress=False,
            judge=j,
            reader=r,
            question_set=shard.question_set,
        )
    except MemevalError as e:
        return {"status": "error", "error": " ".join(str(e).splitlines()), "worker_pid": os.getpid()}
    m = read_manifest(shard.run_dir)
    return {"status": m.get("status"), "n_records": m.get("n_records"), "worker_pid": os.getpid()}


def _client(scheduler: str | None, n_workers: int, threads_per_worker: int, dashboard_address: str | None):
    from dask.distributed import Client, LocalCluster  # on use: dask starts slowly; only a sweep needs it

    if scheduler:
        if "://" not in scheduler:
            raise MemevalError(f"--scheduler {scheduler!r}: expected an address such as tcp://HOST:PORT")
        try:
            return Client(scheduler, timeout=SCHEDULER_CONNECT_TIMEOUT)
        except (OSError, TimeoutError, ValueError) as e:
            raise MemevalError(f"cannot reach the Dask scheduler at {scheduler}: {e}") from None
    cluster = LocalCluster(
        n_workers=n_workers,
        threads_per_worker=threads_per_worker,
        processes=True,
        dashboard_address=dashboard_address,
        silence_logs=logging.ERROR,
    )
    return Client(cluster)


def _dashboard(client) -> str | None:
    try:
        services = client.scheduler_info().get("services", {})
        return client.dashboard_link if "dashboard" in services else None
    except (AttributeError, KeyError, OSError):
        return None


def run_sweep(
    spec: SweepSpec,
    sweep_dir=None,
    scheduler: str | None = None,
    n_workers: int = 2,
    threads_per_worker: int = 1,
    dashboard_address: str | None = ":8787",
    progress: bool = True,
    client=None,
    runs_root="runs",
    log=lambda line: print(line, file=sys.stderr),
) -> SweepResult:
    """Plan the shards, run them on the cluster, write the sweep manifest; returns each shard's outcome.

    ``client``: an existing ``dask.distributed.Client`` (left open); else one is made from ``scheduler``
    or a new ``LocalCluster`` of ``n_workers`` processes (closed at the end).
    """
    sweep_dir = Path(sweep_dir) if sweep_dir else default_sweep_dir(spec, runs_root)
    benches = resolve_benches(spec)
    shards = plan_shards(spec, benches, sweep_dir)
    own = client is None
    if own:  # connect (or start the cluster) before anything is written
        client = _client(scheduler, n_workers, threads_per_worker, dashboard_address)
    outcome: dict[str, dict] = {}
    status, link = "error", None
    try:
        with RunLock(sweep_dir):
            write_sweep(sweep_dir, spec, shards, status="started")
            try:
                link = _dashboard(client) if dashboard_address is not None or not own else None
                n = len(client.scheduler_info().get("workers", {}))
                log(
                    f"sweep {spec.name}: {len(shards)} shards on {n} Dask workers"
                    + (f"; dashboard {link}" if link else "")
                )
                outcome, status = _gather(client, shards, spec, progress)
            except KeyboardInterrupt:
                status = "cancelled"
                raise
            finally:
                write_sweep(sweep_dir, spec, shards, outcome, status=status)
    finally:
        if own:
            cluster = getattr(client, "cluster", None)
            client.close()
            if cluster is not None:
                cluster.close()
    return SweepResult(sweep_dir, outcome, link)


def _gather(client, shards: list[Shard], spec: SweepSpec, progress: bool) -> tuple[dict, str]:
    from dask.distributed import as_completed  # on use: dask starts slowly; only a sweep needs it

    futures = {
        client.submit(
            run_shard, s, spec.judge, spec.reader, key=f"shard-{s.id}", pure=False, retries=1, priority=s.tier_index
        ): s.id
        for s in shards  # the largest tiers first (priority): the longest tasks do not finish last
    }
    outcome: dict[str, dict] = {}
    bar = tqdm(total=len(futures), desc="sweep", unit="shard", disable=not progress)
    try:
        for fut in as_completed(futures):
            sid = futures[fut]
            try:
                outcome[sid] = fut.result()
            except Exception as e:  # a worker lost too often (KilledWorker) or a bug in a system: the shard's record
                outcome[sid] = {"status": "error", "error": f"{type(e).__name__}: {e}"[:500]}
            bar.update(1)
            bad = sum(o.get("status") != "complete" for o in outcome.values())
            if bad:
                bar.set_postfix(failed=bad)
    except BaseException:
        for f in futures:
            f.cancel()
        raise
    finally:
        bar.close()
    for sid in futures.values():
        outcome.setdefault(sid, {"status": "cancelled"})
    done = all(o.get("status") == "complete" for o in outcome.values())
    return outcome, "complete" if done else "incomplete"
