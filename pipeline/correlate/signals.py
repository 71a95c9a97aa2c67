"""Signals: what one scheduler event record means for the gang.

`classify` turns an `event` record (parsers/events.py) of a Workload, a job-kind
object, a Pod or a Node into a `Signal`: admitted, evicted (and why, and by whom),
pending, pods ready, unschedulable, image pull failed, crashed, node lost, ...
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from gangscope.parsers import times
from gangscope.pipeline.correlate.job_ends import (
    JobEnd, job_condition_end, job_event_end, rayjob_end, with_child_end, workload_finish,
)
from gangscope.pipeline.correlate.linking import details_of, get_field, job_owner
from gangscope.pipeline.curate.naming import JOB_KINDS


@dataclass
class Signal:
    """What one event record means for the gang: a kind (admitted, evicted, unschedulable, ...),
    its time in seconds, the record, and what the record says beyond the kind."""

    kind: str
    t: float
    rec: Any
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return get_field(self.rec, "id")

    @property
    def time(self) -> str:
        return get_field(self.rec, "time")


# Tie order at the same instant: what opens before what closes.
TIE_ORDER = {
    "created": 0, "pending": 1, "quota_reserved": 2, "admitted": 3, "pods_ready": 4, "pods_not_ready": 4,
    "preemptor": 5, "deactivation_target": 5, "evicted": 6, "finished": 7, "requeue_wait": 8, "requeued": 9,
}

_EVICTION_MESSAGES = (
    ("Exceeded the PodsReady timeout", "PodsReadyTimeout"),
    ("Preempted to accommodate", "Preempted"),
    ("Workload was evicted as there was no replacement for unhealthy node", "NodeFailures"),
    ("The workload is deactivated", "Deactivated"),
    ("Evicted to accommodate a workload", "FlavorMigration"),
    ("The maximum execution time", "MaximumExecutionTimeExceeded"),
)
_BLOCK_REASONS = {"Waiting", "WaitingForPodsReady"}  # QuotaReserved=False under blockAdmission
_PREEMPT_MSG = re.compile(
    r"Preempted to accommodate a workload \(UID: (?P<uid>[^,)]*)(?:, JobUID: (?P<juid>[^)]*))?\) due to (?P<why>[^;]+)"
    r"(?:; preemptor path: (?P<ppath>[^;]*))?")
_PREEMPTOR_MSG = re.compile(r"Preempted workload (?P<wl>\S+) \(UID: (?P<uid>[^)]*)\)")
_ASSIGNED = re.compile(r"Successfully assigned \S+ to (?P<node>\S+)")


def _eviction_reason(reason: str) -> tuple[str, str | None]:
    """An Evicted condition reason or the tail of an `EvictedDueTo...` event reason -> (reason, cause)."""
    if reason.startswith("DeactivatedDueTo"):  # HEAD: ReasonWithCause(Deactivated, cause)
        return "Deactivated", reason[len("DeactivatedDueTo"):] or None
    if reason.startswith("InactiveWorkload"):  # v0.6-v0.9: "InactiveWorkload" + DeactivationTarget reason
        return "Deactivated", reason[len("InactiveWorkload"):] or None
    return reason, None


def _eviction_from_message(message: str | None) -> str | None:
    if not message:
        return None
    for prefix, reason in _EVICTION_MESSAGES:
        if message.startswith(prefix):
            return reason
    return None


def classify(rec: Any) -> Signal | None:
    """The gang signal of one event record (Workload, job-kind object, Pod, Node); None when it means nothing here."""
    t = times.seconds(get_field(rec, "time"))
    if t is None:
        return None
    kind = get_field(rec, "object_kind")
    reason = get_field(rec, "reason") or ""
    msg = get_field(rec, "message") or ""
    d = details_of(rec)
    cond = d.get("condition") if get_field(rec, "type") == "Condition" else None

    def sig(k: str, **info: Any) -> Signal:
        return Signal(k, t, rec, info)

    if kind == "Workload":
        if cond:
            ctype, status, creason = cond.get("type"), cond.get("status"), cond.get("reason") or ""
            true = status == "True"
            if ctype == "Admitted" and true:
                return sig("admitted")
            if ctype == "QuotaReserved":
                if true:
                    return sig("quota_reserved")
                ev = _eviction_from_message(msg)
                return sig("pending", reason=creason, message=msg, blocked=creason in _BLOCK_REASONS,
                           after_eviction=ev)
            if ctype == "Evicted" and true:
                r, cause = _eviction_reason(creason)
                return sig("evicted", reason=r, cause=cause, message=msg)
            if ctype == "Preempted" and true:
                return sig("evicted", reason="Preempted", cause=creason, message=msg, **_preemption(msg))
            if ctype == "Requeued":
                if true:
                    return sig("requeued", reason=creason, message=msg)
                r, cause = _eviction_reason(creason)
                return sig("requeue_wait", reason=r, cause=cause, message=msg)
            if ctype == "Finished" and true:
                end = with_child_end(workload_finish(creason, msg), d.get("child_end"))
                return sig("finished", reason=creason or "Finished", message=msg, **_end_info(end))
            if ctype == "DeactivationTarget" and true:
                return sig("deactivation_target", reason=creason, message=msg)
            if ctype == "PodsReady":
                return sig("pods_ready" if true else "pods_not_ready", reason=creason, message=msg)
            return None
        if reason == "Created" and d.get("from") == "workload":
            return sig("created")
        if reason == "Admitted":
            return sig("admitted", message=msg)
        if reason == "QuotaReserved":
            return sig("quota_reserved", message=msg)
        if reason.startswith("EvictedDueTo"):
            r, cause = _eviction_reason(reason[len("EvictedDueTo"):])
            info = _preemption(msg) if r == "Preempted" else {}
            return sig("evicted", reason=r, cause=cause, message=msg, **info)
        if reason == "Preempted":  # v0.9: the only event of a preemption; HEAD: beside EvictedDueToPreempted
            return sig("evicted", reason="Preempted", message=msg, **_preemption(msg))
        if reason == "PreemptedWorkload":
            m = _PREEMPTOR_MSG.search(msg)
            return sig("preemptor", victim=m.group("wl") if m else None, victim_uid=m.group("uid") if m else None)
        if reason in ("AdmissionCheckRejected", "MaximumExecutionTimeExceeded"):
            return sig("deactivation_target", reason=reason, message=msg)
        if get_field(rec, "type") == "Warning" and reason not in ("SecondPassFailed",):
            # Pending / Inadmissible / the newer QuotaReserved=False reasons, as events.
            return sig("pending", reason=reason, message=msg, blocked=reason in _BLOCK_REASONS)
        return None
    if kind in JOB_KINDS:
        if cond:  # a status condition of the job object itself (parsers/events.py, `from: object`)
            if job_owner(d) is not None:
                # A child (one Job of a JobSet, the JobSet of a TrainJob): its end is not its owner's; the
                # owner's own condition says how the run ended.
                return None
            if kind == "RayJob":  # its status, not conditions (parsers/events.py _rayjob_records)
                end = rayjob_end(cond.get("type"), cond.get("reason"), msg)
            else:
                end = job_condition_end(kind, cond.get("type"), cond.get("status"), cond.get("reason"), msg)
            end = with_child_end(end, d.get("child_end"))  # a JobSet failed by a child past its deadline
            if end is None:
                return None
            return sig("finished", reason=cond.get("reason") or cond.get("type"), message=msg,
                       condition=cond.get("type"), **_end_info(end))
        if reason == "Started" and msg.startswith("Admitted by clusterQueue"):
            return sig("admitted", message=msg)
        if reason == "Stopped":
            r = _eviction_from_message(msg)
            if r:
                return sig("evicted", reason=r, message=msg, **(_preemption(msg) if r == "Preempted" else {}))
            return None
        if reason == "FinishedWorkload":
            return sig("finished", reason="Finished", message=msg)
        if reason == "CreatedWorkload":
            return sig("created")
        if reason == "FailedCreate":
            return sig("pod_create_failed", message=msg)
        end = job_event_end(kind, reason, msg)  # the job's own controller: Completed, BackoffLimitExceeded, ...
        end = with_child_end(end, d.get("child_end"))
        if end is not None:
            return sig("finished", reason=reason, message=msg, **_end_info(end))
        return None
    if kind == "Pod":
        return _classify_pod(rec, t, reason, msg, d, cond)
    if kind == "Node":
        if reason == "NodeNotReady":
            return sig("node_not_ready", node=get_field(rec, "object_name"), message=msg)
        if reason == "NodeReady":
            return sig("node_ready", node=get_field(rec, "object_name"))
        if reason in ("OOMKilling", "Rebooted", "KernelOops", "SystemOOM"):
            return sig("node_problem", node=get_field(rec, "object_name"), reason=reason, message=msg)
    return None


def _end_info(end: JobEnd | None) -> dict[str, Any]:
    """What a finish says of the run (correlate/job_ends.py), as a finish signal's info."""
    if end is None:
        return {}
    return {"outcome": end.outcome, "category": end.category, "end_source": end.source}


def _preemption(msg: str) -> dict[str, Any]:
    m = _PREEMPT_MSG.search(msg or "")
    if not m:
        return {}
    return {"preemptor_uid": m.group("uid") or None, "preemptor_job_uid": m.group("juid") or None,
            "why": m.group("why").strip(), "preemptor_path": m.group("ppath")}


def _classify_pod(rec: Any, t: float, reason: str, msg: str, d: dict, cond: dict | None) -> Signal | None:
    def sig(k: str, **info: Any) -> Signal:
        info.setdefault("message", msg)
        return Signal(k, t, rec, info)

    if cond:
        ctype, status = cond.get("type"), cond.get("status")
        if ctype == "Ready":
            return sig("ready" if status == "True" else "not_ready", reason=cond.get("reason"))
        if ctype == "PodScheduled" and status == "False":
            return sig("unschedulable", reason=cond.get("reason"))
        if ctype == "PodScheduled" and status == "True":
            return sig("scheduled", node=get_field(rec, "node"))
        if ctype == "DisruptionTarget" and status == "True":
            return sig("disrupted", reason=cond.get("reason"))
        return None
    if d.get("from") == "pod":
        if reason == "Created" and get_field(rec, "type") == "Object":
            return sig("pod_created", pod=d.get("pod") or {})
        cs = d.get("container_state") or {}
        if cs.get("state") == "terminated":
            code = cs.get("exit_code")
            if reason == "OOMKilled" or (code not in (None, 0)):
                return sig("container_failed", container=get_field(rec, "container"), exit_code=code, reason=reason,
                           init=cs.get("init"))
            return None
        if cs.get("state") == "waiting":
            if reason in ("ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull"):
                return sig("pull_failed", reason=reason)
            if reason == "CrashLoopBackOff":
                return sig("crashloop", container=get_field(rec, "container"), init=cs.get("init"))
            if reason in ("CreateContainerConfigError", "CreateContainerError", "RunContainerError"):
                return sig("container_failed", container=get_field(rec, "container"), reason=reason)
        return None
    # kubelet / scheduler / controllers, verbatim reasons (FORMATS.md 2.7; fixtures/gang/README.md)
    init = "initContainers{" in ((d.get("involvedObject") or {}).get("fieldPath") or "")
    if reason == "FailedScheduling":
        return sig("unschedulable")
    if reason == "Scheduled":
        m = _ASSIGNED.search(msg)
        return sig("scheduled", node=m.group("node") if m else None)
    if reason == "Pulling":
        return sig("pulling")
    if reason == "Pulled":
        return sig("pulled")
    if reason in ("ErrImageNeverPull", "InspectFailed"):
        return sig("pull_failed", reason=reason)
    if reason == "Failed":
        if msg.startswith("Failed to pull image") or msg in ("Error: ErrImagePull", "Error: ImagePullBackOff"):
            return sig("pull_failed", reason=reason)
        return sig("container_failed", container=get_field(rec, "container"), reason=msg.removeprefix("Error: "), init=init)
    if reason == "BackOff":
        if msg.startswith("Back-off pulling image"):
            return sig("pull_failed", reason="ImagePullBackOff")
        return sig("crashloop", container=get_field(rec, "container"), init=init)
    if reason == "Started":
        if init:  # an init container running says nothing about the pod being up
            return None
        return sig("container_started", container=get_field(rec, "container"))
    if reason == "Unhealthy":
        return sig("unhealthy")
    if reason in ("FailedMount", "FailedAttachVolume"):
        return sig("mount_failed")
    if reason in ("NodeNotReady", "TaintManagerEviction", "NodeControllerEviction"):
        return sig("pod_node_lost", reason=reason)
    if reason in ("Evicted", "Preempted"):
        return sig("pod_evicted", reason=reason)
    if reason == "Killing":
        return sig("killing")
    return None
