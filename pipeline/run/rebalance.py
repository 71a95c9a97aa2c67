"""The consumer group's side of the service: what a rebalance does to its partitions, and bounded
waits for the consumer calls that block."""

from __future__ import annotations

import functools
import inspect

import structlog
from kafka.consumer.subscription_state import AsyncConsumerRebalanceListener

log = structlog.get_logger("gangscope.consume")


@functools.lru_cache(maxsize=None)
def _takes_timeout(method) -> bool:
    return "timeout_ms" in inspect.signature(method).parameters


def bounded(method, seconds: float) -> dict:
    """A bounded wait for a blocking consumer call (kafka-python >= 2.1 takes one; older ones wait as
    before): with no broker the loop goes on (polling, acknowledging, answering /metrics) and tries
    again later, instead of standing still until the broker is back."""
    return {"timeout_ms": int(seconds * 1000)} if _takes_timeout(method) else {}


class RebalanceListener(AsyncConsumerRebalanceListener):
    """Revocation: checkpoint and commit what is acknowledged, drop the rest; assignment: adopt later.

    kafka-python runs listeners on its IO thread while `poll()` waits, so they may touch the
    service's state, but must not call blocking consumer methods: the commit is awaited.
    `service`: the run.service.Service whose partitions these are.
    """

    def __init__(self, service):
        self.service = service

    async def on_partitions_revoked(self, revoked):
        service = self.service
        try:
            offsets = service.release(revoked)
        except Exception as exc:  # OpenSearch gone mid-rebalance: the next owner reads again
            log.warning("revocation could not checkpoint", error=str(exc))
            return
        if offsets:
            try:
                await service.consumer.commit_async(offsets)
                service.metrics.commits.inc()
            except Exception as exc:
                service.metrics.commit_failures.inc()
                log.warning("commit on revocation failed", error=str(exc))

    async def on_partitions_assigned(self, assigned):
        self.service.new_partitions |= set(assigned)

    async def on_partitions_lost(self, lost):
        self.service.release(lost, lost=True)
