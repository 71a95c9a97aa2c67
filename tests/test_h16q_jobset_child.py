"""[issue 16] A JobSet that failed because one of its child Jobs passed its activeDeadlineSeconds reads
`time_limit`: the JobSet's own Failed condition (FailedJobs, ReachedMaxRestarts, FailJobSetFailurePolicyAction)
says which policy ended it, the child's Failed condition (reason DeadlineExceeded) says why
(correlate/linking.Index.child_end, job_ends.with_child_end). Sources: fixtures/objects/README.md.
"""

from __future__ import annotations

import copy
import json

import pytest

from gangscope.parsers.events import Skip, decode_object
from gangscope.pipeline.correlate.attempts import build_attempts
from gangscope.pipeline.correlate import job_ends
from gangscope.pipeline.correlate.linking import link_events
from gangscope.pipeline.correlate.signals import classify

from object_fixtures import OBJECTS, diagnoses_by_attempt

FAILED_JOBS = "jobset failed due to one or more job failures"
DEADLINE = "Job was active longer than specified deadline"


@pytest.fixture(scope="module")
def after() -> dict:
    return diagnoses_by_attempt()


EXPECTED = [
    ("team-o/olmo-js", "failed", "time_limit"),  # v0.5.0+: the named child Failed DeadlineExceeded (1.31+ form)
    ("team-o/falcon-js", "failed", "time_limit"),  # before v0.5.0: no name; its own failed child (ownerReferences)
    ("team-o/nemo-tj", "failed", "time_limit"),  # TrainJob Failed copies the JobSet's message naming the child
    ("team-o/t5-js", "failed", "time_limit"),  # under Kueue: Workload Finished=Failed copies it too
    ("team-o/bloom-js", "failed", "unknown"),  # the named child's BackoffLimitExceeded proves no cause
    ("team-o/yi-js", "failed", "unknown"),  # the named child is not in the input
]


@pytest.mark.parametrize("job,outcome,category", EXPECTED, ids=[e[0] for e in EXPECTED])
def test_jobset_failure_reads_its_childs_cause(after, job, outcome, category):
    d = after[(job, 1)]
    assert (d.outcome, d.category) == (outcome, category), d.summary


def test_no_job_of_its_own_for_the_children(after):
    assert not any("-workers-" in job or "-node-" in job for job, _ in after)


def _items(*names: str) -> list[dict]:
    items = json.loads((OBJECTS / "objects.json").read_text())["items"]
    return [copy.deepcopy(o) for o in items if any(o["metadata"]["name"].startswith(n) for n in names)]


def _records(objects: list[dict]) -> list:
    return [r for o in objects for r in decode_object(o) if not isinstance(r, Skip)]


def _end_of(recs: list, kind: str = "JobSet"):
    link_events(recs)
    sigs = [classify(r) for r in recs if r.object_kind == kind]
    ends = [s for s in sigs if s is not None and s.kind == "finished"]
    assert len(ends) == 1
    return ends[0]


@pytest.mark.parametrize("order", ["jobset_first", "child_first"])
def test_order_of_the_list_does_not_matter(order):
    objs = _items("olmo-js")
    if order == "child_first":
        objs.reverse()
    s = _end_of(_records(objs))
    assert (s.info["outcome"], s.info["category"]) == ("failed", "time_limit")
    child = s.rec.details["child_end"]
    assert child["job"] == "olmo-js-workers-1" and child["reason"] == "DeadlineExceeded" and child["named"]
    assert "messageWithFirstFailedJob" in s.info["end_source"]


def test_the_jobset_alone_says_unknown():
    s = _end_of(_records([o for o in _items("olmo-js") if o["kind"] == "JobSet"]))
    assert s.info["category"] == "unknown" and "child_end" not in s.rec.details


def test_failure_target_alone_is_not_what_the_jobset_read():
    """JobSet acts on the child's Failed condition (failure_policy.go findJobFailureCondition), not FailureTarget."""
    objs = _items("olmo-js")
    child = next(o for o in objs if o["metadata"]["name"] == "olmo-js-workers-1")
    child["status"]["conditions"] = child["status"]["conditions"][:1]
    assert _end_of(_records(objs)).info["category"] == "unknown"


def test_a_child_failure_after_the_jobset_failed_is_not_its_cause():
    objs = _items("falcon-js")
    child = next(o for o in objs if o["kind"] == "Job")
    child["status"]["conditions"][0]["lastTransitionTime"] = "2026-05-11T10:00:00Z"  # after the JobSet's 09:30:03
    assert _end_of(_records(objs)).info["category"] == "unknown"


def test_first_failed_child_without_a_name():
    """Before v0.5.0 the message names no child: the JobSet's own child that failed first (findFirstFailedJob)."""
    objs = _items("falcon-js")
    child = next(o for o in objs if o["kind"] == "Job")
    other = copy.deepcopy(child)
    other["metadata"]["name"], other["metadata"]["uid"] = "falcon-js-workers-1", "u-other"
    other["status"]["conditions"] = [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
                                      "message": "Job has reached the specified backoff limit",
                                      "lastTransitionTime": "2026-05-11T09:29:00Z"}]  # before the deadline one
    s = _end_of(_records([*objs, other]))
    assert s.info["category"] == "unknown" and s.rec.details["child_end"]["job"] == "falcon-js-workers-1"


def test_events_of_the_jobset_and_its_child():
    """The same from Events: the JobSet's FailedJobs event names the child, the job controller's DeadlineExceeded
    Warning on that Job (kubernetes job_controller.go recordJobFinished)."""
    def event(kind, name, reason, message, t, uid):
        return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": f"{name}.{uid}", "namespace": "ns", "uid": uid},
                "involvedObject": {"kind": kind, "name": name, "namespace": "ns"}, "reason": reason, "message": message,
                "type": "Warning", "firstTimestamp": t, "lastTimestamp": t, "count": 1}
    recs = _records([
        event("JobSet", "js", "FailedJobs", f"{FAILED_JOBS} (first failed job: js-w-0)", "2026-01-01T01:00:05Z", "e1"),
        event("Job", "js-w-0", "DeadlineExceeded", DEADLINE, "2026-01-01T01:00:01Z", "e2"),
    ])
    s = _end_of(recs)
    assert (s.info["outcome"], s.info["category"]) == ("failed", "time_limit")


def test_kueue_attempt_end_takes_the_childs_cause():
    recs = _records(_items("t5-js", "jobset-t5-js"))
    (a,) = build_attempts(recs)["team-o/t5-js"]
    assert a.details["end"]["outcome"] == "failed" and a.details["end"]["category"] == "time_limit"


@pytest.mark.parametrize("message,name", [
    (f"{FAILED_JOBS} (first failed job: js-workers-1)", "js-workers-1"),
    ("jobset failed due to reaching max number of restarts (first failed job: a-b-0)", "a-b-0"),
    ("applying FailJobSet failure policy action (first failed job: x-y-3)", "x-y-3"),
    (FAILED_JOBS, None), (None, None), ("", None), ("(first failed job: )", None),
])
def test_first_failed_job(message, name):
    assert job_ends.first_failed_job(message) == name


def test_with_child_end_keeps_what_the_own_words_prove():
    JobEnd, with_child_end = job_ends.JobEnd, job_ends.with_child_end
    end = JobEnd("failed", "time_limit", "s")
    assert with_child_end(end, {"category": "unknown"}) is end
    assert with_child_end(JobEnd("succeeded", None, "s"), {"category": "time_limit"}).category is None
    assert with_child_end(JobEnd("failed", "unknown", "s"), None).category == "unknown"
    assert with_child_end(JobEnd("failed", "unknown", "s"), {"category": 3}).category == "unknown"
    assert with_child_end(None, {"category": "time_limit"}) is None
