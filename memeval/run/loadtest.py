"""Latency under load: an open-loop schedule against an HTTP memory system (benchmark.md §5).

A sequential question loop measures service time. Here requests are *scheduled* at a fixed rate
whatever the system's speed, and each latency is measured from the request's scheduled time, so a
system that falls behind shows its queueing in the numbers instead of silently slowing the client
down (no coordinated omission).

The schedule runs as coroutines on the HTTP adapter's event loop (async httpx): one process keeps
``max_in_flight`` requests open without a thread each. The client reports its own lag: how late
each request was taken up against its scheduled time (a large lag means the client, not the
system, set the pace), and apart from it how long requests waited for one of the ``max_in_flight``
slots (the system holding that many requests: its queueing, which the latencies include).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path

from ..bench import haystacks_of, load_bench, read_questions, read_turns
from ..errors import MemevalError, UsageError
from ..scoring.speed import percentiles
from ..errors import SystemCallError
from ..systems.http import HttpSystem

__all__ = ["LoadResult", "open_loop"]


@dataclass(frozen=True)
class LoadResult:
    rate: float  # requested requests per second
    achieved_rate: float  # completed requests per second of the run
    sent: int
    errors: int
    network_ms: float  # the floor measured before the load, on the warmed connection
    latency: dict  # percentiles of latency from the scheduled send time (ms)
    latency_minus_rtt: dict  # the same minus the network floor
    max_lag_ms: float  # how late the client itself took a request up (should stay small)
    lag: dict  # percentiles of that lag (ms)
    slot_wait: dict  # percentiles of the wait for a free in-flight slot (ms)


def open_loop(
    system: HttpSystem, questions: list[str], rate: float, duration_s: float, max_in_flight: int = 64, on_done=None
) -> LoadResult:
    """Send ``rate`` queries/s for ``duration_s`` seconds (questions cycled), open loop. ``on_done()``
    is called after each request (progress), on the adapter's event loop thread."""
    if rate <= 0 or duration_s <= 0 or max_in_flight < 1:
        raise MemevalError("rate, duration and max in flight must be positive")
    if not questions:
        raise MemevalError("no questions to send")
    try:
        return system.run(_open_loop(system, questions, rate, duration_s, max_in_flight, on_done))
    except BaseException:  # Ctrl-C: nothing more is sent and the requests in flight are aborted
        system.cancel()
        raise


async def _open_loop(
    system: HttpSystem, questions: list[str], rate: float, duration_s: float, max_in_flight: int, on_done
) -> LoadResult:
    await system.awarm()
    await system.aquery(questions[0], None)  # let the system build what it builds lazily before the clock starts
    floor = await system.anetwork_floor_ms()
    n = max(1, int(rate * duration_s))
    lat: list[float] = []
    lags: list[float] = []
    waits: list[float] = []
    errors = 0
    slots = asyncio.Semaphore(max_in_flight)
    clock = time.perf_counter
    start = clock() + 0.05

    async def one(i: int, due: float) -> None:
        nonlocal errors
        taken = clock()
        async with slots:
            sent = clock()
            try:
                await system.aquery(questions[i % len(questions)], None)
                ok = True
            except SystemCallError:
                ok = False
            done = clock()
        lags.append((taken - due) * 1000)
        waits.append((sent - taken) * 1000)
        if ok:
            lat.append((done - due) * 1000)
        else:
            errors += 1
        if on_done is not None:
            on_done()

    async with asyncio.TaskGroup() as group:
        for i in range(n):
            due = start + i / rate
            while (wait := due - clock()) > 0:
                await asyncio.sleep(wait)
            group.create_task(one(i, due))
    elapsed = clock() - start
    return LoadResult(
        rate=rate,
        achieved_rate=len(lat) / elapsed,
        sent=n,
        errors=errors,
        network_ms=round(floor, 3),
        latency=percentiles(lat),
        latency_minus_rtt=percentiles(max(1.0, x - floor) for x in lat),
        max_lag_ms=round(max(lags), 3),
        lag=_rounded(percentiles(lags)),
        slot_wait=_rounded(percentiles(waits)),
    )


def _rounded(p: dict) -> dict:
    return {k: round(v, 3) if isinstance(v, float) else v for k, v in p.items()}


def questions_of(bench_dir, tier: str) -> tuple[list, list[str]]:
    """(sessions of the tier's single haystack, question texts) of a bench tier."""
    bench = load_bench(bench_dir)
    try:
        t = bench.tier(tier)
    except KeyError as e:
        raise UsageError(e.args[0]) from None
    hay = haystacks_of(read_turns(Path(bench.root) / t.turns_file))
    if list(hay) != [None]:
        raise MemevalError(f"tier {tier!r} has per-question haystacks: load-test a bench with one haystack per tier")
    return hay[None], [q.text_to_ask for q in read_questions(Path(bench.root) / t.questions_file)]
