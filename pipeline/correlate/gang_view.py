"""The gang view of one attempt: pods expected, ready and when, the ones that never were and why.

Also what the attempt cost: pods x accelerators x admitted seconds, lost when it did
not finish (`accelerator_time_lost` sums it over a job's attempts).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gangscope.parsers import times
from gangscope.pipeline.correlate.linking import Index, details_of, get_field, set_field
from gangscope.pipeline.correlate.model import EVICTION_ENDS, Attempt, GangConfig
from gangscope.pipeline.correlate.signals import Signal


_BLOCKER_ORDER = ("unschedulable", "image_pull", "crash_before_ready", "volume", "readiness_probe",
                  "pod_create_failed", "slow")


def gang_view(a: Attempt, nxt: Attempt | None, pod_sigs: list[Signal], node_sigs: list[Signal],
              workload: dict, index: Index, untimed: list[Any], cfg: GangConfig) -> None:
    """Pods expected, ready and when, and the ones that never were and why, for one attempt."""
    expected = _expected(workload)
    t0 = times.seconds(a.start)
    t_end = times.seconds(a.end)
    if t0 is None:
        a.details["gang"] = {"pods_expected": expected, "pods_seen": 0, "ready": [], "ready_at": None,
                             "not_ready": [], "pods": {}}
        a.details["accelerators"] = _accelerator_use(a, {}, workload, cfg)
        return
    # An attempt's pod events run from its admission to the next admission (pods die after eviction).
    hi = times.seconds(nxt.start) if nxt is not None and nxt.start else float("inf")
    cut = t_end if t_end is not None else float("inf")
    pods: dict[str, dict[str, Any]] = {}
    for s in pod_sigs:
        if t0 - 1.0 <= s.t < hi:
            name = get_field(s.rec, "object_name")
            p = pods.setdefault(name, {"events": [], "info": None, "ns": get_field(s.rec, "namespace")})
            p["events"].append(s)
            if s.kind == "pod_created":
                p["info"] = s.info.get("pod") or {}
    # The gang was ready when Kueue said PodsReady=True, else when the last expected pod was.
    marks = a.details.get("pods_ready", [])
    ready_mark = next((m for m in marks if m["status"] and (times.seconds(m["time"]) or 0) <= cut), None)
    views = {}
    for name, p in sorted(pods.items()):
        snapshot = [r for r in untimed if get_field(r, "object_name") == name] if p["info"] is not None else []
        views[name] = _pod_view(p["events"], p["info"] or index.pod_info.get((p["ns"], name)) or {}, cut, snapshot)
    ready = sorted((v["ready_at"], n) for n, v in views.items() if v.get("ready_at"))
    gang_ready = ready_mark["time"] if ready_mark else None
    need = expected or len(views)
    if gang_ready is None and need and len(ready) >= need and times.seconds(ready[-1][0]) <= cut:
        gang_ready = ready[-1][0]
    gang_ready_t = times.seconds(gang_ready)
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
        if t0 <= (times.seconds(pc["time"]) or 0) <= cut:
            not_ready.append({"pod": None, "kind": "pod_create_failed", "message": pc["message"], "time": pc["time"],
                              "event_id": pc["event_id"], "reason": None})
    not_ready.sort(key=lambda b: (_BLOCKER_ORDER.index(b["kind"]) if b["kind"] in _BLOCKER_ORDER else -1,
                                  times.seconds(b.get("since") or b.get("time")) or 0.0, b["pod"] or ""))
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
    known = set(a.event_ids)  # a set beside the list: membership in the list made many events quadratic
    for v in views.values():
        for e in v["evidence"]:
            if e not in known:
                known.add(e)
                a.event_ids.append(e)
    for name, v in views.items():
        f = v.get("failure") or {}
        if f.get("node_event_id"):
            # The Node's own event belongs to no job; the job whose pod it took down is the one it explains.
            node_rec = next((n.rec for n in node_sigs if n.id == f["node_event_id"]), None)
            if node_rec is not None and not get_field(node_rec, "job"):
                set_field(node_rec, "job", a.job)
            if f["node_event_id"] not in known:
                known.add(f["node_event_id"])
                a.event_ids.append(f["node_event_id"])
    a.details["gang"] = gang
    a.details["accelerators"] = _accelerator_use(a, views, workload, cfg)


def _expected(workload: dict) -> int | None:
    counts = [ps.get("count") for ps in workload.get("pod_sets", []) if isinstance(ps.get("count"), int)]
    return sum(counts) if counts else None


def _pod_view(events: list[Signal], info: dict, cut: float, snapshot: list[Any]) -> dict[str, Any]:
    """One pod in one attempt: scheduled, pulled, started, ready; and what kept it from being ready."""
    v: dict[str, Any] = {"node": info.get("node"), "evidence": []}
    if info.get("accelerators"):
        v["accelerators"] = info["accelerators"]
    last: dict[str, Signal] = {}
    first: dict[str, Signal] = {}
    for s in events:
        if s.t > cut + 1.0:
            break
        v["evidence"].append(s.id)
        if s.kind != "pod_created":
            v["last"], v["last_time"], v["last_id"] = get_field(s.rec, "message"), s.time, s.id
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
        blocker["container"] = crash.info.get("container") or get_field(crash.rec, "container")
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
            cs = details_of(r).get("container_state") or {}
            why = get_field(r, "reason")
            if cs.get("state") == "waiting" and why in ("ErrImagePull", "ImagePullBackOff", "InvalidImageName"):
                blocker = {"kind": "image_pull", "message": get_field(r, "message") or why, "time": None,
                           "event_id": get_field(r, "id"), "reason": why}
            elif cs.get("state") == "waiting" and why == "CrashLoopBackOff":
                blocker = {"kind": "crash_before_ready", "message": get_field(r, "message") or why, "time": None,
                           "event_id": get_field(r, "id"), "reason": why, "container": get_field(r, "container")}
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


def _says_why(s: Signal) -> bool:
    return (get_field(s.rec, "message") or "").startswith("Failed to pull image")


def _failure_after(events: list[Signal], node: str | None, ready_t: float | None, cut: float,
                   node_sigs: list[Signal]) -> dict | None:
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
        if lost is not None and (found is None or found["kind"] != "node_lost" or lost.t < times.seconds(found["time"])):
            found = _blocker("node_lost", lost)
        if lost is not None and found is not None and found["kind"] == "node_lost":
            found["node_event_id"] = lost.id
    if found is not None:
        found["node"] = node
    return found


def _blocker(kind: str, s: Signal) -> dict[str, Any]:
    reason = s.info.get("reason")
    return {"kind": kind, "message": get_field(s.rec, "message"), "time": s.time, "event_id": s.id,
            "reason": reason if isinstance(reason, str) else None}


def _accelerator_use(a: Attempt, views: dict[str, dict], workload: dict, cfg: GangConfig) -> dict[str, Any]:
    """Pods x accelerators x admitted seconds for this attempt (lost when it did not finish)."""
    t0, t1 = times.seconds(a.start), times.seconds(a.end)
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
