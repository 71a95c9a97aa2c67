"""The units of work that raised and were skipped, reported: counted in /metrics, and one warning
per stage and exception type in the service's log with its first example."""

from __future__ import annotations

from typing import Iterable

import structlog

from gangscope.pipeline.isolation import StageFailures

log = structlog.get_logger("gangscope.consume")


def report_failures(failures: StageFailures, owners: Iterable, metrics) -> None:
    """Report what `failures` and the ledgers of `owners` (the partitions' states, the sink: anything
    with `stats.failures`) hold since the last report; each ledger is emptied. metrics: ServiceMetrics."""
    taken = failures.take()
    for owner in owners:
        ledger = getattr(getattr(owner, "stats", None), "failures", None)
        if ledger:
            taken.merge(ledger.take())
    if not taken:
        return
    metrics.count_failures(taken)
    for entry in taken.summary():
        first = entry["examples"][0] if entry["examples"] else {}
        log.warning("unit of work failed and was skipped", stage=entry["stage"], error=entry["error"],
                    count=entry["count"], **{k: v for k, v in first.items() if v is not None})
