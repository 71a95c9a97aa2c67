"""[issue 16] The status of job-kind objects (`kubectl get job,pytorchjob,jobset,trainjob,workload -o json`) as
evidence of a run's end: parsers/events.py reads their conditions, correlate/job_ends.job_condition_end says what
each says, diagnose reads them as it reads the job controllers' Events (fixtures/job_ends).

Fixtures: fixtures/objects (built by its build.py from the sources' strings, cited in its README.md).
"""

from __future__ import annotations

import copy
import json
import runpy
import shutil
from pathlib import Path

import pytest

from gangscope.parsers.events import Skip, decode_event_stream, decode_object
from gangscope.pipeline.correlate.attempts import build_attempts
from gangscope.pipeline.correlate.job_ends import job_condition_end
from gangscope.pipeline.correlate.signals import classify
from gangscope.pipeline.run import replay

OBJECTS = Path(__file__).resolve().parent.parent / "fixtures" / "objects"


def diagnoses(events: list[Path], paths: list[Path] | None = None) -> dict[tuple[str, int], object]:
    result = replay.run(replay.ReplayOptions(paths=[str(p) for p in (paths or [OBJECTS / "pods"])],
                                             events=[str(e) for e in events]), lambda batch: None)
    assert result.failures.summary() == []
    return {(d.job, d.attempt): d for d in result.diagnoses}


@pytest.fixture(scope="module")
def after() -> dict:
    return diagnoses([OBJECTS / "objects.json"])


@pytest.fixture(scope="module")
def before() -> dict:
    return diagnoses([])


EXPECTED = [
    ("team-o/opt-done", "succeeded", "success"),  # Job SuccessCriteriaMet + Complete; log cut at step 20/100
    ("team-o/mae-deadline", "failed", "time_limit"),  # Job FailureTarget + Failed DeadlineExceeded
    ("team-o/swin-backoff", "failed", "unknown"),  # Job Failed BackoffLimitExceeded, no cause in the log
    ("team-o/llava-pt", "succeeded", "success"),  # PyTorchJob Succeeded
    ("team-o/phi-deadline", "failed", "time_limit"),  # PyTorchJob Failed, the training operator's deadline message
    ("team-o/gemma-js", "succeeded", "success"),  # JobSet Completed (its child Job linked to it)
    ("team-o/yi-js", "failed", "unknown"),  # JobSet Failed FailedJobs
    ("team-o/qwen-tj", "succeeded", "success"),  # TrainJob Complete
    ("team-o/deit-kueue", "succeeded", "success"),  # Kueue attempt admitted, the Job's Complete ends it
]


@pytest.mark.parametrize("job,outcome,category", EXPECTED, ids=[e[0] for e in EXPECTED])
def test_object_status_ends_the_run(after, before, job, outcome, category):
    d = after[(job, 1)]
    assert (d.outcome, d.category) == (outcome, category), d.summary
    assert before[(job, 1)].outcome == "running"  # the logs alone show no end


def test_no_end_condition_leaves_a_running_job_running(after, before):
    """Running / Restarting=False say nothing of an end: the same verdict as without the object."""
    d, b = after[("team-o/mistral-run", 1)], before[("team-o/mistral-run", 1)]
    assert (d.outcome, d.category) == (b.outcome, b.category) == ("running", "hang")


def test_child_job_is_no_job_of_its_own(after):
    """A JobSet's child Job (ownerReferences) links to the JobSet; its Complete is not the JobSet's end."""
    assert not any(job.startswith("team-o/gemma-js-") for job, _ in after)


def test_evidence_is_the_condition(after):
    d = after[("team-o/mae-deadline", 1)]
    assert any("Job was active longer than specified deadline" in e["text"] for e in d.evidence)
    assert d.events  # the condition records are the attempt's events
    d = after[("team-o/opt-done", 1)]
    assert "Reached expected number of succeeded pods" in d.summary


def test_single_object_file(tmp_path):
    """`kubectl get job NAME -o json`: one object, not a list."""
    d = diagnoses([OBJECTS / "job.json"])[("team-o/opt-done", 1)]
    assert (d.outcome, d.category) == ("succeeded", "success")


def test_condition_records_keep_time_reason_message():
    recs = [r for r in decode_event_stream((OBJECTS / "objects.json").read_text().splitlines(True))
            if not isinstance(r, Skip) and r.object_name == "mae-deadline"]
    assert [(r.details["condition"]["type"], r.reason, r.time) for r in recs] == [
        ("FailureTarget", "DeadlineExceeded", "2026-05-11T10:00:00Z"),
        ("Failed", "DeadlineExceeded", "2026-05-11T10:00:31Z"),
    ]
    r = recs[-1]
    assert r.type == "Condition" and r.object_kind == "Job" and r.namespace == "team-o"
    assert r.message == "Job was active longer than specified deadline"
    assert r.details["from"] == "object" and r.details["involvedObject"]["uid"] == r.details["object"]["uid"]


def test_malformed_objects_are_counted_skips_never_a_crash():
    out = list(decode_event_stream((OBJECTS / "malformed.json").read_text().splitlines(True)))
    skips = [s for s in out if isinstance(s, Skip)]
    recs = [r for r in out if not isinstance(r, Skip)]
    assert sorted(s.reason for s in skips) == sorted(
        ["missing_field", "wrong_type", "bad_timestamp", "missing_field", "missing_field", "wrong_type", "wrong_type"])
    # the good JobSet and the readable Suspended condition beside the broken ones
    assert sorted((r.object_name, r.details["condition"]["type"]) for r in recs) == [
        ("bad-times", "Suspended"), ("good-js", "Completed")]
    assert all(s.line is not None for s in skips)


def _job(conditions, kind="Job", api="batch/v1", **meta):
    return {"apiVersion": api, "kind": kind,
            "metadata": {"name": "j", "namespace": "n", "uid": "u-1", **meta}, "status": {"conditions": conditions}}


@pytest.mark.parametrize("status", [
    None, 1, "x", [], {"conditions": None}, {"conditions": {}}, {"conditions": [None, 1, [], {}]},
    {"conditions": [{"type": 1, "status": True, "lastTransitionTime": 5}]},
    {"conditions": [{"type": "Complete", "status": "True", "lastTransitionTime": "2026-13-45T99:00:00Z"}]},
])
@pytest.mark.parametrize("kind", ["Job", "PyTorchJob", "JobSet", "TrainJob", "TFJob"])
def test_hostile_status_is_never_a_crash(kind, status):
    obj = _job([], kind=kind)
    obj["status"] = status
    out = list(decode_object(obj))
    assert all(isinstance(r, Skip) or r.object_kind == kind for r in out)
    for r in out:
        if not isinstance(r, Skip):
            classify(r)


def test_time_falls_back_to_the_kinds_other_time():
    """lastTransitionTime is optional in batch/v1 and kubeflow.org/v1: lastProbeTime / lastUpdateTime stand in."""
    (r,) = decode_object(_job([{"type": "Complete", "status": "True", "lastProbeTime": "2026-01-02T03:04:05+02:00"}]))
    assert r.time == "2026-01-02T01:04:05Z"
    (r,) = decode_object(_job([{"type": "Succeeded", "status": "True", "lastUpdateTime": "2026-01-02T03:04:05Z"}],
                              kind="PyTorchJob", api="kubeflow.org/v1"))
    assert r.time == "2026-01-02T03:04:05Z"
    (s,) = decode_object(_job([{"type": "Completed", "status": "True", "lastUpdateTime": "2026-01-02T03:04:05Z"}],
                              kind="JobSet", api="jobset.x-k8s.io/v1alpha2"))
    assert isinstance(s, Skip) and s.reason == "missing_field"


def test_same_object_twice_gives_the_same_ids():
    text = (OBJECTS / "objects.json").read_text()
    once = [r.id for r in decode_event_stream(text.splitlines(True)) if not isinstance(r, Skip)]
    twice = [r.id for r in decode_event_stream((text + text).splitlines(True)) if not isinstance(r, Skip)]
    assert once == twice and len(set(once)) == len(once)


def test_same_name_other_kind_other_ids():
    """A TrainJob and the JobSet of the same name, without uids, keep apart."""
    c = [{"type": "Complete", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}]
    a = list(decode_object({"kind": "TrainJob", "metadata": {"name": "x", "namespace": "n"}, "status": {"conditions": c}}))
    b = list(decode_object({"kind": "JobSet", "metadata": {"name": "x", "namespace": "n"}, "status": {"conditions": c}}))
    assert a[0].id != b[0].id


TABLE = [
    # (kind, type, status, reason, message, outcome, category)
    ("Job", "Complete", "True", "CompletionsReached", "Reached expected number of succeeded pods", "succeeded", None),
    ("Job", "Complete", "True", None, None, "succeeded", None),  # before 1.31: no reason
    ("Job", "SuccessCriteriaMet", "True", "SuccessPolicy", "Matched rules at index 0", "succeeded", None),
    ("Job", "Failed", "True", "DeadlineExceeded", "Job was active longer than specified deadline", "failed", "time_limit"),
    ("Job", "FailureTarget", "True", "DeadlineExceeded", "Job was active longer than specified deadline", "failed", "time_limit"),
    ("Job", "Failed", "True", "BackoffLimitExceeded", "Job has reached the specified backoff limit", "failed", "unknown"),
    ("Job", "Failed", "True", "PodFailurePolicy", "Container main for pod n/p failed with exit code 42 matching FailJob rule at index 0", "failed", "unknown"),
    ("Job", "Failed", "True", "MaxFailedIndexesExceeded", "Job has exceeded the specified maximal number of failed indexes", "failed", "unknown"),
    ("Job", "Suspended", "True", "JobSuspended", "Job suspended", None, None),
    ("Job", "Complete", "False", None, None, None, None),
    ("PyTorchJob", "Succeeded", "True", "PyTorchJobSucceeded", "PyTorchJob n/j successfully completed.", "succeeded", None),
    ("PyTorchJob", "Failed", "True", "PyTorchJobFailed", "Job j has failed because it was active longer than specified deadline", "failed", "time_limit"),
    ("TFJob", "Failed", "True", "TFJobFailed", "TFJob n/j has failed because 1 Worker replica(s) failed.", "failed", "unknown"),
    ("MPIJob", "Succeeded", "True", "MPIJobSucceeded", "MPIJob n/j successfully completed.", "succeeded", None),
    ("PyTorchJob", "Running", "True", "PyTorchJobRunning", "PyTorchJob n/j is running.", None, None),
    ("PyTorchJob", "Restarting", "True", "PyTorchJobRestarting", "PyTorchJob j is restarting because 1 Worker replica(s) failed.", None, None),
    ("PyTorchJob", "Created", "True", "PyTorchJobCreated", "PyTorchJob j is created.", None, None),
    ("JobSet", "Completed", "True", "AllJobsCompleted", "jobset completed successfully", "succeeded", None),
    ("JobSet", "Failed", "True", "ReachedMaxRestarts", "jobset failed due to reaching max number of restarts", "failed", "unknown"),
    ("JobSet", "StartupPolicyCompleted", "True", "InOrderStartupPolicyCompleted", "in order startup policy has completed", None, None),
    ("JobSet", "Suspended", "True", "SuspendedJobs", "jobset is suspended", None, None),
    ("TrainJob", "Complete", "True", "AllJobsCompleted", "jobset completed successfully", "succeeded", None),
    ("TrainJob", "Failed", "True", "FailedJobs", "jobset failed due to one or more job failures", "failed", "unknown"),
    ("TrainJob", "Created", "True", "JobsCreationSucceeded", "Succeeded to create Jobs", None, None),
    ("Job", "Succeeded", "True", None, None, None, None),  # a type of another kind
    ("JobSet", "Complete", "True", None, None, None, None),
]


@pytest.mark.parametrize("kind,ctype,status,reason,message,outcome,category", TABLE,
                         ids=[f"{t[0]}-{t[1]}-{t[2]}-{t[3]}" for t in TABLE])
def test_condition_table(kind, ctype, status, reason, message, outcome, category):
    end = job_condition_end(kind, ctype, status, reason, message)
    if outcome is None:
        assert end is None
    else:
        assert (end.outcome, end.category) == (outcome, category) and end.source
    # the same through the decoder and classify
    cond = {"type": ctype, "status": status, "lastTransitionTime": "2026-01-01T00:00:00Z"}
    if reason:
        cond["reason"] = reason
    if message:
        cond["message"] = message
    (rec,) = decode_object(_job([cond], kind=kind))
    s = classify(rec)
    if outcome is None:
        assert s is None or s.kind != "finished"
    else:
        assert s.kind == "finished" and (s.info["outcome"], s.info["category"]) == (outcome, category)


def test_kueue_attempt_closed_by_the_jobs_complete():
    """Under Kueue: the Workload's admission opens the attempt, the Job's Complete condition closes it."""
    items = json.loads((OBJECTS / "objects.json").read_text())["items"]
    mine = [o for o in items if "deit-kueue" in o["metadata"]["name"]]
    recs = [r for o in mine for r in decode_object(o) if not isinstance(r, Skip)]
    (a,) = build_attempts(recs)["team-o/deit-kueue"]
    assert a.end == "2026-05-11T09:20:00Z" and a.end_reason == "Finished"
    assert a.details["end"]["outcome"] == "succeeded"


def test_owned_by_uid_links_workload(tmp_path):
    """A Workload that names its Job only by the job-uid label (no ownerReferences) links through the Job object."""
    items = json.loads((OBJECTS / "objects.json").read_text())["items"]
    mine = [copy.deepcopy(o) for o in items if "deit-kueue" in o["metadata"]["name"]]
    wl = next(o for o in mine if o["kind"] == "Workload")
    del wl["metadata"]["ownerReferences"]
    wl["metadata"]["name"] = "wl-0001"  # a name that says nothing of the job
    recs = [r for o in mine for r in decode_object(o) if not isinstance(r, Skip)]
    assert "team-o/deit-kueue" in build_attempts(recs)


def test_fixture_is_rebuilt_identically(tmp_path):
    """build.py writes exactly the committed files."""
    dest = tmp_path / "objects"
    shutil.copytree(OBJECTS, dest, ignore=shutil.ignore_patterns("*.json", "pods", "__pycache__"))
    runpy.run_path(str(dest / "build.py"), run_name="__main__")
    for f in sorted(p.relative_to(OBJECTS) for p in OBJECTS.rglob("*") if p.is_file() and p.name != "build.py"
                    and p.name != "README.md" and "__pycache__" not in p.parts):
        assert (dest / f).read_text() == (OBJECTS / f).read_text(), f


def test_watch_stream_of_a_job_gives_each_condition_once():
    """`kubectl get job -w -o json --output-watch-events`: snapshots of one Job as it goes; a condition that every
    later snapshot repeats is one record (same id), and the end reads as from a list."""
    items = json.loads((OBJECTS / "objects.json").read_text())["items"]
    job = next(o for o in items if o["metadata"]["name"] == "mae-deadline")
    early = copy.deepcopy(job)
    early["status"]["conditions"] = early["status"]["conditions"][:1]  # FailureTarget only, pods terminating
    lines = [json.dumps({"type": "ADDED", "object": early}) + "\n", json.dumps({"type": "MODIFIED", "object": job}) + "\n"]
    out = list(decode_event_stream(lines))
    assert not any(isinstance(r, Skip) for r in out)
    assert [r.details["condition"]["type"] for r in out] == ["FailureTarget", "Failed"]
    signals = [classify(r) for r in out]
    assert [(s.kind, s.info["outcome"], s.info["category"]) for s in signals] == [
        ("finished", "failed", "time_limit"), ("finished", "failed", "time_limit")]


def test_a_kafka_message_holding_a_job_object_is_read():
    """The consumer's events topic: a Job object as one message gives its condition records (was unknown_kind,
    a dead letter)."""
    from gangscope.pipeline.curate import events as curate_events

    body = (OBJECTS / "job.json").read_bytes()
    got = curate_events.events_of_message(body)
    assert [r.details["condition"]["type"] for r in got.records] == ["SuccessCriteriaMet", "Complete"]
