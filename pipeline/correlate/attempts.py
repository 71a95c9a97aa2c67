"""Cutting each job's history into attempts, from the scheduler's events.

An admission starts an attempt; an eviction, a finish or a deactivation ends it
(`build_attempts`). A finish is Kueue's (the Workload's Finished condition, the job's
FinishedWorkload event) or the job's own controller's end event (a Job's Completed or
BackoffLimitExceeded, PyTorchJobSucceeded, JobSet AllJobsCompleted, ...); what it says of the
run (succeeded or failed, and a category its words prove) is in the attempt's details.end
(correlate/job_ends.py). Each attempt gets its gang view (`correlate/gang_view.py`),
its requeue view (`correlate/requeues.py`), the jobs it waited behind under
blockAdmission, and the job that preempted it.

One job is one unit of work (pipeline/isolation.py): a job whose attempts cannot be cut
falls back to having no gang attempts, and one event record that cannot be classified is
left out; both are counted, and the other jobs are correlated as before.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gangscope.parsers import times
from gangscope.pipeline.correlate.gang_view import accelerator_time_lost, gang_view
from gangscope.pipeline.correlate.linking import Index, details_of, get_field, link_events
from gangscope.pipeline.correlate.model import Attempt, GangConfig
from gangscope.pipeline.correlate.requeues import requeue_view
from gangscope.pipeline.correlate.signals import TIE_ORDER, Signal, classify
from gangscope.pipeline.isolation import StageFailures, unit_of_work


# The signals of a job (Workload and job-kind objects) that cut its attempts; the rest are its pods' and nodes'.
JOB_SIGNALS = {"created", "pending", "quota_reserved", "admitted", "pods_ready", "pods_not_ready", "preemptor",
                "deactivation_target", "evicted", "finished", "requeue_wait", "requeued", "pod_create_failed"}
_CLOSERS = {"evicted", "finished"}


def build_attempts(events: Iterable[Any], config: GangConfig | None = None,
                   failures: StageFailures | None = None, index: Index | None = None) -> dict[str, list[Attempt]]:
    """Each job's attempts from its event records (any order, duplicates allowed).

    Sorts by time and deduplicates by id; links records to jobs (`link_events`).
    An admission opens an attempt; an eviction, finish or deactivation closes it;
    further reports of the same transition (event, condition, job event) join it.
    A job that was never admitted but was seen waiting gets one attempt without a
    start, so that the wait can be explained. No attempt comes from anything else.

    With `failures` (a ledger), what raises is caught there, per job and per record (stage
    "correlate"); without one, it raises as before. `index`: made from every record of the run
    when `events` are only those attempts need (pipeline/correlate/event_book.EventStream).
    """
    cfg = config or GangConfig()
    everything = link_events(events, index)  # every copy gets its job, not only the first of each id
    unique: dict[str, Any] = {}
    for r in everything:
        rid = get_field(r, "id")
        if rid and rid not in unique:
            unique[rid] = r
    records = list(unique.values())
    index = index if index is not None else Index(everything)
    by_job: dict[str, list[Signal]] = {}
    pod_signals: dict[str, list[Signal]] = {}
    node_signals: list[Signal] = []
    untimed_pod_records: dict[str, list[Any]] = {}
    for r in records:
        if failures is None:
            s = classify(r)
        else:
            with unit_of_work(failures, "correlate", position=get_field(r, "id"), record="event",
                              job=get_field(r, "job")) as unit:
                s = classify(r)
            if unit.failed:
                continue
        job = get_field(r, "job")
        if s is None:
            if job and get_field(r, "object_kind") == "Pod" and get_field(r, "time") is None:
                untimed_pod_records.setdefault(job, []).append(r)
            continue
        if s.kind in ("node_not_ready", "node_ready", "node_problem"):
            node_signals.append(s)
        elif not job:
            continue
        elif s.kind in JOB_SIGNALS:
            by_job.setdefault(job, []).append(s)
        else:
            pod_signals.setdefault(job, []).append(s)
    node_signals.sort(key=lambda s: s.t)

    result: dict[str, list[Attempt]] = {}
    for job in sorted(set(by_job) | set(pod_signals)):
        with unit_of_work(failures, "correlate", position=job, job=job, step="attempts"):
            attempts = _job_attempts(job, by_job.get(job, []), pod_signals.get(job, []), node_signals, index,
                                     untimed_pod_records.get(job, []), cfg)
            if attempts:
                result[job] = attempts
    # Across jobs: a failure leaves the attempts as they are without that view.
    with unit_of_work(failures, "correlate", step="blocked_by"):
        _blocked_by(result)
    with unit_of_work(failures, "correlate", step="preemptors"):
        _resolve_preemptors(result, index, records)
    for job, attempts in result.items():
        with unit_of_work(failures, "correlate", position=job, job=job, step="accelerator_time_lost"):
            total = accelerator_time_lost(attempts)
            for a in attempts:
                a.details["job_accelerator_s_lost"] = total
    return result


def _job_attempts(job: str, job_sigs: list[Signal], pod_sigs: list[Signal], node_signals: list[Signal], index: Index,
                  untimed: list[Any], cfg: GangConfig) -> list[Attempt]:
    """One job's attempts, with their gang and requeue views."""
    sigs = sorted(job_sigs, key=lambda s: (s.t, TIE_ORDER.get(s.kind, 5), s.id))
    ns = job.split("/", 1)[0] if "/" in job else None
    workload = _workload_of(job, ns, index)
    attempts = _cut_attempts(job, sigs, cfg, workload)
    pods = sorted(pod_sigs, key=lambda s: (s.t, s.id))
    for i, a in enumerate(attempts):
        nxt = attempts[i + 1] if i + 1 < len(attempts) else None
        gang_view(a, nxt, pods, node_signals, workload, index, untimed, cfg)
    requeue_view(attempts, workload, cfg)
    return attempts


def _workload_of(job: str, ns: str | None, index: Index) -> dict:
    """The latest Workload summary of a job (from Workload objects), or {}."""
    return index.workload_of_job().get((ns, job), {})


def _cut_attempts(job: str, sigs: list[Signal], cfg: GangConfig, workload: dict) -> list[Attempt]:
    """The attempts of one job from its job-level signals, sorted by time."""
    attempts: list[Attempt] = []
    cur: Attempt | None = None
    cur_t0 = 0.0
    hint: Signal | None = None  # a sign the open attempt ended (Requeued=False, quota released after eviction)
    last_end: float | None = None
    waits: list[Signal] = []  # created / pending / quota signals since the last attempt ended
    admission_counts: dict[tuple, int] = {}
    known: dict[int, set[str]] = {}  # id(attempt) -> its event ids: list membership was quadratic

    def note(a: Attempt, event_id: str, once: bool = False) -> None:
        ids = known.get(id(a))
        if ids is None:
            ids = known[id(a)] = set(a.event_ids)
        if once and event_id in ids:
            return
        ids.add(event_id)
        a.event_ids.append(event_id)

    def close(at: Signal, reason: str | None, info: dict, inferred: bool = False) -> None:
        nonlocal cur, hint, last_end
        assert cur is not None
        cur.end = at.time
        cur.end_reason = reason
        cur.details["end"] = {k: v for k, v in info.items() if v is not None}
        cur.details["end"]["event_ids"] = [at.id]
        if info.get("outcome"):
            cur.details["end"]["outcome_event_id"] = at.id
        if inferred:
            cur.details["end"]["inferred"] = True
        note(cur, at.id, once=True)
        last_end = at.t
        cur = None
        hint = None

    def close_on_hint() -> None:
        assert hint is not None
        close(hint, hint.info.get("after_eviction") or hint.info.get("reason"), dict(hint.info), inferred=True)

    def same_as_last_close(s: Signal) -> bool:
        return bool(attempts) and last_end is not None and abs(s.t - last_end) <= cfg.same_transition_s

    for s in sigs:
        k = s.kind
        if k == "admitted":
            if cur is not None and hint is not None:
                close_on_hint()
            if cur is not None:  # another report of the same admission
                note(cur, s.id)
                continue
            number = attempts[-1].number + 1 if attempts else 1
            # An admission Event object folds identical admissions: its count-th one is at least attempt `count`.
            key = _event_key(s.rec)
            n = get_field(s.rec, "count") or 1
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
                _merge_close(attempts[-1], s, reason, note)
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
                note(attempts[-1], s.id)
        elif k == "pending":
            if cur is not None:
                if s.t > cur_t0 and s.info.get("after_eviction"):
                    hint = hint or s
            else:
                waits.append(s)
        elif k in ("created", "quota_reserved"):
            if cur is not None:
                note(cur, s.id)
            else:
                waits.append(s)
        else:
            target = cur if cur is not None else (attempts[-1] if attempts else None)
            if target is None:
                continue
            note(target, s.id)
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


def _merge_close(prev: Attempt, s: Signal, reason: str | None, note) -> None:
    """Another report of the transition that closed `prev`: keep its ids, take what it adds."""
    note(prev, s.id, once=True)
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
    else:
        if prev.end_reason == "Finished" and reason:
            prev.end_reason = reason
        if s.info.get("outcome") and not end.get("outcome"):  # FinishedWorkload, then the condition that says how
            for key, v in s.info.items():
                if v is not None:
                    end[key] = v
            end["outcome_event_id"] = s.id


def _evictions_recorded(workload: dict) -> int:
    """How many evictions the Workload object counted (schedulingStats, else requeueState)."""
    stats = sum(e.get("count") or 0 for e in workload.get("evictions") or [] if isinstance(e.get("count"), int))
    rs = workload.get("requeue_state") or {}
    return max(stats, rs.get("count") if isinstance(rs.get("count"), int) else 0)


def _event_key(rec: Any) -> tuple | None:
    d = details_of(rec)
    if d.get("from") != "event":
        return None
    return (d.get("uid") or d.get("name"),)


def _finish_reason(s: Signal) -> str:
    """An attempt's end reason from a finish: `Finished` for a success (Kueue's Succeeded, a Job's Completed, ...),
    else the reason as written (Failed, BackoffLimitExceeded, PyTorchJobFailed, ...); details.end keeps the
    outcome and category (correlate/job_ends.py)."""
    r = s.info.get("reason") or "Finished"
    if s.info.get("outcome") == "succeeded":
        return "Finished"
    return r


def _queued(waits: list[Signal], admitted: Signal | None) -> dict[str, Any]:
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
                windows.append((job, times.seconds(a.start), times.seconds(a.end), times.seconds((a.details.get("gang") or {}).get("ready_at"))))
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


def _resolve_preemptors(attempts_by_job: Mapping[str, list[Attempt]], index: Index, records: list[Any]) -> None:
    """Name the job that preempted each preempted attempt: by workload or job UID, or its PreemptedWorkload event."""
    victims: dict[str, str] = {}  # "ns/workload" -> preemptor job
    for job, attempts in attempts_by_job.items():
        for a in attempts:
            for p in a.details.get("preempted_others", []):
                if p.get("workload"):
                    victims[p["workload"]] = job
    own: dict[str, set[str]] = {}  # job -> its workloads, "ns/name"
    for r in records:
        if get_field(r, "object_kind") == "Workload" and get_field(r, "job"):
            own.setdefault(get_field(r, "job"), set()).add(f"{get_field(r, 'namespace')}/{get_field(r, 'object_name')}")
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
