"""Per-token rate limits: a token bucket per token, refilled at the token's requests-a-minute, holding at most a
minute's worth. Kept in the serving process (each bot server or `tablescout mcp` process counts its own)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from core.errors import TablescoutError


class RateLimited(TablescoutError):
    def __init__(self, retry_after_s: float) -> None:
        super().__init__(f"too many requests for this API token; try again in {max(1, round(retry_after_s))} s")
        self.retry_after_s = retry_after_s


@dataclass
class _Bucket:
    tokens: float
    at: float


class RateLimiter:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._buckets: dict[int, _Bucket] = {}
        self._lock = threading.Lock()

    def take(self, token_id: int, per_minute: int) -> None:
        """Count one request of `token_id`; RateLimited (with the seconds to wait) when its bucket is empty."""
        now = self._clock()
        rate = per_minute / 60.0
        with self._lock:
            bucket = self._buckets.get(token_id)
            if bucket is None:
                bucket = self._buckets[token_id] = _Bucket(float(per_minute), now)
            bucket.tokens = min(float(per_minute), bucket.tokens + (now - bucket.at) * rate)
            bucket.at = now
            if bucket.tokens < 1.0:
                raise RateLimited((1.0 - bucket.tokens) / rate)
            bucket.tokens -= 1.0
