"""Kubernetes Events, Kueue Workloads and Pods, decoded into `event` records.

Pure: parsed JSON objects (or the text lines of a file) in, `EventRecord`s and
counted `Skip`s out. What it reads (shapes per FORMATS.md 2.6 and
fixtures/gang/README.md):

* core/v1 `Event` and events.k8s.io/v1 `Event`, alone or in a list (`kubectl get
  events -o json`: `kind: List` / `EventList` with `items`), one per line (NDJSON,
  as event exporters write them), or wrapped: eventrouter's `{"verb", "event",
  "old_event"}` (vmware-archive/eventrouter sinks/eventdata.go), a watch
  `{"type": "ADDED", "object": {...}}` (`kubectl get -w --output-watch-events`).
  kubernetes-event-exporter writes the Event inline with `clusterName` and the
  involved object's `labels`/`annotations` (resmoio/kubernetes-event-exporter
  pkg/kube/event.go `EnhancedEvent`); those labels are kept for linking.
  Objects read from informers often carry no `kind`/`apiVersion`; the shape decides.
* Kueue `Workload` objects: one record per status condition transition (`type`
  "Condition", `reason` the condition's reason, `details.condition` its type and status).
* `Pod` objects: one `Created` record carrying the pod's identity, labels,
  node and requested accelerators, one per condition transition and one per
  container state that matters (terminated, waiting with a reason).
* Job-kind objects (batch/v1 `Job`, the training operator's `PyTorchJob`, `TFJob`, `MPIJob`,
  `XGBoostJob`, `PaddleJob`, `JAXJob`, `JobSet`, Kubeflow Trainer's `TrainJob`; `kubectl get
  job,pytorchjob,jobset -o json`, alone or in a `kind: List`): one record per status condition
  (`type` "Condition", time its lastTransitionTime, `object_kind`/`object_name` the job, details
  `from: object` with the object's uid, labels and owner). fixtures/objects/README.md cites the types.
* kuberay's `RayJob` (no conditions): one record of its status (deployment status, job status, reason;
  `_rayjob_records`).
* Any of these as `kubectl get ... -o yaml` prints them (one object, a `kind: List` read one item at a
  time, `-w -o yaml` documents after `---`), through PyYAML's safe loader; a broken item or document is a
  counted `bad_yaml` skip (`_yaml_values`).

Occurrences. The event recorder folds repeats of an identical event into one
Event object whose `count` (core/v1) or `series.count` (events.k8s.io) grows,
with `lastTimestamp` / `series.lastObservedTime` at the latest repeat. One
*distinct occurrence* is one value of that counter on one Event object: its
record has id `stable_id("k8s-event", <uid or ns/name>, <count>)`, time the
latest-repeat time and `count` the counter. An object seen with count N > 1 also
yields its first occurrence (count 1 at `firstTimestamp` / `eventTime`), which
has the same id as the record made when count was 1. So an exporter stream that
wrote every update gives one record per repeat; a `kubectl get events` snapshot
gives the first and the latest; the same input read twice gives the same ids;
resourceVersion never enters an id.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

from gangscope.parsers import times
from gangscope.parsers.id_set import IdSet
from gangscope.parsers.records import EventRecord, stable_id


class Skip(NamedTuple):
    """An input object that produced no record, and why (counted, never raised)."""

    reason: str  # bad_json | bad_yaml | not_an_object | unknown_kind | missing_field | wrong_type | bad_timestamp | duplicate | bookmark
    detail: str  # which field / kind / object, short
    line: int | None = None  # 1-based line of the input where the object started


Decoded = EventRecord | Skip

EVENT_API_CORE = "core/v1"
EVENT_API_NEW = "events.k8s.io/v1"

# Resources a pod can request that are accelerators (accelerator time is pods x these x seconds).
ACCELERATOR_RESOURCES = (
    "nvidia.com/gpu",
    "amd.com/gpu",
    "aws.amazon.com/neuron",
    "aws.amazon.com/neuroncore",
    "aws.amazon.com/neurondevice",
    "habana.ai/gaudi",
    "google.com/tpu",
    "gpu.intel.com/i915",
    "gpu.intel.com/xe",
)

_WATCH_TYPES = {"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"}
_LIST_KINDS_SUFFIX = "List"


class _Bad(Exception):
    """Internal: this object cannot become a record (turned into a Skip)."""

    def __init__(self, reason: str, detail: str):
        super().__init__(reason, detail)
        self.reason = reason
        self.detail = detail


# ---------------------------------------------------------------------------
# Times


def normalize_time(value: Any, field: str = "time") -> str | None:
    """RFC 3339 in any offset -> RFC 3339 UTC with a `Z` (fraction kept, trailing zeros trimmed).

    None / "" / Go's zero time -> None. Anything else that is not a valid instant raises _Bad.
    """
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise _Bad("wrong_type", field)
    value = value.strip()
    if times.parse(value) is None:
        raise _Bad("bad_timestamp", field)
    if value.startswith("0001-"):  # metav1.Time's zero value, whatever its offset
        return None
    utc = times.normalized(value)
    if utc is None:  # past the year 9999 once in UTC
        raise _Bad("bad_timestamp", field)
    return utc


# ---------------------------------------------------------------------------
# Small typed accessors: wrong types are a counted skip, not an exception.


def _str(obj: dict, key: str, field: str | None = None, required: bool = False) -> str | None:
    v = obj.get(key)
    if v is None or v == "":
        if required:
            raise _Bad("missing_field", field or key)
        return None
    if not isinstance(v, str):
        raise _Bad("wrong_type", field or key)
    return v


def _dict(obj: dict, key: str, field: str | None = None, required: bool = False) -> dict | None:
    v = obj.get(key)
    if v is None:
        if required:
            raise _Bad("missing_field", field or key)
        return None
    if not isinstance(v, dict):
        raise _Bad("wrong_type", field or key)
    return v


# What an OpenSearch `long` holds: a count, exit code or signal past it is no number the index takes.
LONG_MAX = 2**63 - 1


def _int(obj: dict, key: str, field: str | None = None) -> int | None:
    v = obj.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int):
        raise _Bad("wrong_type", field or key)
    if not -LONG_MAX - 1 <= v <= LONG_MAX:
        raise _Bad("out_of_range", field or key)
    return v


def _list(obj: dict, key: str, field: str | None = None) -> list:
    """A list field ([] when absent); anything else is one wrong_type, not one per character."""
    v = obj.get(key)
    if v is None:
        return []
    if not isinstance(v, list):
        raise _Bad("wrong_type", field or key)
    return v


def _text_or_none(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _labels(value: Any) -> dict[str, str]:
    """Labels as a dict; tolerates the [{"Key":..,"Value":..}] form some exporter sinks write."""
    if isinstance(value, dict):
        return {str(k): str(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        out = {}
        for kv in value:
            if isinstance(kv, dict) and "Key" in kv:
                out[str(kv["Key"])] = str(kv.get("Value", ""))
        return out
    return {}


def _ref(obj: dict | None) -> dict[str, Any] | None:
    """An ObjectReference reduced to the fields that identify it."""
    if obj is None:
        return None
    out = {}
    for k in ("kind", "namespace", "name", "uid", "apiVersion", "fieldPath"):
        v = obj.get(k)
        if isinstance(v, str) and v:
            out[k] = v
    return out


_FIELD_CONTAINER = re.compile(r"spec\.(?:initContainers|containers|ephemeralContainers)\{([^}]*)\}")


def _container_of(field_path: Any) -> str | None:
    if not field_path or not isinstance(field_path, str):
        return None
    m = _FIELD_CONTAINER.search(field_path)
    return m.group(1) if m else None


def _parse_quantity(q: Any) -> float | None:
    """A Kubernetes resource quantity as a number (accelerator counts are plain integers)."""
    if isinstance(q, bool):
        return None
    if isinstance(q, (int, float)):
        try:
            return float(q)
        except OverflowError:  # an integer past a double
            return None
    if not isinstance(q, str):
        return None
    m = re.fullmatch(r"\s*([0-9.]+)\s*(m|k|Ki|M|Mi|G|Gi|T|Ti)?\s*", q)
    if not m:
        return None
    try:
        n = float(m.group(1))
    except (ValueError, RecursionError):
        return None
    mult = {None: 1, "m": 1e-3, "k": 1e3, "Ki": 1024, "M": 1e6, "Mi": 2**20, "G": 1e9, "Gi": 2**30, "T": 1e12, "Ti": 2**40}
    return n * mult[m.group(2)]


def pod_accelerators(pod_spec: dict | None) -> dict[str, float]:
    """Accelerators one pod asks for: sum over its containers (requests, else limits)."""
    totals: dict[str, float] = {}
    if not isinstance(pod_spec, dict):
        return totals
    containers = pod_spec.get("containers")
    if not isinstance(containers, list):
        return totals
    for c in containers:
        if not isinstance(c, dict):
            continue
        res = c.get("resources") if isinstance(c.get("resources"), dict) else {}
        req = res.get("requests") if isinstance(res.get("requests"), dict) else {}
        lim = res.get("limits") if isinstance(res.get("limits"), dict) else {}
        for name in ACCELERATOR_RESOURCES:
            q = _parse_quantity(req.get(name, lim.get(name)))
            if q:
                totals[name] = totals.get(name, 0.0) + q
    return totals


# ---------------------------------------------------------------------------
# Kubernetes Event objects


def _is_core_event(obj: dict) -> bool:
    return "involvedObject" in obj


def _is_new_event(obj: dict) -> bool:
    return "regarding" in obj or "reportingController" in obj or "note" in obj


def _event_records(obj: dict) -> list[EventRecord]:
    meta = _dict(obj, "metadata") or {}
    api_version = obj.get("apiVersion") if isinstance(obj.get("apiVersion"), str) else ""
    new_api = api_version.startswith("events.k8s.io/") or (not _is_core_event(obj) and _is_new_event(obj))
    if new_api:
        ref = _dict(obj, "regarding", "regarding", required=True)
        message = _str(obj, "note")
        source = _dict(obj, "deprecatedSource") or {}
        controller = _str(obj, "reportingController")
        instance = _str(obj, "reportingInstance")
        first = normalize_time(obj.get("deprecatedFirstTimestamp"), "deprecatedFirstTimestamp")
        last = normalize_time(obj.get("deprecatedLastTimestamp"), "deprecatedLastTimestamp")
        legacy_count = _int(obj, "deprecatedCount")
    else:
        ref = _dict(obj, "involvedObject", "involvedObject", required=True)
        message = _str(obj, "message")
        source = _dict(obj, "source") or {}
        controller = _str(obj, "reportingComponent")
        instance = _str(obj, "reportingInstance")
        first = normalize_time(obj.get("firstTimestamp"), "firstTimestamp")
        last = normalize_time(obj.get("lastTimestamp"), "lastTimestamp")
        legacy_count = _int(obj, "count")
    reason = _str(obj, "reason", required=True)
    etype = _str(obj, "type")
    event_time = normalize_time(obj.get("eventTime"), "eventTime")
    series = _dict(obj, "series")
    series_count = _int(series, "count", "series.count") if series else None
    series_last = normalize_time(series.get("lastObservedTime"), "series.lastObservedTime") if series else None

    kind = _str(ref, "kind", "involvedObject.kind", required=True)
    name = _str(ref, "name", "involvedObject.name", required=True)
    ref_ns = _str(ref, "namespace", "involvedObject.namespace")
    ns = ref_ns or _str(meta, "namespace", "metadata.namespace")
    uid = _str(meta, "uid", "metadata.uid")
    ev_name = _str(meta, "name", "metadata.name")

    count = series_count if series_count is not None else legacy_count
    if count is None or count < 1:
        count = 1
    # Time of the latest occurrence this object describes, and of its first.
    latest = series_last or (last if count > 1 else None) or event_time or first or last
    earliest = event_time or first
    if latest is None:
        raise _Bad("missing_field", "time")

    if uid:
        identity: tuple = (uid,)
    elif ev_name:
        identity = (ns or "", ev_name)
    else:  # no metadata at all: the content is the identity
        identity = (ns or "", kind, name, _text_or_none(ref.get("uid")) or "", reason, message or "", earliest or latest)

    labels = _labels(ref.get("labels"))
    annotations = _labels(ref.get("annotations"))
    node = None
    host = source.get("host") if isinstance(source.get("host"), str) else None
    if kind == "Node":
        node = name
    elif host:
        node = host
    elif controller == "kubelet" and instance:
        node = instance
    details: dict[str, Any] = {
        "from": "event",
        "api": EVENT_API_NEW if new_api else EVENT_API_CORE,
        "involvedObject": _ref(ref),
        "uid": uid,
        "name": ev_name,
        "reportingController": controller or _text_or_none(source.get("component")),
        "reportingInstance": instance,
        "action": _str(obj, "action"),
        "first_time": earliest,
        "last_time": series_last or last,
    }
    if series:
        details["series"] = {"count": series_count, "lastObservedTime": series_last}
    related = _dict(obj, "related")
    if related:
        details["related"] = _ref(related)
    if labels:
        details["labels"] = labels
    if annotations:
        details["annotations"] = annotations
    if isinstance(obj.get("clusterName"), str) and obj["clusterName"]:
        details["cluster"] = obj["clusterName"]

    def make(n: int, t: str, derived: bool = False) -> EventRecord:
        d = dict(details)
        if derived:  # the first occurrence, known from a later update of the same object
            d["derived"] = True
        return EventRecord(
            id=stable_id("k8s-event", *identity, n),
            time=t,
            namespace=ns,
            pod=name if kind == "Pod" else None,
            container=_container_of(ref.get("fieldPath")),
            node=node,
            reason=reason,
            type=etype,
            object_kind=kind,
            object_name=name,
            message=message,
            count=n,
            details=d,
        )

    out = [make(count, latest)]
    if count > 1 and earliest and earliest != latest:
        out.append(make(1, earliest, derived=True))
    return out


# ---------------------------------------------------------------------------
# Kueue Workload objects


def _owner(meta: dict) -> dict | None:
    refs = meta.get("ownerReferences")
    if not isinstance(refs, list):
        return None
    best = None
    for r in refs:
        if not isinstance(r, dict) or not isinstance(r.get("name"), str):
            continue
        if r.get("controller") is True:
            return _ref(r)
        best = best or _ref(r)
    return best


def workload_summary(obj: dict) -> dict[str, Any]:
    """What gang analysis needs from a Workload object (identity, pod sets, requeue state)."""
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    status = obj.get("status") if isinstance(obj.get("status"), dict) else {}
    pod_sets = []
    pod_sets_in = spec.get("podSets")
    for ps in pod_sets_in if isinstance(pod_sets_in, list) else []:
        if not isinstance(ps, dict):
            continue
        tmpl = ps.get("template") if isinstance(ps.get("template"), dict) else {}
        cnt = ps.get("count")
        pod_sets.append({
            "name": ps.get("name"),
            "count": cnt if isinstance(cnt, int) and not isinstance(cnt, bool) else None,
            "accelerators": pod_accelerators(tmpl.get("spec")),
        })
    admission = status.get("admission") if isinstance(status.get("admission"), dict) else {}
    requeue = status.get("requeueState") if isinstance(status.get("requeueState"), dict) else None
    stats = status.get("schedulingStats") if isinstance(status.get("schedulingStats"), dict) else {}
    labels = _labels(meta.get("labels"))
    pc = spec.get("priorityClassName")
    if pc is None and isinstance(spec.get("priorityClassRef"), dict):  # v1beta2
        pc = spec["priorityClassRef"].get("name")
    evictions = stats.get("evictions")
    return {
        "name": meta.get("name"),
        "namespace": meta.get("namespace"),
        "uid": meta.get("uid"),
        "resource_version": meta.get("resourceVersion"),
        "owner": _owner(meta),
        "job_uid": labels.get("kueue.x-k8s.io/job-uid"),
        "queue": spec.get("queueName"),
        "priority": _bounded_int(spec.get("priority")),
        "priority_class": pc,
        "active": spec.get("active"),
        "pod_sets": pod_sets,
        "cluster_queue": admission.get("clusterQueue"),
        "requeue_state": {
            "count": _bounded_int(requeue.get("count")),
            "requeueAt": normalize_time(requeue.get("requeueAt"), "status.requeueState.requeueAt"),
        } if requeue else None,
        "evictions": [e for e in evictions if isinstance(e, dict)] if isinstance(evictions, list) else [],
    }


def _object_head(obj: dict) -> tuple[dict, str, str | None, str | None]:
    """An object's metadata and its name (required), namespace and uid (a missing or mistyped one a skip)."""
    meta = _dict(obj, "metadata", required=True)
    return (meta, _str(meta, "name", "metadata.name", required=True), _str(meta, "namespace", "metadata.namespace"),
            _str(meta, "uid", "metadata.uid"))


def _bounded_int(v: Any) -> int | None:
    """An integer the index can hold, else None."""
    return v if type(v) is int and -LONG_MAX - 1 <= v <= LONG_MAX else None


def _workload_records(obj: dict) -> list[EventRecord | Skip]:
    meta, name, ns, uid = _object_head(obj)
    status = _dict(obj, "status") or {}
    conditions = status.get("conditions") or []
    if not isinstance(conditions, list):
        raise _Bad("wrong_type", "status.conditions")
    summary = workload_summary(obj)
    ident = uid or f"{ns}/{name}"
    out: list[EventRecord | Skip] = []
    created = normalize_time(meta.get("creationTimestamp"), "metadata.creationTimestamp")
    if created:
        out.append(EventRecord(
            id=stable_id("kueue-workload", ident, "Created"),
            time=created, namespace=ns, reason="Created", type="Object",
            object_kind="Workload", object_name=name, message=None, count=1,
            details={"from": "workload", "workload": summary},
        ))
    for cond in conditions:
        try:
            out.append(_condition_record("kueue-workload", ident, "Workload", name, ns, cond,
                                         {"from": "workload", "workload": summary}))
        except _Bad as bad:
            out.append(Skip(bad.reason, f"Workload {ns}/{name} condition: {bad.detail}"))
    return out


def _condition_record(tag: str, ident: str, kind: str, name: str, ns: str | None, cond: Any,
                      extra: dict, pod: str | None = None, node: str | None = None,
                      other_times: tuple[str, ...] = ()) -> EventRecord:
    if not isinstance(cond, dict):
        raise _Bad("wrong_type", "condition")
    ctype = _str(cond, "type", "condition.type", required=True)
    status = _str(cond, "status", "condition.status", required=True)
    creason = _str(cond, "reason", "condition.reason")
    message = _str(cond, "message", "condition.message")
    t = normalize_time(cond.get("lastTransitionTime"), "condition.lastTransitionTime")
    for key in other_times:  # where lastTransitionTime is optional: the type's other time of the condition
        if t is not None:
            break
        t = normalize_time(cond.get(key), f"condition.{key}")
    if t is None:
        raise _Bad("missing_field", f"{ctype}.lastTransitionTime")
    details = dict(extra)
    details["condition"] = {"type": ctype, "status": status, "reason": creason, "message": message}
    return EventRecord(
        id=stable_id(tag, ident, "cond", ctype, status, creason or "", t),
        time=t, namespace=ns, pod=pod, node=node,
        # The condition's own reason (what Kueue / the kubelet wrote: PodsReadyTimeout, QuotaReserved,
        # InClusterQueue, ...), else its type; type and status are in details.condition.
        reason=creason or ctype, type="Condition", object_kind=kind, object_name=name,
        message=message, count=1, details=details,
    )


# ---------------------------------------------------------------------------
# Job-kind objects (`kubectl get job,pytorchjob,jobset,trainjob -o json`): their status conditions

# kind -> the condition's other time fields, read where lastTransitionTime is absent (it is `+optional` in
# batch/v1 and kubeflow.org/v1). Sources (fixtures/objects/README.md):
# batch/v1 Job: k8s.io/api batch/v1/types.go JobCondition (lastProbeTime, lastTransitionTime);
# kubeflow.org/v1 PyTorchJob, TFJob, MPIJob, XGBoostJob, PaddleJob, JAXJob: kubeflow/training-operator v1.9.0
# pkg/apis/kubeflow.org/v1/common_types.go JobCondition (lastUpdateTime, lastTransitionTime);
# jobset.x-k8s.io/v1alpha2 JobSet: kubernetes-sigs/jobset api/jobset/v1alpha2/jobset_types.go, and
# trainer.kubeflow.org/v1alpha1 TrainJob: kubeflow/trainer pkg/apis/trainer/v1alpha1/trainjob_types.go, both
# metav1.Condition (lastTransitionTime required).
JOB_OBJECT_KINDS: dict[str, tuple[str, ...]] = {
    "Job": ("lastProbeTime",),
    "PyTorchJob": ("lastUpdateTime",),
    "TFJob": ("lastUpdateTime",),
    "MPIJob": ("lastUpdateTime",),
    "XGBoostJob": ("lastUpdateTime",),
    "PaddleJob": ("lastUpdateTime",),
    "JAXJob": ("lastUpdateTime",),
    "JobSet": (),
    "TrainJob": (),
}


def _job_object_records(obj: dict, kind: str) -> list[EventRecord | Skip]:
    """One `Condition` record per status condition of a job-kind object (its time the condition's
    lastTransitionTime, its reason and message kept); a condition that cannot be read is a counted skip,
    the object's other conditions stand. correlate/job_ends.py reads what the conditions say of the end."""
    meta, name, ns, uid = _object_head(obj)
    status = _dict(obj, "status") or {}
    conditions = _list(status, "conditions", "status.conditions")
    api_version = _text_or_none(obj.get("apiVersion"))
    ref = {"kind": kind, "name": name}
    if ns:
        ref["namespace"] = ns
    if uid:
        ref["uid"] = uid
    if api_version:
        ref["apiVersion"] = api_version
    info: dict[str, Any] = {
        "uid": uid,
        "api_version": api_version,
        "labels": _labels(meta.get("labels")),
        "owner": _owner(meta),
        "start_time": _time_or_none(status.get("startTime")),
        "completion_time": _time_or_none(status.get("completionTime")),
    }
    base = {"from": "object", "involvedObject": ref, "object": info}
    # A uid names one object whatever its kind; without one, the kind keeps a TrainJob and the JobSet
    # of the same name apart.
    ident = uid or f"{kind}/{ns}/{name}"
    out: list[EventRecord | Skip] = []
    for cond in conditions:
        try:
            out.append(_condition_record("job-object", ident, kind, name, ns, cond, base,
                                         other_times=JOB_OBJECT_KINDS[kind]))
        except _Bad as bad:
            out.append(Skip(bad.reason, f"{kind} {ns}/{name} condition: {bad.detail}"))
    return out


# RayJob (ray.io/v1, ray-project/kuberay ray-operator/apis/ray/v1/rayjob_types.go RayJobStatus): no conditions;
# `jobDeploymentStatus` (Initializing, Running, Complete, Failed, Suspending, Suspended, Retrying, Waiting,
# ValidationFailed; v1.0.0 others), `jobStatus` (the Ray job's: PENDING, RUNNING, STOPPED, SUCCEEDED, FAILED),
# `reason` (v1.1.0+: DeadlineExceeded, AppFailed, SubmissionFailed, ...), `message`, `startTime` (deployment left
# New), `endTime` (deployment Complete or Failed), `rayJobInfo.endTime` (v1.4.0+, the Ray job's). One record of the
# status as it stands (a snapshot keeps no history): `type` "Condition", details.condition type the deployment
# status, status "True", reason the `reason` else the job status; time `endTime` for Complete/Failed, else
# `startTime`. correlate/job_ends.rayjob_end reads it.
_RAYJOB_ENDS = ("Complete", "Failed")


def _rayjob_records(obj: dict) -> list[EventRecord | Skip]:
    meta, name, ns, uid = _object_head(obj)
    status = _dict(obj, "status") or {}
    deployment = _str(status, "jobDeploymentStatus", "status.jobDeploymentStatus")
    job_status = _str(status, "jobStatus", "status.jobStatus")
    if not deployment:  # New: nothing to say yet
        return []
    reason = _str(status, "reason", "status.reason") or job_status
    message = _str(status, "message", "status.message")
    if deployment in _RAYJOB_ENDS:
        info = _dict(status, "rayJobInfo", "status.rayJobInfo") or {}
        t = normalize_time(status.get("endTime"), "status.endTime") or normalize_time(
            info.get("endTime"), "status.rayJobInfo.endTime")
        if t is None:
            raise _Bad("missing_field", "status.endTime")
    else:
        t = normalize_time(status.get("startTime"), "status.startTime")
        if t is None:
            return []
    api_version = _text_or_none(obj.get("apiVersion"))
    ref = {"kind": "RayJob", "name": name}
    for key, v in (("namespace", ns), ("uid", uid), ("apiVersion", api_version)):
        if v:
            ref[key] = v
    details: dict[str, Any] = {
        "from": "object", "involvedObject": ref,
        "object": {"uid": uid, "api_version": api_version, "labels": _labels(meta.get("labels")),
                   "owner": _owner(meta), "start_time": _time_or_none(status.get("startTime")),
                   "completion_time": _time_or_none(status.get("endTime")),
                   "ray_cluster": _text_or_none(status.get("rayClusterName"))},
        "condition": {"type": deployment, "status": "True", "reason": reason, "message": message,
                      "job_status": job_status},
    }
    ident = uid or f"RayJob/{ns}/{name}"
    return [EventRecord(
        id=stable_id("job-object", ident, "status", deployment, job_status or "", reason or "", t),
        time=t, namespace=ns, reason=reason or deployment, type="Condition", object_kind="RayJob",
        object_name=name, message=message, count=1, details=details,
    )]


def _time_or_none(value: Any) -> str | None:
    """A time that is only context: a bad one is None, not a skip of the object."""
    try:
        return normalize_time(value)
    except _Bad:
        return None


# ---------------------------------------------------------------------------
# Pod objects


def _pod_records(obj: dict) -> list[EventRecord | Skip]:
    meta, name, ns, uid = _object_head(obj)
    spec = _dict(obj, "spec") or {}
    status = _dict(obj, "status") or {}
    node = spec.get("nodeName") if isinstance(spec.get("nodeName"), str) else None
    ident = uid or f"{ns}/{name}"
    out: list[EventRecord | Skip] = []
    lists: dict[str, list] = {}
    for key in ("conditions", "initContainerStatuses", "containerStatuses"):
        try:
            lists[key] = _list(status, key, f"status.{key}")
        except _Bad as bad:  # the pod's other records stand
            lists[key] = []
            out.append(Skip(bad.reason, f"Pod {ns}/{name}: {bad.detail}"))
    restarts = {}
    for cs in lists["containerStatuses"]:
        if isinstance(cs, dict) and isinstance(cs.get("name"), str):
            restarts[cs["name"]] = _bounded_int(cs.get("restartCount")) or 0
    pod_info = {
        "uid": uid,
        "labels": _labels(meta.get("labels")),
        "annotations": {k: v for k, v in _labels(meta.get("annotations")).items() if "kueue" in k or "kubeflow" in k or "jobset" in k},
        "owner": _owner(meta),
        "node": node,
        "accelerators": pod_accelerators(spec),
        "phase": _text_or_none(status.get("phase")),
        "status_reason": _text_or_none(status.get("reason")),
        "status_message": _text_or_none(status.get("message")),
        "restarts": restarts,
    }
    base = {"from": "pod", "pod": pod_info}
    created = normalize_time(meta.get("creationTimestamp"), "metadata.creationTimestamp")
    if created is None:
        raise _Bad("missing_field", "metadata.creationTimestamp")
    out.insert(0, EventRecord(
        id=stable_id("pod", ident, "Created"), time=created, namespace=ns, pod=name, node=node,
        reason="Created", type="Object", object_kind="Pod", object_name=name,
        message=status.get("message") if isinstance(status.get("message"), str) else None,
        count=1, details=base,
    ))
    for cond in lists["conditions"]:
        try:
            out.append(_condition_record("pod", ident, "Pod", name, ns, cond, base, pod=name, node=node))
        except _Bad as bad:
            out.append(Skip(bad.reason, f"Pod {ns}/{name} condition: {bad.detail}"))
    for key in ("initContainerStatuses", "containerStatuses"):
        for cs in lists[key]:
            try:
                out.extend(_container_records(ident, name, ns, node, cs, base, init=key.startswith("init")))
            except _Bad as bad:
                out.append(Skip(bad.reason, f"Pod {ns}/{name} {key}: {bad.detail}"))
    return out


def _container_records(ident: str, pod: str, ns: str | None, node: str | None, cs: Any,
                       base: dict, init: bool) -> list[EventRecord]:
    if not isinstance(cs, dict):
        raise _Bad("wrong_type", "containerStatus")
    cname = _str(cs, "name", "containerStatus.name", required=True)
    restarts = _int(cs, "restartCount", "containerStatus.restartCount") or 0
    out = []
    for which in ("lastState", "state"):
        st = _dict(cs, which)
        if not st:
            continue
        for state_kind in ("terminated", "waiting"):
            s = _dict(st, state_kind)
            if s is None:
                continue
            reason = _str(s, "reason")
            if state_kind == "waiting" and reason in (None, "ContainerCreating", "PodInitializing"):
                continue
            exit_code = _int(s, "exitCode") if state_kind == "terminated" else None
            t = None
            if state_kind == "terminated":
                t = normalize_time(s.get("finishedAt"), "finishedAt") or normalize_time(s.get("startedAt"), "startedAt")
            # A termination moves from `state` to `lastState` when the container restarts:
            # the same termination keeps its id. A waiting state has no time of its own.
            occurrence = (exit_code, t) if state_kind == "terminated" else ()
            details = dict(base)
            details["container_state"] = {
                "state": state_kind, "which": which, "reason": reason, "exit_code": exit_code,
                "signal": _int(s, "signal") if state_kind == "terminated" else None,
                "started_at": normalize_time(s.get("startedAt"), "startedAt") if state_kind == "terminated" else None,
                "restart_count": restarts, "init": init,
            }
            out.append(EventRecord(
                id=stable_id("pod", ident, "ctr", cname, state_kind, reason or "", *occurrence),
                time=t, namespace=ns, pod=pod, container=cname, node=node,
                reason=reason or ("Terminated" if state_kind == "terminated" else "Waiting"),
                type="ContainerStatus", object_kind="Pod", object_name=pod,
                message=_str(s, "message"), count=1, details=details,
            ))
    return out


# ---------------------------------------------------------------------------
# Dispatch


def _unwrap(obj: dict) -> tuple[dict | None, Skip | None]:
    """Remove exporter / watch wrappers. Returns (object, None) or (None, skip)."""
    for _ in range(3):
        if "event" in obj and "verb" in obj and isinstance(obj.get("event"), dict):  # eventrouter
            obj = obj["event"]
            continue
        t = obj.get("type")
        if isinstance(t, str) and t in _WATCH_TYPES and isinstance(obj.get("object"), dict) and "reason" not in obj:
            if t == "BOOKMARK":
                return None, Skip("bookmark", "watch bookmark")
            if t == "ERROR":
                return None, Skip("unknown_kind", "watch ERROR status")
            obj = obj["object"]
            continue
        break
    return obj, None


def decode_object(obj: Any, line: int | None = None) -> Iterator[Decoded]:
    """Records (and skips) from one parsed JSON value: an Event, Workload, Pod, list or wrapper."""
    if not isinstance(obj, dict):
        if isinstance(obj, list):
            for item in obj:
                yield from decode_object(item, line)
            return
        yield Skip("not_an_object", type(obj).__name__, line)
        return
    obj, skip = _unwrap(obj)
    if skip is not None:
        yield skip._replace(line=line)
        return
    assert obj is not None
    kind = obj.get("kind")
    if kind is not None and not isinstance(kind, str):
        yield Skip("wrong_type", "kind", line)
        return
    items = obj.get("items")
    if isinstance(items, list) and (kind is None or kind.endswith(_LIST_KINDS_SUFFIX)):
        for item in items:
            yield from decode_object(item, line)
        return
    try:
        if kind == "Event" or (kind is None and (_is_core_event(obj) or _is_new_event(obj))):
            yield from _event_records(obj)
        elif kind == "Workload":
            for r in _workload_records(obj):
                yield r._replace(line=line) if isinstance(r, Skip) else r
        elif kind == "Pod":
            for r in _pod_records(obj):
                yield r._replace(line=line) if isinstance(r, Skip) else r
        elif kind == "RayJob":
            for r in _rayjob_records(obj):
                yield r._replace(line=line) if isinstance(r, Skip) else r
        elif kind in JOB_OBJECT_KINDS:
            for r in _job_object_records(obj, kind):
                yield r._replace(line=line) if isinstance(r, Skip) else r
        else:
            yield Skip("unknown_kind", kind or "no kind", line)
    except _Bad as bad:
        yield Skip(bad.reason, f"{kind or 'Event'}: {bad.detail}", line)


def _documents(lines: Iterable[str]) -> Iterator[tuple[Any, int] | Skip]:
    """JSON values from text: NDJSON, or pretty-printed documents (one or several in a row).

    NDJSON is read line by line. When the first non-blank line is not a whole JSON
    value but opens one, the text is read as a sequence of documents; a document
    that does not decode (cut, or broken inside) is one `bad_json` skip, and reading
    resyncs at the next line that opens a document at its first column (where
    pretty-printers and NDJSON writers start one), so the documents after it are kept.
    """
    it = iter(lines)
    lineno = 0
    head = ""
    for raw in it:
        lineno += 1
        if raw.strip():
            head = raw
            break
    if not head:
        return
    try:
        yield json.loads(head), lineno
        line_mode = True
    except (ValueError, RecursionError):
        if _YAML_HEAD.match(head):  # `kubectl get ... -o yaml`
            yield from _yaml_values(head, it, lineno)
            return
        line_mode = not head.lstrip().startswith(("{", "["))
        if line_mode:
            yield Skip("bad_json", head.strip()[:80], lineno)
    if line_mode:
        for raw in it:
            lineno += 1
            s = raw.strip()
            if not s:
                continue
            try:
                yield json.loads(s), lineno
            except (ValueError, RecursionError):
                yield Skip("bad_json", s[:80], lineno)
        return
    # Lines given without their newlines get them back (the resync and line numbers need them).
    text = ("" if head.endswith("\n") else "\n").join((head, *it))
    dec = json.JSONDecoder()
    pos, n, at_line = 0, len(text), lineno
    while True:
        while pos < n and text[pos] in " \t\r\n":
            if text[pos] == "\n":
                at_line += 1
            pos += 1
        if pos >= n:
            return
        try:
            value, end = dec.raw_decode(text, pos)
        except (ValueError, RecursionError):
            nl = text.find("\n", pos)
            yield Skip("bad_json", text[pos:nl if nl >= 0 else n][:80], at_line)
            nxt = _next_document(text, pos)
            if nxt < 0:
                return
            at_line += text.count("\n", pos, nxt)
            pos = nxt
            continue
        yield value, at_line
        at_line += text.count("\n", pos, end)
        pos = end


# ---------------------------------------------------------------------------
# YAML: what `kubectl get ... -o yaml` prints (one object; a `kind: List` with `items`; `-w -o yaml` documents
# after `---`). kubectl writes JSON's tree as YAML (sigs.k8s.io/yaml JSONToYAML, go-yaml's block style): top-level
# keys at column 0, the List's items each opened by `- ` under `items:` (at column 0 from kubectl, indented by some
# other writers, e.g. `  - ` in the OpenShift console's copies); strings that would read as another type quoted
# (`status: "True"`, `lastTransitionTime: "2020-04-28T09:34:40Z"`; kubernetes/kubernetes#90551 shows one).
# A List's items are read one at a time (memory: one item), each loaded alone by PyYAML's safe loader (libyaml's
# where installed); an item or document that does not load is one `bad_yaml` skip (the YAML error's kind and line,
# never the text), and reading goes on at the next item or document.

# The first line of a YAML file of objects: a document marker, a directive, a comment, or a top-level key.
_YAML_HEAD = re.compile(r"(?:---|%YAML|#|[A-Za-z_][\w.\-/]*:(?:[ \t]|\r?\n|$))")
_YAML_ITEMS = re.compile(r"items:[ \t]*(?:#.*)?$")
_YAML_ITEM = re.compile(r"( *)-(?: |$)")
_YAML_DOC_END = re.compile(r"(?:---|\.\.\.)(?:[ \t].*)?$")
_yaml_loader_class: Any = None


def _yaml_loader() -> Any:
    """PyYAML's safe loader (libyaml's where built), a timestamp read as the string it is (kubectl quotes them;
    other writers may not, and every time here is read as RFC 3339 text); None without PyYAML."""
    global _yaml_loader_class
    if _yaml_loader_class is None:
        try:
            import yaml
        except ImportError:
            return None
        base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        loader = type("_ObjectLoader", (base,), {})
        loader.add_constructor("tag:yaml.org,2002:timestamp", lambda ld, node: ld.construct_scalar(node))
        _yaml_loader_class = (yaml, loader)
    return _yaml_loader_class


def _yaml_load(text: str, lineno: int) -> tuple[Any, int] | Skip:
    yaml, loader = _yaml_loader()
    try:
        value = yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader (SafeLoader / CSafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = lineno + mark.line if mark is not None else lineno
        return Skip("bad_yaml", f"{type(exc).__name__}: {getattr(exc, 'problem', None) or 'does not load'}", at)
    except (ValueError, RecursionError, OverflowError) as exc:  # a value the constructor rejects
        return Skip("bad_yaml", type(exc).__name__, lineno)
    if not _tree_within(value, len(text) + 16):
        # Anchors and aliases (kubectl writes none) can make a small text a huge tree: not read.
        return Skip("bad_yaml", "aliases", lineno)
    return value, lineno


def _tree_within(value: Any, budget: int) -> bool:
    """Whether the tree under `value` has at most `budget` nodes (a tree without aliases has fewer than its text's
    characters): stops as soon as the budget is spent."""
    stack = [value]
    while stack:
        budget -= 1
        if budget < 0:
            return False
        v = stack.pop()
        if isinstance(v, dict):
            stack.extend(v.values())
            budget -= len(v)
        elif isinstance(v, list):
            stack.extend(v)
    return True


def _yaml_values(head: str, rest: Iterable[str], lineno: int) -> Iterator[tuple[Any, int] | Skip]:
    """(value, line) of each object in YAML text, or a Skip: each document after `---`, and each item of a
    top-level `items:` sequence alone (a List of any size read one item at a time)."""
    if _yaml_loader() is None:
        yield Skip("bad_yaml", "PyYAML is not installed (pip install pyyaml)", lineno)
        return
    doc: list[str] = []  # the document's lines outside its items
    doc_line = lineno
    items_seen = False
    item: list[str] = []
    item_line = lineno
    marker: str | None = None  # the indentation of the items' `- `, once seen
    in_items = False

    def item_value() -> Iterator[tuple[Any, int] | Skip]:
        cut = len(marker or "") + 2
        lines = [(marker or "") + "  " + item[0][cut:]] + item[1:]
        text = "\n".join(ln[cut:] if ln[:cut].isspace() else ln.lstrip(" ") for ln in lines)
        got = _yaml_load(text, item_line)
        if isinstance(got, Skip) or got[0] is not None:
            yield got

    def doc_values() -> Iterator[tuple[Any, int] | Skip]:
        if not any(ln.strip() and not ln.lstrip().startswith("#") for ln in doc):
            return
        got = _yaml_load("\n".join(doc), doc_line)
        if isinstance(got, Skip):
            yield got
        elif got[0] is not None and not items_seen:  # a List's wrapper (kind, metadata) says nothing more
            yield got

    n = lineno - 1
    for raw in _chain(head, rest):
        n += 1
        line = raw.rstrip("\r\n")
        if in_items:
            if marker is None:
                m = _YAML_ITEM.match(line)
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                if m:
                    marker, item, item_line = m.group(1), [line], n
                    continue
                in_items = False
            elif line.startswith(marker + "- ") or line == marker + "-":
                yield from item_value()
                item, item_line = [line], n
                continue
            elif not line.strip() or (line[:len(marker) + 1].isspace() and len(line) > len(marker)):
                item.append(line)
                continue
            else:
                if item:
                    yield from item_value()
                item, marker, in_items = [], None, False
        if _YAML_DOC_END.match(line):
            yield from doc_values()
            doc, doc_line, items_seen = [], n + 1, False
            continue
        if _YAML_ITEMS.match(line):
            in_items = items_seen = True
            continue
        if not doc:
            doc_line = n
        doc.append(line)
    if in_items and item:
        yield from item_value()
    yield from doc_values()


def _chain(head: str, rest: Iterable[str]) -> Iterator[str]:
    yield head
    yield from rest


def _next_document(text: str, pos: int) -> int:
    """Where the next document after `pos` opens: a `{` or `[` first on its line; -1 if none."""
    brace, bracket = text.find("\n{", pos), text.find("\n[", pos)
    found = min((i for i in (brace, bracket) if i >= 0), default=-1)
    return found + 1 if found >= 0 else -1


def decode_event_documents(lines: Iterable[str]) -> Iterator[Decoded]:
    """Every record and skip of the text of an events file, in order, repeats included: the
    caller deduplicates (`decode_event_stream` in memory; replay on disk,
    pipeline/correlate/event_dedup.py, with the same rule)."""
    for item in _documents(lines):
        if isinstance(item, Skip):
            yield item
            continue
        value, lineno = item
        yield from decode_object(value, lineno)


def is_primary_copy(rec: EventRecord) -> bool:
    """Whether a record is an Event occurrence as delivered (not derived from a later update, nor
    a condition a snapshot repeats): a second primary copy of one id is a `duplicate` skip."""
    d = rec.details or {}
    return d.get("from") == "event" and not d.get("derived")


def decode_event_stream(lines: Iterable[str]) -> Iterator[Decoded]:
    """Records and skips from the text of an events file (NDJSON or JSON documents).

    Within one stream a record id is produced once. The same Event occurrence (uid
    and count) delivered twice is counted as a `duplicate` skip; the first occurrence
    derived from a later update, and the conditions that Workload and Pod snapshots
    repeat by nature, are deduplicated silently.
    """
    # Each id seen, marked when a primary copy was: 16 bytes an id (a dict of the id strings
    # held 130, most of what a file of a million events cost).
    seen = IdSet()
    for item in _documents(lines):
        if isinstance(item, Skip):
            yield item
            continue
        value, lineno = item
        for rec in decode_object(value, lineno):
            if isinstance(rec, Skip):
                yield rec
                continue
            is_primary = is_primary_copy(rec)
            if rec.id in seen:
                if is_primary and seen.marked(rec.id):
                    yield Skip("duplicate", f"{rec.object_kind} {rec.object_name} {rec.reason} #{rec.count}", lineno)
                if is_primary:
                    seen.mark(rec.id)
                continue
            if is_primary:
                seen.mark(rec.id)
            else:
                seen.add(rec.id)
            yield rec


def count_skips(items: Iterable[Decoded]) -> tuple[list[EventRecord], dict[str, int]]:
    """Split decoder output into records and a {reason: count} tally of skips."""
    records: list[EventRecord] = []
    skips: dict[str, int] = {}
    for it in items:
        if isinstance(it, Skip):
            skips[it.reason] = skips.get(it.reason, 0) + 1
        else:
            records.append(it)
    return records, skips
