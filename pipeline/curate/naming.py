"""Which job a pod or a Kueue workload belongs to: labels first, then the name conventions.

Pure functions of names, labels and annotations (FORMATS.md 2.5); curation stamps every record
with the job they give, correlation links events to jobs with the same rules.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

# k8s.io/apimachinery pkg/util/rand: generated name suffixes use this alphabet (no vowels, no 0 1 3).
_RAND = "[bcdfghjklmnpqrstvwxz2456789]"
_KUBEFLOW_POD = re.compile(r"^(?P<job>.+)-(?:master|worker|launcher|chief|ps|evaluator|server|scheduler)-\d+$")
_JOBSET_POD_INIT = re.compile(rf"^(?P<job>.+)-(?:dataset|model)-initializer-\d+-\d+-{_RAND}{{5}}$")
_JOBSET_POD = re.compile(rf"^(?P<job>.+)-[a-z0-9]+-\d+-\d+-{_RAND}{{5}}$")
_INDEXED_JOB_POD = re.compile(rf"^(?P<job>.+)-\d+-{_RAND}{{5}}$")
_REPLICASET_POD = re.compile(rf"^(?P<job>.+)-{_RAND}{{6,10}}-{_RAND}{{5}}$")
_MPI_LAUNCHER_POD = re.compile(rf"^(?P<job>.+)-launcher-{_RAND}{{5}}$")
_JOB_POD = re.compile(rf"^(?P<job>.+)-{_RAND}{{5}}$")
_POD_PATTERNS = (_KUBEFLOW_POD, _JOBSET_POD_INIT, _JOBSET_POD, _MPI_LAUNCHER_POD, _INDEXED_JOB_POD,
                 _REPLICASET_POD, _JOB_POD)
_RAND_SUFFIX = re.compile(rf"-{_RAND}{{5}}$")

# Labels that name the job a pod belongs to, most specific first (FORMATS.md 2.5).
JOB_LABELS = (
    "training.kubeflow.org/job-name",
    "jobset.sigs.k8s.io/jobset-name",
    "kueue.x-k8s.io/pod-group-name",
    "leaderworkerset.sigs.k8s.io/name",
    "volcano.sh/job-name",
    "batch.kubernetes.io/job-name",
    "job-name",
    "ray.io/cluster",
)
WORKLOAD_ANNOTATION = "kueue.x-k8s.io/workload"

# pkg/controller/jobframework/workload_names.go: strings.ToLower(Kind) + "-" + owner, truncated, + "-" + 5 hex.
_WORKLOAD_NAME = re.compile(r"^(?P<kind>[a-z0-9]+)-(?P<owner>.+)-(?P<hash>[0-9a-f]{5})$")
WORKLOAD_OWNER_KINDS = {
    "job", "pytorchjob", "tfjob", "mpijob", "xgboostjob", "paddlejob", "jaxjob", "jobset", "trainjob",
    "rayjob", "raycluster", "pod", "leaderworkerset", "statefulset", "deployment", "appwrapper",
    "sparkapplication",
}
JOB_KINDS = {
    "Job", "PyTorchJob", "TFJob", "MPIJob", "XGBoostJob", "PaddleJob", "JAXJob", "JobSet", "TrainJob",
    "RayJob", "RayCluster", "LeaderWorkerSet", "AppWrapper", "PodGroup",
}


def label_value(labels: Mapping[str, str] | None, key: str) -> str | None:
    if not labels:
        return None
    v = labels.get(key)
    if v is None:  # kubernetes-event-exporter's Elasticsearch sink de-dots keys
        v = labels.get(key.replace(".", "_"))
    return v or None


def qualified(namespace: str | None, name: str) -> str:
    return f"{namespace}/{name}" if namespace else name


def job_of_pod(namespace: str | None, pod_name: str, labels: Mapping[str, str] | None = None,
               annotations: Mapping[str, str] | None = None) -> str:
    """The job ("ns/name") a pod belongs to: its job labels, Kueue's workload annotation, else its name.

    Name conventions, when no label says: Kubeflow `<job>-master-0` / `<job>-worker-N`,
    JobSet `<jobset>-<rjob>-<jobidx>-<podidx>-<5 rand>`, indexed Job `<job>-<idx>-<5 rand>`,
    MPI launcher `<job>-launcher-<5 rand>`, ReplicaSet `<name>-<hash>-<5 rand>`, Job
    `<job>-<5 rand>`; anything else is a job of its own.
    """
    for key in JOB_LABELS:
        v = label_value(labels, key)
        if v:
            return qualified(namespace, v)
    wl = label_value(annotations, WORKLOAD_ANNOTATION) or label_value(labels, WORKLOAD_ANNOTATION)
    if wl:
        return job_of_workload(namespace, wl)
    for pat in _POD_PATTERNS:
        m = pat.match(pod_name)
        if m:
            return qualified(namespace, m.group("job"))
    return qualified(namespace, pod_name)


def job_of_workload(namespace: str | None, workload_name: str, owner: Mapping[str, Any] | None = None) -> str:
    """The job ("ns/name") of a Kueue Workload: its owner reference, else the name convention."""
    if owner and isinstance(owner.get("name"), str) and owner["name"]:
        return qualified(namespace, owner["name"])
    m = _WORKLOAD_NAME.match(workload_name)
    if m and m.group("kind") in WORKLOAD_OWNER_KINDS:
        return qualified(namespace, m.group("owner"))
    return qualified(namespace, workload_name)


def pod_role(pod_name: str) -> str:
    """A pod's name without its random suffix: the same gang member across attempts."""
    return _RAND_SUFFIX.sub("", pod_name)
