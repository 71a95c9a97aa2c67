"""Linking scheduler events to their job, and reading records that may be structs or dicts.

Event records of Workload, Pod and job-kind objects name no job of their own;
`link_events` finds it from what all the records say (workload owners, pod
labels, UIDs). Records may be record structs or plain dicts; `get_field` and
`set_field` read and write both the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gangscope.parsers import times
from gangscope.pipeline.correlate.job_ends import JOBSET_CHILD_FAILURE_REASONS, child_job_failure, first_failed_job
from gangscope.pipeline.curate.naming import (
    JOB_KINDS, JOB_LABELS, label_value, qualified, job_of_pod, job_of_workload,
)


def get_field(rec: Any, key: str, default: Any = None) -> Any:
    """A field of a record struct or a key of a record dict; `default` when absent."""
    if isinstance(rec, Mapping):
        return rec.get(key, default)
    if key == "kind":
        return getattr(rec, "kind", default)
    return getattr(rec, key, default)


def set_field(rec: Any, key: str, value: Any) -> None:
    """Set a field of a record struct or a key of a record dict."""
    if isinstance(rec, dict):
        rec[key] = value
    else:
        setattr(rec, key, value)


def details_of(rec: Any) -> dict:
    """A record's `details` dict ({} when it has none)."""
    d = get_field(rec, "details")
    return d if isinstance(d, dict) else {}


def _newer(w: dict, old: dict | None) -> bool:
    if old is None:
        return True
    a, b = str(w.get("resource_version") or ""), str(old.get("resource_version") or "")
    return int(a) >= int(b) if a.isdigit() and b.isdigit() else True


class Index:
    """What the records say about workloads, pods and jobs, for linking."""

    def __init__(self, records: Iterable[Any] = (), *, finished: bool = True):
        """From `records`; with finished=False, more are `add`ed and `finish` is called after the last
        (a stream read once: the index holds what linking needs, not the records)."""
        self.workloads: dict[tuple, dict] = {}  # (ns, name) -> workload summary
        self.workload_by_uid: dict[str, tuple] = {}
        self.job_by_uid: dict[str, str] = {}
        self.pod_labels: dict[tuple, dict] = {}
        self.pod_info: dict[tuple, dict] = {}
        self.known_jobs: dict[str, set[str]] = {}
        # Failures of batch/v1 Jobs (their Failed condition, the job controller's failure Event), by (ns, job) and,
        # for a JobSet's child, by (ns, owner): what a JobSet's failure is read with (`child_end`).
        self.job_failures: dict[tuple[str, str], list[dict]] = {}
        self.failures_by_owner: dict[tuple[str, str], list[dict]] = {}
        self._by_job: dict[tuple, dict] | None = None  # workload_of_job, made once finished
        for r in records:
            self.add(r)
        if finished:
            self.finish()

    def add(self, r: Any) -> None:
        """What one record says about workloads, pods and jobs."""
        self._by_job = None
        d = details_of(r)
        kind = get_field(r, "object_kind")
        ns = get_field(r, "namespace")
        name = get_field(r, "object_name")
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
            job = object_job(ns, name, d)
            self.known_jobs.setdefault(ns or "", set()).add(job.split("/", 1)[-1] if "/" in job else job)
            if obj.get("uid"):
                self.job_by_uid[obj["uid"]] = job
            if kind == "Job":
                self._note_job_failure(r, ns, name, d)
        if kind == "Pod" and name:
            pod = d.get("pod") if d.get("from") == "pod" else None
            labels = (pod or {}).get("labels") or d.get("labels")
            if labels:
                self.pod_labels[(ns, name)] = labels
            if pod:
                self.pod_info[(ns, name)] = pod

    def _note_job_failure(self, r: Any, ns: str | None, name: str, d: dict) -> None:
        cond = d.get("condition") if get_field(r, "type") == "Condition" else None
        message = get_field(r, "message")
        if d.get("from") == "object" and isinstance(cond, dict):
            end = child_job_failure(cond.get("type"), cond.get("status"), cond.get("reason"), message)
        elif d.get("from") == "event":
            end = child_job_failure(None, None, get_field(r, "reason"), message, event=True)
        else:
            return
        t = times.seconds(get_field(r, "time"))
        if end is None or t is None:
            return
        entry = {"job": name, "time": get_field(r, "time"), "t": t, "category": end.category,
                 "reason": get_field(r, "reason"), "message": message, "event_id": get_field(r, "id"),
                 "source": end.source}
        self.job_failures.setdefault((ns or "", name), []).append(entry)
        owner = job_owner(d)
        if owner is not None and owner.get("kind") == "JobSet":
            self.failures_by_owner.setdefault((ns or "", owner["name"]), []).append(entry)

    def child_end(self, r: Any) -> dict | None:
        """The failed child Job a JobSet's failure comes from (jobset's findFirstFailedJob; job_ends.with_child_end):
        the child its message names (v0.5.0+; also in a TrainJob's Failed condition and a Workload's Finished
        condition, which copy the message), its latest failure at or before the JobSet's; for a message that names
        none (v0.2.0-v0.4.x), the JobSet's own child (ownerReferences) that failed first at or before it. None when
        the record is no such failure or no child failure is known."""
        kind = get_field(r, "object_kind")
        if kind not in _CHILD_END_KINDS:
            return None
        d = details_of(r)
        cond = d.get("condition") if get_field(r, "type") == "Condition" else None
        if isinstance(cond, dict):
            if cond.get("status") != "True" or cond.get("type") != _CHILD_END_KINDS[kind]:
                return None
        elif kind != "JobSet" or get_field(r, "reason") not in JOBSET_CHILD_FAILURE_REASONS:
            return None
        t = times.seconds(get_field(r, "time"))
        if t is None:
            return None
        ns = get_field(r, "namespace") or ""
        named = first_failed_job(get_field(r, "message"))
        if named:
            before = [e for e in self.job_failures.get((ns, named), ()) if e["t"] <= t]
            found = max(before, key=lambda e: e["t"], default=None)
        elif kind == "JobSet":
            before = [e for e in self.failures_by_owner.get((ns, get_field(r, "object_name") or ""), ()) if e["t"] <= t]
            found = min(before, key=lambda e: e["t"], default=None)
        else:
            return None
        if found is None:
            return None
        out = {k: v for k, v in found.items() if k != "t"}
        out["named"] = bool(named)
        return out

    def finish(self) -> None:
        """The jobs the workloads' owners and the pods' labels name (after the last `add`)."""
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

    def workload_of_job(self) -> dict[tuple, dict]:
        """(namespace, job) -> the latest Workload summary of the job, made once (a scan of every
        workload per job made many jobs quadratic)."""
        if self._by_job is None:
            self._by_job = {}
            for (wns, wname), w in self.workloads.items():
                self._by_job[(wns, self.workload_job(wns, wname))] = w
        return self._by_job

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
        kind = get_field(rec, "object_kind")
        ns = get_field(rec, "namespace")
        name = get_field(rec, "object_name")
        if not name:
            return None
        if kind == "Workload":
            return self.workload_job(ns, name)
        if kind == "Pod":
            d = details_of(rec)
            pod = d.get("pod") or {}
            labels = pod.get("labels") or d.get("labels") or self.pod_labels.get((ns, name))
            return job_of_pod(ns, name, labels, pod.get("annotations") or d.get("annotations"))
        if kind in JOB_KINDS:
            return object_job(ns, name, details_of(rec))
        return None


def job_owner(details: Mapping[str, Any]) -> dict | None:
    """The job-kind owner of a job-kind object read from its status (parsers/events.py `from: object`): a
    JobSet's child Job, the JobSet of a TrainJob (kubernetes-sigs/jobset, kubeflow/trainer set the controller
    ownerReference), else None."""
    if details.get("from") != "object":
        return None
    info = details.get("object")
    owner = info.get("owner") if isinstance(info, Mapping) else None
    if isinstance(owner, Mapping) and owner.get("kind") in JOB_KINDS and owner.get("name"):
        return dict(owner)
    return None


def object_job(ns: str | None, name: str, details: Mapping[str, Any]) -> str:
    """The job of a job-kind object's record: its job-kind owner's (one job, not one per child), else its own."""
    owner = job_owner(details)
    return qualified(ns, owner["name"]) if owner else qualified(ns, name)


# Records whose failure a failed child Job explains (Index.child_end): kind -> the condition type of the failure.
_CHILD_END_KINDS = {"JobSet": "Failed", "TrainJob": "Failed", "Workload": "Finished"}


def link_events(events: Iterable[Any], index: Index | None = None) -> list[Any]:
    """Set `job` on event records that lack one (Workload, Pod and job-kind objects), from what all
    the records say (or `index`, made from all of them); a JobSet's failure gets `details.child_end`, the failed
    child Job it comes from (`Index.child_end`). Returns the list."""
    records = list(events)
    index = index if index is not None else Index(records)
    for r in records:
        if not get_field(r, "job"):
            job = index.job_of(r)
            if job:
                set_field(r, "job", job)
        if get_field(r, "object_kind") in _CHILD_END_KINDS:
            child = index.child_end(r)
            details = get_field(r, "details")
            if child is not None and isinstance(details, dict):
                details["child_end"] = child
    return records
