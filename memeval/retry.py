"""One HTTP retry policy (tenacity) for the memory adapter (``systems/http.py``) and the model client
(``llm.py``): a bounded number of attempts, exponential backoff from ``backoff`` seconds, and a
server's ``Retry-After`` (seconds) honoured in its place; every wait is capped at ``max_wait``.

The caller's attempt raises :class:`Retryable` for what may be tried again (429/5xx, a timeout, a
dropped connection) and anything else for what may not; ``sleep`` is how the caller waits, so the
memory adapter can wait on its cancel event (Ctrl-C ends a wait at once) while its per-attempt total
deadline stays in its own transport. :meth:`RetryPolicy.acall` is the same policy for an ``async``
attempt (the HTTP adapter's event loop); its waits are ``asyncio`` sleeps, ended by cancelling the task.

>>> p = RetryPolicy(max_attempts=4, backoff=0.5)
>>> [p.wait_for(n) for n in (1, 2, 3)], p.wait_for(1, retry_after=120.0)
([0.5, 1.0, 2.0], 30.0)
>>> seen = []
>>> def attempt(n):
...     seen.append(n)
...     if n < 3:
...         raise Retryable(f"HTTP 503 on attempt {n}")
...     return "ok"
>>> p.call(attempt, sleep=seen.append)
'ok'
>>> seen
[1, 0.5, 2, 1.0, 3]
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Awaitable, Callable, TypeVar

import httpx
from .errors import MemevalError

if TYPE_CHECKING:
    import tenacity

__all__ = ["Retryable", "RetryPolicy", "retry_after", "post_attempt"]

T = TypeVar("T")


class Retryable(MemevalError):
    """An attempt that failed in a way worth trying again; ``retry_after`` is the server's wait."""

    def __init__(self, reason: str, retry_after: float | None = None, connection: bool = False):
        super().__init__(reason)
        self.reason, self.retry_after = reason, retry_after
        #: the peer was not reached or did not reply (refused, dropped, timed out), not an error status
        self.connection = connection


def retry_after(resp: httpx.Response) -> float | None:
    """The ``Retry-After`` header in seconds, or None (absent, or an HTTP date: backoff applies)."""
    try:
        return float(resp.headers["retry-after"])
    except (KeyError, ValueError):
        return None


def post_attempt(
    client: httpx.Client,
    path: str,
    body: dict[str, object],
    keep: Callable[[httpx.Response], bool] | None = None,
) -> httpx.Response:
    """One POST of a model endpoint's JSON ``body``, for :class:`RetryPolicy` to repeat: a transport
    error or an HTTP 429/5xx reply raises :class:`Retryable` (with the server's ``Retry-After``); any
    other reply, or one ``keep(reply)`` accepts, is returned for the caller to read."""
    try:
        resp = client.post(path, json=body)
    except httpx.TimeoutException as e:
        raise Retryable(f"timed out ({type(e).__name__})") from None
    except httpx.HTTPError as e:
        raise Retryable(f"{type(e).__name__}: {e}") from None
    if keep is not None and keep(resp):
        return resp
    if resp.status_code == 429 or resp.status_code >= 500:
        raise Retryable(f"HTTP {resp.status_code}", retry_after(resp))
    return resp


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int
    backoff: float
    max_wait: float = 30.0

    def wait_for(self, attempt: int, retry_after: float | None = None) -> float:
        """The wait after failed attempt ``attempt`` (1-based)."""
        wait = retry_after if retry_after is not None else self.backoff * 2 ** (attempt - 1)
        return min(wait, self.max_wait)

    def _wait(self, state: tenacity.RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome is not None else None
        return self.wait_for(state.attempt_number, getattr(exc, "retry_after", None))

    def call(self, attempt: Callable[[int], T], *, sleep: Callable[[float], None] = time.sleep) -> T:
        """``attempt(n)`` for n = 1, 2, ... until it returns, raises a non-:class:`Retryable`, or the
        attempts run out (then the last :class:`Retryable` is raised)."""
        import tenacity  # on use: start-up time of every command (it imports tornado where installed)

        counter = iter(range(1, self.max_attempts + 1))
        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(self.max_attempts),
            wait=self._wait,
            retry=tenacity.retry_if_exception_type(Retryable),
            sleep=sleep,
            reraise=True,
        )
        return retrying(lambda: attempt(next(counter)))

    async def acall(
        self, attempt: Callable[[int], Awaitable[T]], *, sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    ) -> T:
        """:meth:`call` for an ``async`` attempt: ``await attempt(n)`` under the same stop, wait and retry rules.

        The first attempt runs as a plain ``await`` (on a loaded request path tenacity's bookkeeping
        costs more than the request); from the first failure on, tenacity drives the rest.

        >>> waits = []
        >>> async def wait(s):
        ...     waits.append(s)
        >>> async def flaky(n):
        ...     if n < 3:
        ...         raise Retryable("HTTP 429", retry_after=0.25 if n == 2 else None)
        ...     return n
        >>> asyncio.run(RetryPolicy(max_attempts=3, backoff=0.5).acall(flaky, sleep=wait)), waits
        (3, [0.5, 0.25])
        """
        try:
            return await attempt(1)
        except Retryable as e:
            if self.max_attempts == 1:
                raise
            await sleep(self.wait_for(1, e.retry_after))
        import tenacity  # on use: start-up time of every command (it imports tornado where installed)

        counter = iter(range(2, self.max_attempts + 1))

        async def one() -> T:
            return await attempt(next(counter))

        def wait(state: tenacity.RetryCallState) -> float:  # tenacity counts from the second attempt
            exc = state.outcome.exception() if state.outcome is not None else None
            return self.wait_for(state.attempt_number + 1, getattr(exc, "retry_after", None))

        retrying = tenacity.AsyncRetrying(
            stop=tenacity.stop_after_attempt(self.max_attempts - 1),
            wait=wait,
            retry=tenacity.retry_if_exception_type(Retryable),
            sleep=sleep,
            reraise=True,
        )
        return await retrying(one)
