"""Requeues: how Kueue retried a job after each eviction, and when it gives up."""

from __future__ import annotations

from typing import Any

from gangscope.parsers import times
from gangscope.pipeline.correlate.model import EVICTION_ENDS, Attempt, GangConfig
from gangscope.pipeline.curate.naming import pod_role


def backoff_s(count: int, cfg: GangConfig) -> int:
    """Kueue's requeue delay after the count-th PodsReadyTimeout eviction: base * 2^(count-1), capped."""
    if count < 1:
        return 0
    return int(min(cfg.backoff_base_s * 2 ** (count - 1), cfg.backoff_max_s))


def _cause_key(a: Attempt) -> tuple | None:
    if a.end_reason not in EVICTION_ENDS:
        return None
    gang = a.details.get("gang") or {}
    first = (gang.get("not_ready") or [None])[0]
    if a.end_reason == "Deactivated" and a.details.get("end", {}).get("cause") == "RequeuingLimitExceeded":
        reason = "PodsReadyTimeout"  # the last timeout of the loop, turned into a deactivation
    else:
        reason = a.end_reason
    if first is None:
        return (reason,)
    return (reason, first["kind"], pod_role(first["pod"] or ""))


def requeue_view(attempts: list[Attempt], workload: dict, cfg: GangConfig) -> None:
    """Set each attempt's `requeue` details: evictions so far, the same-cause streak, when it was readmitted
    or will be retried (requeueState, else Kueue's backoff), and whether the loop ended in a deactivation."""
    timeouts = 0
    streak = 0
    prev_key = None
    for i, a in enumerate(attempts):
        key = _cause_key(a)
        if key is None:
            streak, prev_key = 0, None
            continue
        streak = streak + 1 if key == prev_key else 1
        prev_key = key
        if a.end_reason == "PodsReadyTimeout":
            timeouts += 1
        r: dict[str, Any] = {"evictions_so_far": sum(1 for x in attempts[: i + 1] if x.end_reason in EVICTION_ENDS),
                             "same_cause_streak": streak, "pods_ready_timeouts": timeouts}
        nxt = attempts[i + 1] if i + 1 < len(attempts) else None
        t_end = times.seconds(a.end)
        if nxt is not None and nxt.start and t_end is not None:
            r["readmitted_after_s"] = round(times.seconds(nxt.start) - t_end, 3)
        backoff_done = next((q for q in a.details.get("requeued", []) if q.get("reason") == "BackoffFinished"), None)
        if backoff_done and t_end is not None:
            r["backoff_s"] = round(times.seconds(backoff_done["time"]) - t_end, 3)
        if a.end_reason == "PodsReadyTimeout" and nxt is None:
            rs = workload.get("requeue_state") or {}
            if rs.get("requeueAt") and t_end is not None:
                r["next_retry_s"] = round(times.seconds(rs["requeueAt"]) - t_end, 3)
                r["next_retry_at"] = rs["requeueAt"]
                r["next_retry_from"] = "requeueState"
            else:
                count = rs.get("count") if isinstance(rs.get("count"), int) else timeouts
                r["next_retry_s"] = backoff_s(count, cfg)
                r["next_retry_from"] = "backoff"
            if cfg.backoff_limit is not None:
                r["deactivated_after"] = cfg.backoff_limit
        end = a.details.get("end", {})
        if a.end_reason == "Deactivated" and end.get("cause") == "RequeuingLimitExceeded":
            r["deactivated_after"] = timeouts
            r["deactivated"] = True
        evs = workload.get("evictions") or []
        if evs:
            r["scheduling_stats"] = evs
        a.details["requeue"] = r
