"""The scheduler's verdict on one attempt: why Kueue evicted it, or why it is not admitted yet.

From an attempt's gang view (`pipeline/correlate`): which pod held the gang back
and why (with its own log lines), preemption and by whom, node failures, requeue
loops, and the accelerator time the attempt burned (`scheduler_verdict`), as a
DiagnosisRecord (`diagnosis_record`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from gangscope.parsers import times
from gangscope.parsers.records import DiagnosisRecord, stable_id
from gangscope.pipeline.correlate.gang_view import accelerator_time_lost
from gangscope.pipeline.correlate.linking import get_field
from gangscope.pipeline.correlate.model import EVICTION_ENDS, Attempt, GangConfig
from gangscope.pipeline.correlate.text import shorten


_NODES_MSG = re.compile(r"unhealthy node\(s\): (?P<nodes>.+)$")
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
        if get_field(r, "pod") != pod:
            continue
        kind = get_field(r, "kind")
        if kind not in ("trace", "error"):
            continue
        t = times.seconds(get_field(r, "time"))
        if t is not None and ((t0 is not None and t < t0 - 1.0) or (t1 is not None and t > t1 + 1.0)):
            continue
        key = (t if t is not None else 0.0)
        if kind == "trace":
            et = get_field(r, "exception_type") or ""
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
    kind = get_field(r, "kind")
    text = (f"{get_field(r, 'exception_type')}: {get_field(r, 'message') or ''}".strip().rstrip(":")
            if kind == "trace" else (get_field(r, "message") or get_field(r, "line") or ""))
    return {"record_id": get_field(r, "id"), "kind": kind, "pod": pod, "rank": get_field(r, "rank"), "time": get_field(r, "time"),
            "text": text, "exception_type": get_field(r, "exception_type") if kind == "trace" else None,
            "category": get_field(r, "category") if kind == "error" else None, "node": get_field(r, "node")}


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
            return f'pod {pod} could not pull image "{m.group("image")}": {shorten(why, 120)}{code}'
        return f"pod {pod} could not pull its image" + (f": {shorten(msg)}" if msg else "")
    if kind == "crash_before_ready":
        ctr = "init container" if b.get("init") else "container"
        what = f"{ctr} {b['container']} of pod {pod}" if b.get("container") else f"pod {pod}"
        how = ""
        if b.get("reason") == "OOMKilled":
            how = " (OOMKilled)"
        elif b.get("exit_code") not in (None, 0):
            how = f" (exit code {b['exit_code']})"
        said = f"; its log: {shorten(logs['text'])}" if logs else ""
        return f"{what} crashed before it was ready{how}{said}"
    if kind == "volume":
        return f"pod {pod} could not mount a volume: {shorten(msg)}"
    if kind == "readiness_probe":
        return f"pod {pod} failed its readiness probe: {shorten(msg)}"
    if kind == "pod_create_failed":
        return f"pods could not be created: {shorten(msg)}"
    if kind == "slow":
        detail = b.get("detail") or (f"last: {shorten(msg)}" if msg else "no failure reported")
        return f"pod {pod} was still not ready ({detail}); the pods were just slow"
    if kind == "node_lost":
        return f"node {b.get('node')} of pod {pod} went NotReady"
    if kind in ("crash_after_start", "evicted"):
        said = f"; its log: {shorten(logs['text'])}" if logs else ""
        return f"pod {pod} failed after the gang had started ({shorten(msg)}){said}"
    return f"pod {pod}: {shorten(msg)}"


def _n(count: float, noun: str) -> str:
    return f"{count:g} {noun}" + ("" if count == 1 else "s")


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
    t0, t1 = times.seconds(getattr(attempt, "start", None)), times.seconds(getattr(attempt, "end", None))
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
            f": {shorten(end['message'])}" if end.get("message") else ".")
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
        waiting = f" ({shorten(q.get('message') or '')})" if q.get("message") else ""
        summary = summary.rstrip(".") + waiting + "."
    else:
        summary = f"Not admitted yet: {shorten(q.get('message') or 'waiting for quota')} (since {q.get('since')})."
    return {
        "job": getattr(attempt, "job", None), "attempt": getattr(attempt, "number", 1), "outcome": "running",
        "category": "unknown", "exception_type": None, "first_failure": None, "summary": summary,
        "evidence": [], "symptoms": [], "events": list(getattr(attempt, "event_ids", []) or []),
        "confidence": 0.8 if q.get("blocked") else 0.6,
        "details": {"source": "gang", "pending": True, "queued": q},
    }
