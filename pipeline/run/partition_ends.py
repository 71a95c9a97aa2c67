"""Where each partition ends, as this consumer knows it: for the lag in /metrics, and for whether
a partition has caught up (a job is not taken to be over while lines of it may wait in Kafka)."""

from __future__ import annotations

from typing import Any

from gangscope.pipeline.run.rebalance import bounded


class PartitionEnds:
    """`consumer`: the service's Kafka consumer (either backend)."""

    def __init__(self, consumer):
        self.consumer = consumer
        self._asked: dict[Any, tuple[float, int | None]] = {}  # tp -> (when asked, the end the broker gave)

    def highwater(self, tp, now: float) -> int | None:
        """The partition's end as the last fetch saw it; asked of the broker (at most once a second)
        when no fetch said it yet (incremental fetch sessions leave quiet partitions out)."""
        try:
            high = self.consumer.highwater(tp)
        except Exception:
            return None
        if high is not None:
            return high
        asked = self._asked.get(tp)
        if asked is None or now - asked[0] >= 1.0:
            try:
                end = self.consumer.end_offsets([tp], **bounded(type(self.consumer).end_offsets, 1.0)).get(tp)
            except Exception:
                end = None
            asked = self._asked[tp] = (now, end)
        return asked[1]
