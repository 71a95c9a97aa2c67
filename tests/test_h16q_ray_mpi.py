"""[issue 16] RayJob (ray.io/v1, kuberay) and MPIJob (kubeflow.org/v2beta1, mpi-operator) objects as evidence of
a run's end: a RayJob's status (jobDeploymentStatus, jobStatus, reason; no conditions) read by
correlate/job_ends.rayjob_end, an MPIJob's Failed condition and Events carrying its launcher Job's reason
(DeadlineExceeded -> time_limit). Sources: fixtures/objects/README.md.
"""

from __future__ import annotations

import copy
import json

import pytest

from gangscope.parsers.events import Skip, decode_event_stream, decode_object
from gangscope.pipeline.correlate import job_ends
from gangscope.pipeline.correlate.signals import classify

from object_fixtures import OBJECTS, diagnoses_by_attempt

RAY_DEADLINE = ("The RayJob has passed the activeDeadlineSeconds. StartTime: 2026-05-11 09:00:02 +0000 UTC. "
                "ActiveDeadlineSeconds: 3600")


@pytest.fixture(scope="module")
def after() -> dict:
    return diagnoses_by_attempt()


EXPECTED = [
    ("team-o/ray-deadline", "failed", "time_limit"),  # Failed, reason DeadlineExceeded
    ("team-o/ray-done", "succeeded", "success"),  # Complete, SUCCEEDED
    ("team-o/ray-app", "failed", "unknown"),  # Failed, AppFailed: the logs say why, or nothing does
    ("team-o/bert-mpi", "failed", "time_limit"),  # Failed, its launcher's DeadlineExceeded
    ("team-o/gpt-mpi", "failed", "unknown"),  # Failed, BackoffLimitExceeded/Error
]


@pytest.mark.parametrize("job,outcome,category", EXPECTED, ids=[e[0] for e in EXPECTED])
def test_ray_and_mpi_objects_end_the_run(after, job, outcome, category):
    d = after[(job, 1)]
    assert (d.outcome, d.category) == (outcome, category), d.summary


def test_a_running_rayjob_says_no_end(after):
    assert after[("team-o/ray-run", 1)].outcome == "running"


def _items(name: str) -> list[dict]:
    items = json.loads((OBJECTS / "objects.json").read_text())["items"]
    return [copy.deepcopy(o) for o in items if o["metadata"]["name"] == name]


def test_rayjob_record():
    (obj,) = _items("ray-deadline")
    (rec,) = decode_object(obj)
    assert (rec.type, rec.object_kind, rec.object_name, rec.reason, rec.time) == (
        "Condition", "RayJob", "ray-deadline", "DeadlineExceeded", "2026-05-11T10:00:03Z")
    assert rec.message == RAY_DEADLINE
    assert rec.details["condition"] == {"type": "Failed", "status": "True", "reason": "DeadlineExceeded",
                                        "message": RAY_DEADLINE, "job_status": "RUNNING"}
    assert rec.details["object"]["ray_cluster"] == "ray-deadline-raycluster-z4k8s"
    s = classify(rec)
    assert s.kind == "finished" and (s.info["outcome"], s.info["category"]) == ("failed", "time_limit")


RAY_TABLE = [
    ("Complete", "SUCCEEDED", None, "succeeded", None),
    ("Complete", "STOPPED", None, "failed", "unknown"),
    ("Complete", "FAILED", None, "failed", "unknown"),  # v1.0.0
    ("Failed", "RUNNING", "DeadlineExceeded", "failed", "time_limit"),
    ("Failed", "FAILED", "AppFailed", "failed", "unknown"),
    ("Failed", "PENDING", "SubmissionFailed", "failed", "unknown"),
    ("Failed", "PENDING", "PreRunningDeadlineExceeded", "failed", "unknown"),
    ("Failed", None, "ValidationFailed", "failed", "unknown"),
    ("Failed", "RUNNING", "JobDeploymentStatusTransitionGracePeriodExceeded", "failed", "unknown"),
    ("Running", "RUNNING", None, None, None),
    ("Initializing", "PENDING", None, None, None),
    ("Suspended", None, None, None, None),
    ("Retrying", "FAILED", None, None, None),
    ("Complete", "RUNNING", None, None, None),
]


@pytest.mark.parametrize("deployment,job_status,reason,outcome,category", RAY_TABLE,
                         ids=[f"{t[0]}-{t[1]}-{t[2]}" for t in RAY_TABLE])
def test_rayjob_status_table(deployment, job_status, reason, outcome, category):
    status = {"jobDeploymentStatus": deployment, "startTime": "2026-01-01T00:00:00Z",
              "endTime": "2026-01-01T01:00:00Z"}
    if job_status:
        status["jobStatus"] = job_status
    if reason:
        status["reason"] = reason
    (rec,) = decode_object({"apiVersion": "ray.io/v1", "kind": "RayJob",
                            "metadata": {"name": "r", "namespace": "n", "uid": "u"}, "status": status})
    s = classify(rec)
    if outcome is None:
        assert s is None or s.kind != "finished"
    else:
        assert s.kind == "finished" and (s.info["outcome"], s.info["category"]) == (outcome, category)
        assert rec.time == "2026-01-01T01:00:00Z"


def test_rayjob_times_and_broken_status():
    def ray(status):
        return list(decode_object({"apiVersion": "ray.io/v1", "kind": "RayJob",
                                   "metadata": {"name": "r", "namespace": "n"}, "status": status}))
    # the Ray job's own end time where the operator's is missing (v1.4.0+ rayJobInfo)
    (rec,) = ray({"jobDeploymentStatus": "Complete", "jobStatus": "SUCCEEDED",
                  "rayJobInfo": {"endTime": "2026-01-01T02:00:00Z"}})
    assert rec.time == "2026-01-01T02:00:00Z"
    assert [s.reason for s in ray({"jobDeploymentStatus": "Failed", "reason": "AppFailed"})] == ["missing_field"]
    assert [s.reason for s in ray({"jobDeploymentStatus": 3})] == ["wrong_type"]
    assert [s.reason for s in ray({"jobDeploymentStatus": "Complete", "endTime": "soon"})] == ["bad_timestamp"]
    assert ray({}) == [] and ray({"jobDeploymentStatus": "Running"}) == []  # New; Running with no time yet
    for status in (None, 1, "x", [], {"rayJobInfo": 5, "jobDeploymentStatus": "Complete"}):
        out = ray(status)
        assert all(isinstance(r, Skip) for r in out)


def test_rayjob_watch_gives_each_state_once():
    (obj,) = _items("ray-deadline")
    running = copy.deepcopy(obj)
    running["status"] = {"jobDeploymentStatus": "Running", "jobStatus": "RUNNING", "startTime": obj["status"]["startTime"]}
    lines = [json.dumps({"type": t, "object": o}) + "\n" for t, o in
             (("ADDED", running), ("MODIFIED", running), ("MODIFIED", obj))]
    out = list(decode_event_stream(lines))
    assert [(r.details["condition"]["type"], r.reason) for r in out] == [("Running", "RUNNING"),
                                                                         ("Failed", "DeadlineExceeded")]


def test_mpijob_condition_reason_is_its_launchers():
    """The MPIJob's Failed condition takes its launcher Job's reason: DeadlineExceeded is the deadline whatever the
    message says (a message cut, or another Kubernetes version's words)."""
    end = job_ends.job_condition_end("MPIJob", "Failed", "True", "DeadlineExceeded", "MPIJob team-o/x has failed")
    assert (end.outcome, end.category) == ("failed", "time_limit") and "mpi-operator" in end.source
    end = job_ends.job_condition_end("MPIJob", "Failed", "True", "MPIJobEvicted", "2/4 workers are evicted")
    assert (end.outcome, end.category) == ("failed", "unknown")


@pytest.mark.parametrize("reason,message,outcome,category", [
    ("DeadlineExceeded", "Job was active longer than specified deadline", "failed", "time_limit"),
    ("BackoffLimitExceeded/Error", "Job has reached the specified backoff limit: ", "failed", "unknown"),
    ("BackoffLimitExceeded", "Job has reached the specified backoff limit", "failed", "unknown"),
    ("MPIJobEvicted", "1/2 workers are evicted", "failed", "unknown"),
    ("MPIJobFailed", "MPIJob team-o/x has failed", "failed", "unknown"),
    ("MPIJobSucceeded", "MPIJob team-o/x successfully completed.", "succeeded", None),
    ("MPIJobCreated", "MPIJob team-o/x is created.", None, None),
    ("MPIJobRunning", "MPIJob team-o/x is running", None, None),
])
def test_mpijob_events(reason, message, outcome, category):
    """mpi-operator's Events on the MPIJob (updateMPIJobFailedStatus: Event(Warning, launcher's reason, message))."""
    event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "x.1", "namespace": "team-o", "uid": "e1"},
             "involvedObject": {"kind": "MPIJob", "name": "x", "namespace": "team-o"}, "reason": reason,
             "message": message, "type": "Warning", "firstTimestamp": "2026-01-01T00:00:00Z",
             "lastTimestamp": "2026-01-01T00:00:00Z", "count": 1}
    (rec,) = decode_object(event)
    s = classify(rec)
    if outcome is None:
        assert s is None or s.kind != "finished" or not s.info.get("outcome")
    else:
        assert s.kind == "finished" and (s.info["outcome"], s.info["category"]) == (outcome, category)


def test_kueue_finish_of_a_rayjob_past_its_deadline():
    """Kueue's Workload Finished condition copies the RayJob's message (jobframework/reconciler.go)."""
    end = job_ends.workload_finish("Failed", RAY_DEADLINE)
    assert (end.outcome, end.category) == ("failed", "time_limit")
