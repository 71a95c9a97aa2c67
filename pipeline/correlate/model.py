"""What gang correlation produces: a job's attempts, and the knobs of the analysis.

Kueue's waitForPodsReady admits a distributed job as a whole and evicts it when its
pods are not all ready in time (FORMATS.md 2.1-2.5). An `Attempt` is one admission
of a job, until its eviction, finish or deactivation (`correlate/attempts.py` cuts
them from the scheduler's events).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class GangConfig:
    """Knobs of the gang analysis, with Kueue's defaults (FORMATS.md 2.1)."""

    default_accelerators_per_pod: float = 1.0  # when neither pods nor workloads say
    backoff_base_s: int = 60  # requeuingStrategy.backoffBaseSeconds
    backoff_max_s: int = 3600  # requeuingStrategy.backoffMaxSeconds
    backoff_limit: int | None = None  # requeuingStrategy.backoffLimitCount (None: unknown / forever)
    same_transition_s: float = 10.0  # two reports of one transition (event, condition, job event) lie this close


@dataclass
class Attempt:
    """One admission of a job, until its eviction, finish or deactivation."""

    job: str
    number: int  # 1-based
    start: str | None  # RFC 3339 UTC; None: not admitted (yet)
    end: str | None
    end_reason: str | None  # PodsReadyTimeout | Preempted | NodeFailures | Deactivated | Finished | Failed | ... | None
    event_ids: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)


EVICTION_ENDS = {
    "PodsReadyTimeout", "Preempted", "NodeFailures", "Deactivated", "AdmissionCheck",
    "ClusterQueueStopped", "LocalQueueStopped", "MaximumExecutionTimeExceeded",
    "FlavorMigration", "EvictedOnManagerCluster", "WorkloadSliceReplaced", "Evicted",
}
