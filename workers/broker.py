"""The Redis transport of tablescout's Celery app: kombu's own, with the fault that stopped workers on a broker
restart fixed where it arises.

With Celery 5.7 and kombu 5.7, a consumer that loses its broker connection first collects the connection, which
detaches the transport (`transport.client = None`) while the default channel stays open (its close stopped at the
dead socket), and then closes the connection. That close restores the channel's unacknowledged messages (a turn
still running, acknowledged late) through a new Redis pool built from `transport.client`. With the client gone,
kombu raised `AttributeError: 'NoneType' object has no attribute 'hostname'`, which is no connection error, so the
worker stopped ("Unrecoverable error") instead of reconnecting.

A detached channel here raises a connection error instead, the error every caller already handles as "the broker is
away": the consumer reconnects and goes on consuming; a late acknowledgement on the old channel is logged and the
message stays in Redis's unacknowledged set until the visibility timeout restores it; a job Redis lost altogether is
found by the turn sweep (workers/turn_sweep.py).
"""

from __future__ import annotations

from typing import Any

from kombu.transport import redis as kombu_redis
from redis.exceptions import ConnectionError as RedisConnectionError

#: The dotted path Celery's `broker_transport` setting takes.
TRANSPORT = "workers.broker:Transport"


class Channel(kombu_redis.Channel):
    def _connparams(self, asynchronous: bool = False) -> dict[str, Any]:
        if self.connection is None or self.connection.client is None:
            raise RedisConnectionError("the broker connection of this channel was closed")
        params: dict[str, Any] = super()._connparams(asynchronous=asynchronous)  # type: ignore[no-untyped-call]
        return params


class Transport(kombu_redis.Transport):
    Channel = Channel
