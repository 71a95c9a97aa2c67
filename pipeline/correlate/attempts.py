"""Gang scheduling: jobs, attempts, and the scheduler's verdict on an attempt.

Kueue's waitForPodsReady admits a distributed job as a whole and evicts it when
its pods are not all ready in time (FORMATS.md 2.1-2.5). From the `event` records
of parsers/events.py this module:

* links events, pods and workloads to their job (`job_of_pod`, `job_of_workload`,
  `link_events`);
* cuts each job's history into attempts: an admission starts one, an eviction,
  a finish or a deactivation ends it (`build_attempts`), with a gang view per
  attempt (pods expected, ready and when, the ones that never were and why);
* stamps every record with the attempt its time falls in (`assign_attempts`);
* says what the scheduler saw when an attempt was evicted (`scheduler_verdict`):
  which pod held the gang back and why, preemption and by whom, node failures,
  requeue loops, and the accelerator time the attempt burned;
* lays the attempts and failures on one time axis for the report (`timeline`).

Records may be record structs or plain dicts; both are read the same way.
"""

from __future__ import annotations

import bisect
import calendar
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gangscope.pipeline.curate.naming import (
    JOB_KINDS, JOB_LABELS, WORKLOAD_ANNOTATION, label_value, qualified, job_of_pod, job_of_workload, pod_role,
)

# ---------------------------------------------------------------------------
# Configuration


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

# ---------------------------------------------------------------------------
# Reading records (structs or dicts) and times


def _get(rec: Any, key: str, default: Any = None) -> Any:
    if isinstance(rec, Mapping):
        return rec.get(key, default)
    if key == "kind":
        return getattr(rec, "kind", default)
    return getattr(rec, key, default)


def _set(rec: Any, key: str, value: Any) -> None:
    if isinstance(rec, dict):
        rec[key] = value
    else:
        setattr(rec, key, value)


_EPOCH_CACHE: dict[str, int] = {}
_TS = re.compile(r"(\d{4})-(\d\d)-(\d\d)[Tt ](\d\d):(\d\d):(\d\d)(\.\d+)?(Z|z|[+-]\d\d:?\d\d)?$")


def epoch(ts: str | None) -> float | None:
    """Seconds since the epoch for an RFC 3339 time (any offset); None when absent or unreadable."""
    if not ts:
        return None
    key = ts[:19]
    base = _EPOCH_CACHE.get(key)
    rest = ts[19:]
    if base is None or (rest and rest[0] not in ".Zz+-"):
        m = _TS.match(ts)
        if m is None:
            return None
        y, mo, d, h, mi, s = (int(g) for g in m.groups()[:6])
        try:
            base = calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0))
        except (ValueError, OverflowError):
            return None
        if len(_EPOCH_CACHE) > 100_000:
            _EPOCH_CACHE.clear()
        _EPOCH_CACHE[key] = base
    t = float(base)
    if rest:
        off = rest
        if rest[0] == ".":
            i = 1
            while i < len(rest) and rest[i].isdigit():
                i += 1
            t += float("0" + rest[:i]) if i > 1 else 0.0
            off = rest[i:]
        if off and off[0] in "+-":
            digits = off[1:].replace(":", "")
            if len(digits) == 4 and digits.isdigit():
                sign = 1 if off[0] == "+" else -1
                t -= sign * (int(digits[:2]) * 3600 + int(digits[2:]) * 60)
    return t


def _iso(t: float) -> str:
    import time as _time

    base = _time.strftime("%Y-%m-%dT%H:%M:%S", _time.gmtime(int(t)))
    frac = t - int(t)
    return base + (f"{frac:.6f}"[1:].rstrip("0") if frac > 1e-6 else "") + "Z"


def _details(rec: Any) -> dict:
    d = _get(rec, "details")
    return d if isinstance(d, dict) else {}


def _newer(w: dict, old: dict | None) -> bool:
    if old is None:
        return True
    a, b = str(w.get("resource_version") or ""), str(old.get("resource_version") or "")
    return int(a) >= int(b) if a.isdigit() and b.isdigit() else True


class _Index:
    """What the records say about workloads, pods and jobs, for linking."""

    def __init__(self, records: list[Any]):
        self.workloads: dict[tuple, dict] = {}  # (ns, name) -> workload summary
        self.workload_by_uid: dict[str, tuple] = {}
        self.job_by_uid: dict[str, str] = {}
        self.pod_labels: dict[tuple, dict] = {}
        self.pod_info: dict[tuple, dict] = {}
        self.known_jobs: dict[str, set[str]] = {}
        for r in records:
            d = _details(r)
            kind = _get(r, "object_kind")
            ns = _get(r, "namespace")
            name = _get(r, "object_name")
            obj = d.get("involvedObject") or {}
            if d.get("from") == "workload" and isinstance(d.get("workload"), dict):
                w = d["workload"]
                if _newer(w, self.workloads.get((ns, name))):  # a watch stream: keep the latest snapshot
                    self.workloads[(ns, name)] = w
                if w.get("uid"):
                    self.workload_by_uid[w["uid"]] = (ns, name)
            elif kind == "Workload" and obj.get("uid"):
                self.workload_by_uid.setdefault(obj["uid"], (ns, name))
            if kind in JOB_KINDS and name:
                self.known_jobs.setdefault(ns or "", set()).add(name)
                if obj.get("uid"):
                    self.job_by_uid[obj["uid"]] = qualified(ns, name)
            if kind == "Pod" and name:
                pod = d.get("pod") if d.get("from") == "pod" else None
                labels = (pod or {}).get("labels") or d.get("labels")
                if labels:
                    self.pod_labels[(ns, name)] = labels
                if pod:
                    self.pod_info[(ns, name)] = pod
        for (ns, _name), w in self.workloads.items():
            owner = w.get("owner") or {}
            if owner.get("name"):
                self.known_jobs.setdefault(ns or "", set()).add(owner["name"])
                if owner.get("uid"):
                    self.job_by_uid[owner["uid"]] = qualified(ns, owner["name"])
        for (ns, _pod), labels in self.pod_labels.items():
            for key in JOB_LABELS:
                v = label_value(labels, key)
                if v:
                    self.known_jobs.setdefault(ns or "", set()).add(v)
                    break

    def workload_job(self, ns: str | None, name: str) -> str:
        w = self.workloads.get((ns, name)) or {}
        if w.get("owner"):
            return job_of_workload(ns, name, w["owner"])
        if w.get("job_uid") and w["job_uid"] in self.job_by_uid:
            return self.job_by_uid[w["job_uid"]]
        job = job_of_workload(ns, name)
        short = job.split("/", 1)[-1]
        known = self.known_jobs.get(ns or "", set())
        if short not in known:
            # A long owner name is truncated in the workload name: take the one known job it prefixes.
            cands = [k for k in known if k.startswith(short)]
            if len(cands) == 1:
                return qualified(ns, cands[0])
        return job

    def job_of(self, rec: Any) -> str | None:
        kind = _get(rec, "object_kind")
        ns = _get(rec, "namespace")
        name = _get(rec, "object_name")
        if not name:
            return None
        if kind == "Workload":
            return self.workload_job(ns, name)
        if kind == "Pod":
            d = _details(rec)
            pod = d.get("pod") or {}
            labels = pod.get("labels") or d.get("labels") or self.pod_labels.get((ns, name))
            return job_of_pod(ns, name, labels, pod.get("annotations") or d.get("annotations"))
        if kind in JOB_KINDS:
            return qualified(ns, name)
        return None


def link_events(events: Iterable[Any]) -> list[Any]:
    """Set `job` on event records that lack one (Workload, Pod and job-kind objects). Returns the list."""
    records = list(events)
    index = _Index(records)
    for r in records:
        if not _get(r, "job"):
            job = index.job_of(r)
            if job:
                _set(r, "job", job)
    return records


# ---------------------------------------------------------------------------
# Signals: what one event record means for the gang


@dataclass
class _Signal:
    kind: str
    t: float
    rec: Any
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return _get(self.rec, "id")

    @property
    def time(self) -> str:
        return _get(self.rec, "time")


# Tie order at the same instant: what opens before what closes.
_ORDER = {
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
_NODES_MSG = re.compile(r"unhealthy node\(s\): (?P<nodes>.+)$")
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


def _classify(rec: Any) -> _Signal | None:
    t = epoch(_get(rec, "time"))
    if t is None:
        return None
    kind = _get(rec, "object_kind")
    reason = _get(rec, "reason") or ""
    msg = _get(rec, "message") or ""
    d = _details(rec)
    cond = d.get("condition") if _get(rec, "type") == "Condition" else None

    def sig(k: str, **info: Any) -> _Signal:
        return _Signal(k, t, rec, info)

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
                return sig("finished", reason=creason or "Finished", message=msg)
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
        if _get(rec, "type") == "Warning" and reason not in ("SecondPassFailed",):
            # Pending / Inadmissible / the newer QuotaReserved=False reasons, as events.
            return sig("pending", reason=reason, message=msg, blocked=reason in _BLOCK_REASONS)
        return None
    if kind in JOB_KINDS:
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
        return None
    if kind == "Pod":
        return _classify_pod(rec, t, reason, msg, d, cond)
    if kind == "Node":
        if reason == "NodeNotReady":
            return sig("node_not_ready", node=_get(rec, "object_name"), message=msg)
        if reason == "NodeReady":
            return sig("node_ready", node=_get(rec, "object_name"))
        if reason in ("OOMKilling", "Rebooted", "KernelOops", "SystemOOM"):
            return sig("node_problem", node=_get(rec, "object_name"), reason=reason, message=msg)
    return None


def _preemption(msg: str) -> dict[str, Any]:
    m = _PREEMPT_MSG.search(msg or "")
    if not m:
        return {}
    return {"preemptor_uid": m.group("uid") or None, "preemptor_job_uid": m.group("juid") or None,
            "why": m.group("why").strip(), "preemptor_path": m.group("ppath")}


def _classify_pod(rec: Any, t: float, reason: str, msg: str, d: dict, cond: dict | None) -> _Signal | None:
    def sig(k: str, **info: Any) -> _Signal:
        info.setdefault("message", msg)
        return _Signal(k, t, rec, info)

    if cond:
        ctype, status = cond.get("type"), cond.get("status")
        if ctype == "Ready":
            return sig("ready" if status == "True" else "not_ready", reason=cond.get("reason"))
        if ctype == "PodScheduled" and status == "False":
            return sig("unschedulable", reason=cond.get("reason"))
        if ctype == "PodScheduled" and status == "True":
            return sig("scheduled", node=_get(rec, "node"))
        if ctype == "DisruptionTarget" and status == "True":
            return sig("disrupted", reason=cond.get("reason"))
        return None
    if d.get("from") == "pod":
        if reason == "Created" and _get(rec, "type") == "Object":
            return sig("pod_created", pod=d.get("pod") or {})
        cs = d.get("container_state") or {}
        if cs.get("state") == "terminated":
            code = cs.get("exit_code")
            if reason == "OOMKilled" or (code not in (None, 0)):
                return sig("container_failed", container=_get(rec, "container"), exit_code=code, reason=reason,
                           init=cs.get("init"))
            return None
        if cs.get("state") == "waiting":
            if reason in ("ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull"):
                return sig("pull_failed", reason=reason)
            if reason == "CrashLoopBackOff":
                return sig("crashloop", container=_get(rec, "container"), init=cs.get("init"))
            if reason in ("CreateContainerConfigError", "CreateContainerError", "RunContainerError"):
                return sig("container_failed", container=_get(rec, "container"), reason=reason)
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
        return sig("container_failed", container=_get(rec, "container"), reason=msg.removeprefix("Error: "), init=init)
    if reason == "BackOff":
        if msg.startswith("Back-off pulling image"):
            return sig("pull_failed", reason="ImagePullBackOff")
        return sig("crashloop", container=_get(rec, "container"), init=init)
    if reason == "Started":
        if init:  # an init container running says nothing about the pod being up
            return None
        return sig("container_started", container=_get(rec, "container"))
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


# ---------------------------------------------------------------------------
# Attempts


_JOB_SIGNALS = {"created", "pending", "quota_reserved", "admitted", "pods_ready", "pods_not_ready", "preemptor",
                "deactivation_target", "evicted", "finished", "requeue_wait", "requeued", "pod_create_failed"}
_CLOSERS = {"evicted", "finished"}


def build_attempts(events: Iterable[Any], config: GangConfig | None = None) -> dict[str, list[Attempt]]:
    """Each job's attempts from its event records (any order, duplicates allowed).

    Sorts by time and deduplicates by id; links records to jobs (`link_events`).
    An admission opens an attempt; an eviction, finish or deactivation closes it;
    further reports of the same transition (event, condition, job event) join it.
    A job that was never admitted but was seen waiting gets one attempt without a
    start, so that the wait can be explained. No attempt comes from anything else.
    """
    cfg = config or GangConfig()
    everything = link_events(events)  # every copy gets its job, not only the first of each id
    unique: dict[str, Any] = {}
    for r in everything:
        rid = _get(r, "id")
        if rid and rid not in unique:
            unique[rid] = r
    records = list(unique.values())
    index = _Index(everything)
    by_job: dict[str, list[_Signal]] = {}
    pod_signals: dict[str, list[_Signal]] = {}
    node_signals: list[_Signal] = []
    untimed_pod_records: dict[str, list[Any]] = {}
    for r in records:
        s = _classify(r)
        job = _get(r, "job")
        if s is None:
            if job and _get(r, "object_kind") == "Pod" and _get(r, "time") is None:
                untimed_pod_records.setdefault(job, []).append(r)
            continue
        if s.kind in ("node_not_ready", "node_ready", "node_problem"):
            node_signals.append(s)
        elif not job:
            continue
        elif s.kind in _JOB_SIGNALS:
            by_job.setdefault(job, []).append(s)
        else:
            pod_signals.setdefault(job, []).append(s)
    node_signals.sort(key=lambda s: s.t)

    result: dict[str, list[Attempt]] = {}
    for job in sorted(set(by_job) | set(pod_signals)):
        sigs = sorted(by_job.get(job, []), key=lambda s: (s.t, _ORDER.get(s.kind, 5), s.id))
        ns = job.split("/", 1)[0] if "/" in job else None
        workload = _workload_of(job, ns, index)
        attempts = _cut_attempts(job, sigs, cfg, workload)
        pods = sorted(pod_signals.get(job, []), key=lambda s: (s.t, s.id))
        for i, a in enumerate(attempts):
            nxt = attempts[i + 1] if i + 1 < len(attempts) else None
            _gang_view(a, nxt, pods, node_signals, workload, index, untimed_pod_records.get(job, []), cfg)
        _requeue_view(attempts, workload, cfg)
        if attempts:
            result[job] = attempts
    _blocked_by(result)
    _resolve_preemptors(result, index, records)
    for attempts in result.values():
        total = accelerator_time_lost(attempts)
        for a in attempts:
            a.details["job_accelerator_s_lost"] = total
    return result


def _workload_of(job: str, ns: str | None, index: _Index) -> dict:
    """The latest Workload summary of a job (from Workload objects), or {}."""
    best = {}
    for (wns, wname), w in index.workloads.items():
        if wns == ns and index.workload_job(wns, wname) == job:
            best = w
    return best


def _cut_attempts(job: str, sigs: list[_Signal], cfg: GangConfig, workload: dict) -> list[Attempt]:
    """The attempts of one job from its job-level signals, sorted by time."""
    attempts: list[Attempt] = []
    cur: Attempt | None = None
    cur_t0 = 0.0
    hint: _Signal | None = None  # a sign the open attempt ended (Requeued=False, quota released after eviction)
    last_end: float | None = None
    waits: list[_Signal] = []  # created / pending / quota signals since the last attempt ended
    admission_counts: dict[tuple, int] = {}

    def close(at: _Signal, reason: str | None, info: dict, inferred: bool = False) -> None:
        nonlocal cur, hint, last_end
        assert cur is not None
        cur.end = at.time
        cur.end_reason = reason
        cur.details["end"] = {k: v for k, v in info.items() if v is not None}
        cur.details["end"]["event_ids"] = [at.id]
        if inferred:
            cur.details["end"]["inferred"] = True
        if at.id not in cur.event_ids:
            cur.event_ids.append(at.id)
        last_end = at.t
        cur = None
        hint = None

    def close_on_hint() -> None:
        assert hint is not None
        close(hint, hint.info.get("after_eviction") or hint.info.get("reason"), dict(hint.info), inferred=True)

    def same_as_last_close(s: _Signal) -> bool:
        return bool(attempts) and last_end is not None and abs(s.t - last_end) <= cfg.same_transition_s

    for s in sigs:
        k = s.kind
        if k == "admitted":
            if cur is not None and hint is not None:
                close_on_hint()
            if cur is not None:  # another report of the same admission
                cur.event_ids.append(s.id)
                continue
            number = attempts[-1].number + 1 if attempts else 1
            # An admission Event object folds identical admissions: its count-th one is at least attempt `count`.
            key = _event_key(s.rec)
            n = _get(s.rec, "count") or 1
            if key is not None:
                if n > admission_counts.get(key, 0):
                    number = max(number, n)
                admission_counts[key] = max(admission_counts.get(key, 0), n)
            cur = Attempt(job=job, number=number, start=s.time, end=None, end_reason=None, event_ids=[s.id],
                          details={"admitted_by": s.info.get("message")})
            missed = number - (attempts[-1].number if attempts else 0) - 1
            if missed > 0:
                cur.details["missed_attempts"] = missed
            if any(w.kind in ("created", "pending") for w in waits):
                cur.details["queued"] = _queued(waits, s)
            waits = []
            cur_t0 = s.t
            attempts.append(cur)
        elif k in _CLOSERS:
            reason = s.info.get("reason") if k == "evicted" else _finish_reason(s)
            if cur is not None and s.t >= cur_t0:
                close(s, reason, dict(s.info))
            elif same_as_last_close(s):
                _merge_close(attempts[-1], s, reason)
            elif cur is None and not attempts and k == "evicted":
                # An eviction whose admission is not in the input (events expire after an hour; a
                # Workload snapshot keeps only its latest conditions): the attempt it ended, start unknown.
                number = max(1, _evictions_recorded(workload))
                cur = Attempt(job=job, number=number, start=None, end=None, end_reason=None, event_ids=[],
                              details={"start_unknown": True})
                if number > 1:
                    cur.details["missed_attempts"] = number - 1
                attempts.append(cur)
                close(s, reason, dict(s.info))
        elif k == "requeue_wait":
            if cur is not None and s.t >= cur_t0:
                hint = s
            elif attempts:
                attempts[-1].event_ids.append(s.id)
        elif k == "pending":
            if cur is not None:
                if s.t > cur_t0 and s.info.get("after_eviction"):
                    hint = hint or s
            else:
                waits.append(s)
        elif k in ("created", "quota_reserved"):
            if cur is not None:
                cur.event_ids.append(s.id)
            else:
                waits.append(s)
        else:
            target = cur if cur is not None else (attempts[-1] if attempts else None)
            if target is None:
                continue
            target.event_ids.append(s.id)
            if k == "requeued" and cur is None:
                target.details.setdefault("requeued", []).append(
                    {"time": s.time, "reason": s.info.get("reason"), "message": s.info.get("message"), "event_id": s.id})
            elif k == "deactivation_target":
                target.details["deactivation_target"] = {"reason": s.info.get("reason"), "message": s.info.get("message")}
            elif k in ("pods_ready", "pods_not_ready") and cur is not None:
                target.details.setdefault("pods_ready", []).append(
                    {"time": s.time, "status": k == "pods_ready", "reason": s.info.get("reason"),
                     "message": s.info.get("message")})
            elif k == "preemptor":
                target.details.setdefault("preempted_others", []).append(
                    {"workload": s.info.get("victim"), "uid": s.info.get("victim_uid"), "time": s.time})
            elif k == "pod_create_failed":
                target.details.setdefault("pod_create_failed", []).append(
                    {"time": s.time, "message": s.info.get("message"), "event_id": s.id})
    if cur is not None and hint is not None:
        close_on_hint()
    if not attempts and any(w.kind == "pending" for w in waits):
        attempts.append(Attempt(job=job, number=1, start=None, end=None, end_reason=None,
                                event_ids=[w.id for w in waits], details={"pending": True, "queued": _queued(waits, None)}))
    elif attempts and any(w.kind == "pending" for w in waits):
        attempts[-1].details["waiting_since"] = _queued(waits, None)
    return attempts


def _merge_close(prev: Attempt, s: _Signal, reason: str | None) -> None:
    """Another report of the transition that closed `prev`: keep its ids, take what it adds."""
    if s.id not in prev.event_ids:
        prev.event_ids.append(s.id)
    end = prev.details.setdefault("end", {})
    end.setdefault("event_ids", []).append(s.id)
    if s.kind == "evicted":
        # Deactivated + its cause, a preemptor, a specific reason beat a generic or inferred one.
        if prev.end_reason in (None, "Evicted") or end.get("inferred") or (s.info.get("cause") and not end.get("cause")):
            prev.end_reason = reason or prev.end_reason
            end.pop("inferred", None)
        for key, v in s.info.items():
            if v is not None and not end.get(key):
                end[key] = v
    elif prev.end_reason == "Finished" and reason:
        prev.end_reason = reason


def _evictions_recorded(workload: dict) -> int:
    """How many evictions the Workload object counted (schedulingStats, else requeueState)."""
    stats = sum(e.get("count") or 0 for e in workload.get("evictions") or [] if isinstance(e.get("count"), int))
    rs = workload.get("requeue_state") or {}
    return max(stats, rs.get("count") if isinstance(rs.get("count"), int) else 0)


def _event_key(rec: Any) -> tuple | None:
    d = _details(rec)
    if d.get("from") != "event":
        return None
    return (d.get("uid") or d.get("name"),)


def _finish_reason(s: _Signal) -> str:
    r = s.info.get("reason") or "Finished"
    return {"Succeeded": "Finished"}.get(r, r)


def _queued(waits: list[_Signal], admitted: _Signal | None) -> dict[str, Any]:
    first = waits[0]
    out: dict[str, Any] = {
        "since": first.time,
        "reasons": sorted({w.info.get("reason") for w in waits if w.info.get("reason")}),
        "message": next((w.info.get("message") for w in reversed(waits) if w.kind == "pending" and w.info.get("message")),
                        None),
        "blocked": any(w.info.get("blocked") for w in waits),
        "blocked_at": [w.t for w in waits if w.info.get("blocked")],
        "event_ids": [w.id for w in waits],
    }
    if admitted is not None:
        out["waited_s"] = round(admitted.t - first.t, 3)
    return out


def _blocked_by(result: dict[str, list[Attempt]]) -> None:
    """Under blockAdmission, name the admitted-but-not-ready jobs a waiting job was held behind."""
    windows = []  # (job, admitted, ended, gang ready)
    for job, attempts in result.items():
        for a in attempts:
            if a.start:
                windows.append((job, epoch(a.start), epoch(a.end), epoch((a.details.get("gang") or {}).get("ready_at"))))
    for job, attempts in result.items():
        for a in attempts:
            for q in (a.details.get("queued"), a.details.get("waiting_since")):
                if not q:
                    continue
                at = q.pop("blocked_at", [])
                if not q.get("blocked"):
                    continue
                q["blocked_by"] = sorted({
                    other for t in at for other, s0, s1, ready in windows
                    if other != job and s0 is not None and s0 <= t and (s1 is None or t < s1)
                    and (ready is None or t < ready)
                })


# ---------------------------------------------------------------------------
# The gang view of one attempt


_BLOCKER_ORDER = ("unschedulable", "image_pull", "crash_before_ready", "volume", "readiness_probe",
                  "pod_create_failed", "slow")


def _gang_view(a: Attempt, nxt: Attempt | None, pod_sigs: list[_Signal], node_sigs: list[_Signal],
               workload: dict, index: _Index, untimed: list[Any], cfg: GangConfig) -> None:
    """Pods expected, ready and when, and the ones that never were and why, for one attempt."""
    expected = _expected(workload)
    t0 = epoch(a.start)
    t_end = epoch(a.end)
    if t0 is None:
        a.details["gang"] = {"pods_expected": expected, "pods_seen": 0, "ready": [], "ready_at": None,
                             "not_ready": [], "pods": {}}
        a.details["accelerators"] = _accelerator_use(a, {}, workload, cfg)
        return
    # An attempt's pod events run from its admission to the next admission (pods die after eviction).
    hi = epoch(nxt.start) if nxt is not None and nxt.start else float("inf")
    cut = t_end if t_end is not None else float("inf")
    pods: dict[str, dict[str, Any]] = {}
    for s in pod_sigs:
        if t0 - 1.0 <= s.t < hi:
            name = _get(s.rec, "object_name")
            p = pods.setdefault(name, {"events": [], "info": None, "ns": _get(s.rec, "namespace")})
            p["events"].append(s)
            if s.kind == "pod_created":
                p["info"] = s.info.get("pod") or {}
    # The gang was ready when Kueue said PodsReady=True, else when the last expected pod was.
    marks = a.details.get("pods_ready", [])
    ready_mark = next((m for m in marks if m["status"] and (epoch(m["time"]) or 0) <= cut), None)
    views = {}
    for name, p in sorted(pods.items()):
        snapshot = [r for r in untimed if _get(r, "object_name") == name] if p["info"] is not None else []
        views[name] = _pod_view(p["events"], p["info"] or index.pod_info.get((p["ns"], name)) or {}, cut, snapshot)
    ready = sorted((v["ready_at"], n) for n, v in views.items() if v.get("ready_at"))
    gang_ready = ready_mark["time"] if ready_mark else None
    need = expected or len(views)
    if gang_ready is None and need and len(ready) >= need and epoch(ready[-1][0]) <= cut:
        gang_ready = ready[-1][0]
    gang_ready_t = epoch(gang_ready)
    # Failures after the gang was ready (what WaitForRecovery waited for).
    for name, v in views.items():
        f = _failure_after(pods[name]["events"], v.get("node"), gang_ready_t, cut, node_sigs)
        if f is not None:
            v["failure"] = f
    phase = "WaitForStart"
    if gang_ready_t is not None or any(m.get("reason") == "WaitForRecovery" for m in marks):
        phase = "WaitForRecovery"
    cause = (a.details.get("end") or {}).get("cause")
    if cause in ("WaitForStart", "WaitForRecovery"):
        phase = cause
    not_ready = []
    for n, v in views.items():
        b = v.get("failure") if phase == "WaitForRecovery" else v.get("blocker")
        if b:
            not_ready.append({"pod": n, **b})
    if phase == "WaitForStart" and not not_ready and a.end_reason in ("PodsReadyTimeout", "Deactivated"):
        for n, v in views.items():  # nothing failed: whoever was not ready was just slow
            if not v.get("ready_at"):
                not_ready.append({"pod": n, "kind": "slow", "message": v.get("last"), "time": v.get("last_time"),
                                  "event_id": v.get("last_id"), "reason": None})
    for pc in a.details.get("pod_create_failed", []):
        if t0 <= (epoch(pc["time"]) or 0) <= cut:
            not_ready.append({"pod": None, "kind": "pod_create_failed", "message": pc["message"], "time": pc["time"],
                              "event_id": pc["event_id"], "reason": None})
    not_ready.sort(key=lambda b: (_BLOCKER_ORDER.index(b["kind"]) if b["kind"] in _BLOCKER_ORDER else -1,
                                  epoch(b.get("since") or b.get("time")) or 0.0, b["pod"] or ""))
    gang = {
        "pods_expected": expected or (len(views) or None),
        "pods_seen": len(views),
        "ready": [{"pod": n, "at": t} for t, n in ready],
        "ready_at": gang_ready,
        "phase": phase,
        "not_ready": not_ready,
        "pods": {n: {k: v for k, v in pv.items() if k not in ("evidence", "last", "last_time", "last_id")}
                 for n, pv in views.items()},
    }
    if expected and len(views) < expected:
        gang["missing_pods"] = expected - len(views)
    for v in views.values():
        a.event_ids.extend(e for e in v["evidence"] if e not in a.event_ids)
    for name, v in views.items():
        f = v.get("failure") or {}
        if f.get("node_event_id"):
            # The Node's own event belongs to no job; the job whose pod it took down is the one it explains.
            node_rec = next((n.rec for n in node_sigs if n.id == f["node_event_id"]), None)
            if node_rec is not None and not _get(node_rec, "job"):
                _set(node_rec, "job", a.job)
            if f["node_event_id"] not in a.event_ids:
                a.event_ids.append(f["node_event_id"])
    a.details["gang"] = gang
    a.details["accelerators"] = _accelerator_use(a, views, workload, cfg)


def _expected(workload: dict) -> int | None:
    counts = [ps.get("count") for ps in workload.get("pod_sets", []) if isinstance(ps.get("count"), int)]
    return sum(counts) if counts else None


def _pod_view(events: list[_Signal], info: dict, cut: float, snapshot: list[Any]) -> dict[str, Any]:
    """One pod in one attempt: scheduled, pulled, started, ready; and what kept it from being ready."""
    v: dict[str, Any] = {"node": info.get("node"), "evidence": []}
    if info.get("accelerators"):
        v["accelerators"] = info["accelerators"]
    last: dict[str, _Signal] = {}
    first: dict[str, _Signal] = {}
    for s in events:
        if s.t > cut + 1.0:
            break
        v["evidence"].append(s.id)
        if s.kind != "pod_created":
            v["last"], v["last_time"], v["last_id"] = _get(s.rec, "message"), s.time, s.id
        k = s.kind
        if k == "pull_failed":
            # "Failed to pull image ..." says why; the "Error: ImagePullBackOff" / BackOff that follow only repeat it.
            prev = last.get(k)
            if prev is not None and _says_why(prev) and not _says_why(s):
                continue
        last[k] = s
        first.setdefault(k, s)
        if k == "scheduled" and s.info.get("node"):
            v["node"] = s.info["node"]
    sched, unsched = last.get("scheduled"), last.get("unschedulable")
    pulled, pull_fail, pulling = last.get("pulled"), last.get("pull_failed"), last.get("pulling")
    # A container status (exit code, OOMKilled) says more than "Back-off restarting failed container".
    crash = last.get("container_failed") or last.get("crashloop")
    started, ready = first.get("container_started"), first.get("ready")
    if sched is not None:
        v["scheduled_at"] = sched.time
    if started is not None:
        v["started_at"] = started.time
    if ready is not None:
        v["ready_at"] = ready.time
    elif started is not None and crash is None and pull_fail is None:
        v["ready_at"] = started.time  # no readiness reported: a container that started and stayed up
        v["ready_from"] = "started"
    blocker = None
    if unsched is not None and (sched is None or sched.t < unsched.t):
        blocker = _blocker("unschedulable", unsched)
    elif pull_fail is not None and (pulled is None or pulled.t < pull_fail.t):
        blocker = _blocker("image_pull", pull_fail)
    elif crash is not None and (ready is None or ready.t > crash.t):
        blocker = _blocker("crash_before_ready", crash)
        blocker["container"] = crash.info.get("container") or _get(crash.rec, "container")
        if crash.info.get("init"):
            blocker["init"] = True
        if crash.info.get("exit_code") is not None:
            blocker["exit_code"] = crash.info["exit_code"]
    elif "mount_failed" in last and started is None:
        blocker = _blocker("volume", last["mount_failed"])
    elif "unhealthy" in last and ready is None and started is not None and "ready_at" not in v:
        blocker = _blocker("readiness_probe", last["unhealthy"])
    elif pulling is not None and pulled is None:
        blocker = _blocker("slow", pulling)
        blocker["detail"] = "image still pulling"
    if blocker is None and "ready_at" not in v:
        # Only a snapshot of the pod says what it waits for (a waiting container has no time of its own).
        for r in snapshot:
            cs = _details(r).get("container_state") or {}
            why = _get(r, "reason")
            if cs.get("state") == "waiting" and why in ("ErrImagePull", "ImagePullBackOff", "InvalidImageName"):
                blocker = {"kind": "image_pull", "message": _get(r, "message") or why, "time": None,
                           "event_id": _get(r, "id"), "reason": why}
            elif cs.get("state") == "waiting" and why == "CrashLoopBackOff":
                blocker = {"kind": "crash_before_ready", "message": _get(r, "message") or why, "time": None,
                           "event_id": _get(r, "id"), "reason": why, "container": _get(r, "container")}
            if blocker:
                break
    if blocker is not None and "ready_at" not in v:
        # When it began: the first report of that trouble in this attempt (the blocker itself is the latest).
        kinds = {"unschedulable": ("unschedulable",), "image_pull": ("pull_failed",),
                 "crash_before_ready": ("crashloop", "container_failed"), "volume": ("mount_failed",),
                 "readiness_probe": ("unhealthy",), "slow": ("pulling",)}.get(blocker["kind"], ())
        firsts = [first[k] for k in kinds if k in first]
        if firsts:
            blocker["since"] = min(firsts, key=lambda s: s.t).time
        v["blocker"] = blocker
    return v


def _says_why(s: _Signal) -> bool:
    return (_get(s.rec, "message") or "").startswith("Failed to pull image")


def _failure_after(events: list[_Signal], node: str | None, ready_t: float | None, cut: float,
                   node_sigs: list[_Signal]) -> dict | None:
    """The first failure of a pod after the gang was ready: its node lost, evicted, or a crash."""
    if ready_t is None:
        return None
    found = None
    for s in events:
        if s.t < ready_t or s.t > cut + 1.0:
            continue
        if s.kind == "pod_node_lost":
            found = _blocker("node_lost", s)
            break
        if s.kind in ("pod_evicted", "disrupted") and found is None:
            found = _blocker("evicted", s)
        if s.kind in ("container_failed", "crashloop") and found is None:
            found = _blocker("crash_after_start", s)
    if node:
        lost = next((n for n in node_sigs if n.kind == "node_not_ready" and n.info.get("node") == node
                     and ready_t <= n.t <= cut + 1.0), None)
        if lost is not None and (found is None or found["kind"] != "node_lost" or lost.t < epoch(found["time"])):
            found = _blocker("node_lost", lost)
        if lost is not None and found is not None and found["kind"] == "node_lost":
            found["node_event_id"] = lost.id
    if found is not None:
        found["node"] = node
    return found


def _blocker(kind: str, s: _Signal) -> dict[str, Any]:
    reason = s.info.get("reason")
    return {"kind": kind, "message": _get(s.rec, "message"), "time": s.time, "event_id": s.id,
            "reason": reason if isinstance(reason, str) else None}


def _accelerator_use(a: Attempt, views: dict[str, dict], workload: dict, cfg: GangConfig) -> dict[str, Any]:
    """Pods x accelerators x admitted seconds for this attempt (lost when it did not finish)."""
    t0, t1 = epoch(a.start), epoch(a.end)
    per_pod = [sum(v["accelerators"].values()) for v in views.values() if v.get("accelerators")]
    expected = _expected(workload)
    if per_pod and len(per_pod) == len(views):
        pods = max(len(views), expected or 0)
        avg = sum(per_pod) / len(per_pod)
        total = sum(per_pod) + avg * (pods - len(views))
        source = "pods"
    elif workload.get("pod_sets") and any(ps.get("accelerators") for ps in workload["pod_sets"]):
        pods = expected or len(views) or 1
        total = sum((ps.get("count") or 0) * sum((ps.get("accelerators") or {}).values()) for ps in workload["pod_sets"])
        source = "workload"
    else:
        pods = expected or len(views) or 1
        total = pods * cfg.default_accelerators_per_pod
        source = "default"
    seconds = (t1 - t0) if (t0 is not None and t1 is not None) else None
    lost = a.end_reason in EVICTION_ENDS or a.end_reason == "Failed"
    return {
        "pods": pods,
        "accelerators": total,
        "source": source,
        "admitted_s": round(seconds, 3) if seconds is not None else None,
        "accelerator_s_lost": round(total * seconds, 3) if (lost and seconds is not None) else 0.0,
    }


def accelerator_time_lost(attempts: Iterable[Attempt]) -> float:
    """Accelerator-seconds lost over a job's attempts (admission to eviction of those that did not finish)."""
    return round(sum((a.details.get("accelerators") or {}).get("accelerator_s_lost") or 0.0 for a in attempts), 3)


# ---------------------------------------------------------------------------
# Requeues


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


def _requeue_view(attempts: list[Attempt], workload: dict, cfg: GangConfig) -> None:
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
        t_end = epoch(a.end)
        if nxt is not None and nxt.start and t_end is not None:
            r["readmitted_after_s"] = round(epoch(nxt.start) - t_end, 3)
        backoff_done = next((q for q in a.details.get("requeued", []) if q.get("reason") == "BackoffFinished"), None)
        if backoff_done and t_end is not None:
            r["backoff_s"] = round(epoch(backoff_done["time"]) - t_end, 3)
        if a.end_reason == "PodsReadyTimeout" and nxt is None:
            rs = workload.get("requeue_state") or {}
            if rs.get("requeueAt") and t_end is not None:
                r["next_retry_s"] = round(epoch(rs["requeueAt"]) - t_end, 3)
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


# ---------------------------------------------------------------------------
# Stamping records with their attempt


def attempt_lookup(attempts_by_job: Mapping[str, list[Attempt]]) -> Callable[[str | None, str | None], int]:
    """A function (job, RFC 3339 time) -> the attempt number that time falls in.

    An attempt runs from its admission to the next admission, so that what its pods
    print while being torn down still belongs to it; times before the first admission
    belong to the first attempt; a job without admissions, or a record without a
    time, is attempt 1 (the first attempt's number when the job has one).
    """
    keys: dict[str, tuple[list[str], list[float], list[int]]] = {}
    first: dict[str, int] = {}
    for job, attempts in attempts_by_job.items():
        if attempts:
            first[job] = min(a.number for a in attempts)
        pairs = sorted((t, a.number) for a in attempts if (t := epoch(a.start)) is not None)
        if pairs:
            keys[job] = ([_iso(t)[:19] for t, _ in pairs], [t for t, _ in pairs], [n for _, n in pairs])

    def lookup(job: str | None, time: str | None) -> int:
        st = keys.get(job) if job else None
        if st is None:
            return first.get(job, 1) if job else 1
        if not time:
            return first[job]
        if time[-1] in "Zz" and len(time) >= 20:
            # Hot path: UTC times compare as text; a boundary is only ever a second wide.
            i = bisect.bisect_right(st[0], time[:19]) - 1
        else:
            t = epoch(time)
            if t is None:
                return first[job]
            i = bisect.bisect_right(st[1], t) - 1
        return st[2][max(i, 0)]

    return lookup


def assign_attempts(records: Iterable[Any], attempts_by_job: Mapping[str, list[Attempt]]) -> None:
    """Set each record's `attempt` to the attempt its time falls in (see `attempt_lookup`)."""
    lookup = attempt_lookup(attempts_by_job)
    for r in records:
        _set(r, "attempt", lookup(_get(r, "job"), _get(r, "time")))


# ---------------------------------------------------------------------------
# The scheduler's verdict on one attempt


_HISTOGRAM_ITEM = re.compile(r", (?=\d+ )")


def scheduler_reasons(message: str | None) -> dict[str, int]:
    """The node-count histogram of a FailedScheduling message: {"Insufficient nvidia.com/gpu": 3, ...}."""
    if not message or "nodes are available: " not in message:
        return {}
    body = message.split("nodes are available: ", 1)[1].split(" preemption: ", 1)[0].strip()
    body = body[:-1] if body.endswith(".") else body
    out = {}
    for item in _HISTOGRAM_ITEM.split(body):
        n, _, reason = item.partition(" ")
        if n.isdigit() and reason:
            out[reason.strip()] = int(n)
    return out


def _scheduler_reason(message: str | None) -> str | None:
    """The scheduler's main reason in a FailedScheduling message: 'Insufficient nvidia.com/gpu', a taint, ...

    FitError.Error() (kubernetes pkg/scheduler/framework/types.go) is "0/N nodes are available: " + a
    sorted "<count> <reason>" histogram joined by ", " + "." [+ " preemption: ..."]. The reason with the
    most nodes wins; ties go to a missing resource, which is what more nodes would fix.
    """
    reasons = scheduler_reasons(message)
    if not reasons:
        return None
    return max(reasons.items(), key=lambda kv: (kv[1], kv[0].startswith("Insufficient"), kv[0]))[0]


def _log_cause(records: Iterable[Any], pod: str | None, t0: float | None, t1: float | None) -> dict | None:
    """What a pod's own logs said in the window: its first traceback, else its first error line."""
    if not pod:
        return None
    best_trace = best_error = None
    for r in records:
        if _get(r, "pod") != pod:
            continue
        kind = _get(r, "kind")
        if kind not in ("trace", "error"):
            continue
        t = epoch(_get(r, "time"))
        if t is not None and ((t0 is not None and t < t0 - 1.0) or (t1 is not None and t > t1 + 1.0)):
            continue
        key = (t if t is not None else 0.0)
        if kind == "trace":
            et = _get(r, "exception_type") or ""
            if "ChildFailedError" in et:  # torchrun's summary points at the real error; prefer that
                key += 1e9
            if best_trace is None or key < best_trace[0]:
                best_trace = (key, r)
        elif best_error is None or key < best_error[0]:
            best_error = (key, r)
    pick = best_trace or best_error
    if pick is None:
        return None
    r = pick[1]
    kind = _get(r, "kind")
    text = (f"{_get(r, 'exception_type')}: {_get(r, 'message') or ''}".strip().rstrip(":")
            if kind == "trace" else (_get(r, "message") or _get(r, "line") or ""))
    return {"record_id": _get(r, "id"), "kind": kind, "pod": pod, "rank": _get(r, "rank"), "time": _get(r, "time"),
            "text": text, "exception_type": _get(r, "exception_type") if kind == "trace" else None,
            "category": _get(r, "category") if kind == "error" else None, "node": _get(r, "node")}


# kubelet "Failed to pull image %q: %v" with a CRI gRPC error "rpc error: code = %s desc = %s".
_PULL_FAILED = re.compile(r'Failed to pull image "(?P<image>[^"]+)": (?:rpc error: code = (?P<code>\w+) desc = )?(?P<desc>.*)$')


def _cause_phrase(b: dict, logs: dict | None) -> str:
    kind = b["kind"]
    pod = b.get("pod")
    msg = b.get("message") or ""
    if kind == "unschedulable":
        why = _scheduler_reason(msg)
        return f"pod {pod} could not be scheduled" + (f" ({why})" if why else "")
    if kind == "image_pull":
        m = _PULL_FAILED.match(msg)
        if m:  # the image, and the innermost error (containerd wraps it: "...: <ref>: not found")
            why = m.group("desc").rsplit(": ", 1)[-1]
            code = f" (rpc error code {m.group('code')})" if m.group("code") else ""
            return f'pod {pod} could not pull image "{m.group("image")}": {_short(why, 120)}{code}'
        return f"pod {pod} could not pull its image" + (f": {_short(msg)}" if msg else "")
    if kind == "crash_before_ready":
        ctr = "init container" if b.get("init") else "container"
        what = f"{ctr} {b['container']} of pod {pod}" if b.get("container") else f"pod {pod}"
        how = ""
        if b.get("reason") == "OOMKilled":
            how = " (OOMKilled)"
        elif b.get("exit_code") not in (None, 0):
            how = f" (exit code {b['exit_code']})"
        said = f"; its log: {_short(logs['text'])}" if logs else ""
        return f"{what} crashed before it was ready{how}{said}"
    if kind == "volume":
        return f"pod {pod} could not mount a volume: {_short(msg)}"
    if kind == "readiness_probe":
        return f"pod {pod} failed its readiness probe: {_short(msg)}"
    if kind == "pod_create_failed":
        return f"pods could not be created: {_short(msg)}"
    if kind == "slow":
        detail = b.get("detail") or (f"last: {_short(msg)}" if msg else "no failure reported")
        return f"pod {pod} was still not ready ({detail}); the pods were just slow"
    if kind == "node_lost":
        return f"node {b.get('node')} of pod {pod} went NotReady"
    if kind in ("crash_after_start", "evicted"):
        said = f"; its log: {_short(logs['text'])}" if logs else ""
        return f"pod {pod} failed after the gang had started ({_short(msg)}){said}"
    return f"pod {pod}: {_short(msg)}"


def _n(count: float, noun: str) -> str:
    return f"{count:g} {noun}" + ("" if count == 1 else "s")


def _short(text: str, n: int = 160) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= n else text[: n - 1] + "…"


def scheduler_verdict(attempt: Any, records: Iterable[Any] = (), config: GangConfig | None = None,
                      attempts: list[Attempt] | None = None) -> dict | None:
    """A scheduler-level root cause for an attempt that was evicted, deactivated or never admitted.

    Returns a dict shaped like a SPEC diagnosis (job, attempt, outcome, category,
    exception_type, first_failure, summary, evidence, symptoms, events, confidence,
    details), or None when the attempt ended on its own (finished, failed, running):
    then the logs tell the story. `records` are the job's curated log records (their
    errors and traces say why a pod crashed before it was ready); `attempts` are all
    of the job's attempts, for the job's total accelerator time.
    """
    cfg = config or GangConfig()
    d = getattr(attempt, "details", None) or {}
    job = getattr(attempt, "job", None)
    number = getattr(attempt, "number", 1)
    records = list(records)
    if d.get("pending"):
        return _pending_verdict(attempt, d)
    end_reason = getattr(attempt, "end_reason", None)
    if end_reason not in EVICTION_ENDS:
        return None
    end = d.get("end") or {}
    gang = d.get("gang") or {}
    requeue = d.get("requeue") or {}
    t0, t1 = epoch(getattr(attempt, "start", None)), epoch(getattr(attempt, "end", None))
    blockers = gang.get("not_ready") or []
    phase = gang.get("phase") or end.get("cause") or "WaitForStart"
    evidence: list[dict] = []
    exception_type = None
    first_failure = None
    confidence = 0.6
    category = "unknown"

    def event_evidence(b: dict) -> None:
        evidence.append({"record_id": b.get("event_id"), "kind": "event", "pod": b.get("pod"), "rank": None,
                         "time": b.get("time"), "text": b.get("message")})

    if end_reason == "Preempted":
        category = "preempted"
        by = _preemptor(attempt, d, attempts)
        why = end.get("why")
        summary = "Preempted by Kueue" + (f" to admit {by['job']}" if by and by.get("job") else
                                          (f" to admit workload UID {by['uid']}" if by and by.get("uid") else ""))
        summary += f" ({why})." if why else "."
        confidence = 0.95
        d_extra = {"preempted_by": by}
    elif end_reason == "NodeFailures" or (phase == "WaitForRecovery" and any(b["kind"] == "node_lost" for b in blockers)):
        category = "node_failure"
        nodes = []
        m = _NODES_MSG.search(end.get("message") or "")
        if m:
            nodes = [n.strip() for n in m.group("nodes").split(",") if n.strip()]
        lost = [b for b in blockers if b["kind"] == "node_lost"]
        nodes += [b.get("node") for b in lost if b.get("node") and b.get("node") not in nodes]
        b = lost[0] if lost else None
        if b:
            first_failure = {"pod": b["pod"], "rank": None, "node": b.get("node"), "time": b.get("time")}
            event_evidence(b)
        what = ", ".join(nodes) if nodes else "a node"
        summary = f"Node {what} went NotReady under the running job"
        if b:
            summary += f" (pod {b['pod']})"
        summary += ("; the gang did not recover within recoveryTimeout and Kueue evicted it (WaitForRecovery)."
                    if end_reason == "PodsReadyTimeout" else "; Kueue evicted the workload (NodeFailures).")
        confidence = 0.9
        d_extra = {"nodes": nodes}
    elif end_reason in ("PodsReadyTimeout", "Deactivated") and (
            end_reason == "PodsReadyTimeout" or end.get("cause") == "RequeuingLimitExceeded"):
        category = "pods_ready_timeout"
        b = blockers[0] if blockers else None
        logs = _log_cause(records, b.get("pod") if b else None, t0, t1) if b else None
        if b:
            first_failure = {"pod": b.get("pod"), "rank": logs.get("rank") if logs else None,
                             "node": (gang.get("pods", {}).get(b.get("pod") or "", {}) or {}).get("node"),
                             "time": (logs or {}).get("time") or b.get("since") or b.get("time")}
            event_evidence(b)
            if logs:
                evidence.append({k: logs[k] for k in ("record_id", "kind", "pod", "rank", "time", "text")})
                exception_type = logs.get("exception_type")
            confidence = 0.9 if b["kind"] != "slow" else 0.6
            cause = _cause_phrase(b, logs)
        else:
            cause = "no pod reported a failure (no pod events for this attempt)"
            confidence = 0.4
        if phase == "WaitForRecovery":
            head = "A pod failed after the gang had started and the gang did not recover within recoveryTimeout (WaitForRecovery)"
        else:
            ready_n = len(gang.get("ready") or [])
            exp = gang.get("pods_expected")
            head = "The gang never became ready within the PodsReady timeout (WaitForStart" + (
                f", {ready_n}/{exp} pods ready)" if exp else ")")
        summary = f"{head}: {cause}."
        d_extra = {"cause": {k: v for k, v in (b or {}).items()}, "logs": logs}
        if b and b["kind"] == "unschedulable":
            d_extra["cause"]["scheduler_reasons"] = scheduler_reasons(b.get("message"))
        if b and b["kind"] == "crash_before_ready" and logs and logs.get("text"):
            d_extra["cause"]["log_text"] = logs["text"]
    else:
        category = "preempted" if end_reason in ("ClusterQueueStopped", "LocalQueueStopped", "AdmissionCheck",
                                                 "FlavorMigration", "EvictedOnManagerCluster") else "unknown"
        summary = f"Kueue evicted the workload ({end_reason}{', ' + end['cause'] if end.get('cause') else ''})" + (
            f": {_short(end['message'])}" if end.get("message") else ".")
        confidence = 0.7
        d_extra = {}
    summary = summary.rstrip(".") + "." + _loop_phrase(end_reason, requeue, end)
    acc = d.get("accelerators") or {}
    job_lost = accelerator_time_lost(attempts) if attempts else d.get("job_accelerator_s_lost", acc.get("accelerator_s_lost", 0.0))
    if acc.get("accelerator_s_lost"):
        summary += (f" Lost {acc['accelerator_s_lost'] / 3600:.2f} accelerator-hours "
                    f"({_n(acc['pods'], 'pod')} x {_n(acc['accelerators'] / max(acc['pods'], 1), 'accelerator')}"
                    f" x {acc['admitted_s']:.0f} s admitted"
                    f"{', accelerators per pod assumed' if acc.get('source') == 'default' else ''}).")
    for eid in end.get("event_ids", []):
        evidence.append({"record_id": eid, "kind": "event", "pod": None, "rank": None, "time": getattr(attempt, "end", None),
                         "text": end.get("message")})
        break
    details = {
        "source": "gang",
        "end_reason": end_reason,
        "eviction": {k: v for k, v in end.items() if k != "event_ids"},
        "phase": phase if end_reason in ("PodsReadyTimeout", "Deactivated") else None,
        "gang": {k: gang.get(k) for k in ("pods_expected", "pods_seen", "ready", "ready_at", "not_ready", "missing_pods")
                 if k in gang},
        "requeue": requeue,
        "accelerators": acc,
        "accelerator_s_lost": acc.get("accelerator_s_lost", 0.0),
        "job_accelerator_s_lost": job_lost,
        **d_extra,
    }
    return {
        "job": job,
        "attempt": number,
        "outcome": "evicted",
        "category": category,
        "exception_type": exception_type,
        "first_failure": first_failure,
        "summary": summary,
        "evidence": [e for e in evidence if e.get("record_id")],
        "symptoms": [],
        "events": list(getattr(attempt, "event_ids", []) or []),
        "confidence": confidence,
        "details": details,
    }


def diagnosis_record(verdict: dict, symptoms: list[dict] | None = None) -> Any:
    """A `scheduler_verdict` as a DiagnosisRecord (same id as any other diagnosis of that job attempt)."""
    from gangscope.parsers.records import DiagnosisRecord, stable_id

    job, number = verdict["job"], verdict["attempt"]
    first = verdict.get("first_failure") or {}
    return DiagnosisRecord(
        id=stable_id("diagnosis", job, number), job=job, attempt=number,
        namespace=job.split("/", 1)[0] if job and "/" in job else None,
        pod=first.get("pod"), node=first.get("node"), rank=first.get("rank"), time=first.get("time"),
        outcome=verdict["outcome"], category=verdict["category"], exception_type=verdict.get("exception_type"),
        first_failure=verdict.get("first_failure"), summary=verdict["summary"], evidence=verdict["evidence"],
        symptoms=symptoms if symptoms is not None else verdict.get("symptoms", []), events=verdict["events"],
        confidence=verdict["confidence"], details=verdict.get("details"),
    )


def _loop_phrase(end_reason: str, r: dict, end: dict) -> str:
    parts = []
    streak = r.get("same_cause_streak") or 0
    if streak >= 2:
        parts.append(f"evicted {streak} times for the same cause")
    if r.get("deactivated"):
        parts.append(f"deactivated after {r.get('deactivated_after')} requeues (backoffLimitCount reached)")
    else:
        if r.get("next_retry_s") is not None:
            approx = "" if r.get("next_retry_from") == "requeueState" else "about "
            parts.append(f"next retry in {approx}{r['next_retry_s']:.0f} s")
        elif r.get("readmitted_after_s") is not None and end_reason == "PodsReadyTimeout":
            parts.append(f"readmitted after {r['readmitted_after_s']:.0f} s")
        if r.get("deactivated_after") is not None:
            parts.append(f"deactivated after {r['deactivated_after']} requeues")
    if not parts:
        return ""
    text = "; ".join(parts)
    return " " + text[0].upper() + text[1:] + "."


def _preemptor(attempt: Any, d: dict, attempts: list[Attempt] | None) -> dict | None:
    end = d.get("end") or {}
    by = {"uid": end.get("preemptor_uid"), "job_uid": end.get("preemptor_job_uid"), "job": end.get("preemptor_job"),
          "why": end.get("why")}
    return by if any(by.values()) else None


def _pending_verdict(attempt: Any, d: dict) -> dict | None:
    q = d.get("queued") or {}
    blockers = q.get("blocked_by") or []
    if q.get("blocked"):
        who = ", ".join(blockers) if blockers else "another admitted workload"
        summary = (f"Not admitted yet: waitForPodsReady.blockAdmission holds every new workload until {who} "
                   f"reaches PodsReady (waiting since {q.get('since')}).")
        waiting = f" ({_short(q.get('message') or '')})" if q.get("message") else ""
        summary = summary.rstrip(".") + waiting + "."
    else:
        summary = f"Not admitted yet: {_short(q.get('message') or 'waiting for quota')} (since {q.get('since')})."
    return {
        "job": getattr(attempt, "job", None), "attempt": getattr(attempt, "number", 1), "outcome": "running",
        "category": "unknown", "exception_type": None, "first_failure": None, "summary": summary,
        "evidence": [], "symptoms": [], "events": list(getattr(attempt, "event_ids", []) or []),
        "confidence": 0.8 if q.get("blocked") else 0.6,
        "details": {"source": "gang", "pending": True, "queued": q},
    }


def _resolve_preemptors(attempts_by_job: Mapping[str, list[Attempt]], index: _Index, records: list[Any]) -> None:
    """Name the job that preempted each preempted attempt: by workload or job UID, or its PreemptedWorkload event."""
    victims: dict[str, str] = {}  # "ns/workload" -> preemptor job
    for job, attempts in attempts_by_job.items():
        for a in attempts:
            for p in a.details.get("preempted_others", []):
                if p.get("workload"):
                    victims[p["workload"]] = job
    own: dict[str, set[str]] = {}  # job -> its workloads, "ns/name"
    for r in records:
        if _get(r, "object_kind") == "Workload" and _get(r, "job"):
            own.setdefault(_get(r, "job"), set()).add(f"{_get(r, 'namespace')}/{_get(r, 'object_name')}")
    for job, attempts in attempts_by_job.items():
        mine = own.get(job, set())
        for a in attempts:
            if a.end_reason != "Preempted":
                continue
            end = a.details.setdefault("end", {})
            by = None
            uid, juid = end.get("preemptor_uid"), end.get("preemptor_job_uid")
            if uid and uid in index.workload_by_uid:
                by = index.workload_job(*index.workload_by_uid[uid])
            elif juid and juid in index.job_by_uid:
                by = index.job_by_uid[juid]
            else:
                by = next((victims[w] for w in sorted(mine) if w in victims), None)
            if by and by != job:
                end["preemptor_job"] = by


# ---------------------------------------------------------------------------
# Timeline for the report


_MARK_KINDS = {
    "admitted": "admitted", "evicted": "evicted", "requeued": "requeued", "requeue_wait": "requeue",
    "finished": "finished", "pending": "pending", "deactivation_target": "deactivated", "pods_ready": "ready",
}


def timeline(job: str, attempts: Any = None, events: Iterable[Any] = (), failures: Iterable[Any] = ()) -> dict:
    """Attempts, gang events and log-derived failures of one job on one time axis (x in 0..1).

    `events` are event records (any job; this job's are used), `failures` are error /
    trace records or diagnosis dicts with a time. `attempts` are the job's attempts from
    `build_attempts`; when omitted, or when event records are passed in their place
    (`timeline(job, events)`), they are built from the events. templates/timeline.html.j2
    renders the result.
    """
    if attempts is not None and not isinstance(attempts, Mapping):
        items = list(attempts)
        if items and not all(isinstance(a, Attempt) for a in items):
            events, attempts = items, None
        else:
            attempts = items
    events = list(events)
    if attempts is None:
        attempts = build_attempts(events).get(job, [])
    elif isinstance(attempts, Mapping):
        attempts = attempts.get(job, [])
    marks = []
    for r in events:
        if _get(r, "job") != job:
            continue
        s = _classify(r)
        if s is None or s.kind not in _MARK_KINDS:
            continue
        label = _get(r, "reason") or s.kind
        if _get(r, "type") == "Condition":
            c = (_details(r).get("condition") or {})
            label = f"{c.get('type')}={c.get('status')} {c.get('reason') or ''}".strip()
        marks.append({"t": s.t, "time": s.time, "kind": _MARK_KINDS[s.kind], "label": label,
                      "message": _short(_get(r, "message") or "", 200), "event_id": s.id})
    fails = []
    for f in failures:
        t = epoch(_get(f, "time") or (_get(f, "first_failure") or {}).get("time"))
        if t is None:
            continue
        text = _get(f, "summary") or _get(f, "exception_type") or _get(f, "message") or _get(f, "category") or ""
        if _get(f, "exception_type") and _get(f, "message"):
            text = f"{_get(f, 'exception_type')}: {_get(f, 'message')}"
        fails.append({"t": t, "time": _iso(t), "pod": _get(f, "pod") or (_get(f, "first_failure") or {}).get("pod"),
                      "category": _get(f, "category"), "label": _short(str(text), 200), "id": _get(f, "id"),
                      "attempt": _get(f, "attempt"), "from": "logs"})
    for a in attempts:
        for b in (a.details.get("gang") or {}).get("not_ready", []):
            when = b.get("since") or b.get("time")
            t = epoch(when)
            if t is not None:
                fails.append({"t": t, "time": when, "pod": b.get("pod"), "category": b["kind"],
                              "label": _short(b.get("message") or b["kind"], 200), "id": b.get("event_id"),
                              "attempt": a.number, "from": "gang"})
    times = [m["t"] for m in marks] + [f["t"] for f in fails]
    for a in attempts:
        for ts in (a.start, a.end, (a.details.get("queued") or {}).get("since")):
            if epoch(ts) is not None:
                times.append(epoch(ts))
    if not times:
        return {"job": job, "start": None, "end": None, "span_s": 0, "attempts": [], "marks": [], "failures": [],
                "ticks": [], "accelerator_s_lost": accelerator_time_lost(attempts)}
    t0, t1 = min(times), max(times)
    span = max(t1 - t0, 1.0)

    def x(t: float) -> float:
        return round((t - t0) / span, 4)

    bars = []
    for a in attempts:
        s, e = epoch(a.start), epoch(a.end)
        q = a.details.get("queued") or {}
        qs = epoch(q.get("since"))
        bars.append({
            "number": a.number, "start": a.start, "end": a.end, "end_reason": a.end_reason,
            "x0": x(s) if s is not None else None, "x1": x(e) if e is not None else 1.0,
            "queued_x0": x(qs) if qs is not None else None,
            "pending": bool(a.details.get("pending")),
            "accelerator_s_lost": (a.details.get("accelerators") or {}).get("accelerator_s_lost", 0.0),
            "pods_ready": len((a.details.get("gang") or {}).get("ready") or []),
            "pods_expected": (a.details.get("gang") or {}).get("pods_expected"),
            "label": a.end_reason or ("waiting" if a.details.get("pending") else "running"),
        })
    for m in marks:
        m["x"] = x(m.pop("t"))
    for f in fails:
        f["x"] = x(f.pop("t"))
    marks.sort(key=lambda m: (m["x"], m["kind"]))
    fails.sort(key=lambda f: (f["x"], f.get("pod") or ""))
    ticks = [{"x": round(i / 4, 4), "time": _iso(t0 + span * i / 4)} for i in range(5)]
    return {"job": job, "start": _iso(t0), "end": _iso(t1), "span_s": round(span, 3), "attempts": bars,
            "marks": marks, "failures": fails, "ticks": ticks, "accelerator_s_lost": accelerator_time_lost(attempts)}
