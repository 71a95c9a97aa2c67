"""Gang correlation (pipeline/correlate: linking, attempts, the timeline) and the scheduler's verdict
(pipeline/diagnose/gang_verdict.py), on the fixtures/gang scenarios."""

from __future__ import annotations

import copy
import json
import random
import re
from pathlib import Path

import jinja2
import pytest

from gangscope.parsers.events import count_skips, decode_event_stream
from gangscope.parsers.records import DiagnosisRecord, ErrorRecord, EventRecord, StepRecord, TraceRecord, stable_id
from gangscope.pipeline.correlate.attempts import build_attempts
from gangscope.pipeline.correlate.gang_view import accelerator_time_lost
from gangscope.pipeline.correlate.model import Attempt, GangConfig
from gangscope.pipeline.correlate.requeues import backoff_s
from gangscope.pipeline.correlate.stamping import assign_attempts, attempt_lookup
from gangscope.pipeline.correlate.timeline import timeline
from gangscope.pipeline.curate.naming import job_of_pod, job_of_workload
from gangscope.pipeline.diagnose.gang_verdict import diagnosis_record, scheduler_verdict

ROOT = Path(__file__).resolve().parent.parent
GANG = ROOT / "fixtures" / "gang"
SCENARIOS = sorted(p.name for p in GANG.iterdir() if (p / "manifest.json").exists() and p.name != "malformed")
INPUTS = ("events.ndjson", "events.json", "workloads.json", "pods.json")


def manifest(name: str) -> dict:
    return json.loads((GANG / name / "manifest.json").read_text())


def events_of(name: str) -> list[EventRecord]:
    records = []
    for f in INPUTS:
        if (GANG / name / f).exists():
            recs, _ = count_skips(decode_event_stream((GANG / name / f).read_text().splitlines(True)))
            records += recs
    return records


def config_of(name: str) -> GangConfig:
    return GangConfig(backoff_limit=manifest(name).get("config", {}).get("backoffLimitCount"))


def attempts_of(name: str) -> dict[str, list[Attempt]]:
    return build_attempts(events_of(name), config_of(name))


def shape(attempts: dict[str, list[Attempt]]) -> dict:
    return {job: [(a.number, a.start, a.end, a.end_reason) for a in atts] for job, atts in attempts.items()}


# ----------------------------------------------------------------------------- linking


@pytest.mark.parametrize("pod, labels, job", [
    ("llama-ft-worker-3", {"training.kubeflow.org/job-name": "llama-ft"}, "team-a/llama-ft"),
    ("gpt-neox-node-0-1-gtdtn", {"jobset.sigs.k8s.io/jobset-name": "gpt-neox",
                                 "batch.kubernetes.io/job-name": "gpt-neox-node-0"}, "team-a/gpt-neox"),
    ("bert-pretrain-3-fj9m9", {"batch.kubernetes.io/job-name": "bert-pretrain"}, "team-a/bert-pretrain"),
    ("x-7c9df", {"job-name": "legacy"}, "team-a/legacy"),
    ("grp-0", {"kueue.x-k8s.io/pod-group-name": "grp"}, "team-a/grp"),
    ("llama-ft-worker-3", {"training_kubeflow_org/job-name": "llama-ft"}, "team-a/llama-ft"),  # de-dotted by an exporter
])
def test_job_of_pod_reads_the_job_labels(pod, labels, job):
    assert job_of_pod("team-a", pod, labels) == job


def test_job_of_pod_follows_kueues_workload_annotation():
    assert job_of_pod("team-a", "p", {}, {"kueue.x-k8s.io/workload": "pytorchjob-llama-ft-7753e"}) == "team-a/llama-ft"


@pytest.mark.parametrize("pod, job", [
    ("llama-ft-master-0", "llama-ft"),
    ("llama-ft-worker-12", "llama-ft"),
    ("gpt-neox-node-0-1-gtdtn", "gpt-neox"),
    ("trainer-x-dataset-initializer-0-0-b2c4d", "trainer-x"),
    ("bert-pretrain-3-fj9m9", "bert-pretrain"),
    ("resnet-ddp-5bbf4", "resnet-ddp"),
    ("mpi-run-launcher-zx8q2", "mpi-run"),
    ("serve-7d9f5b6c8d-x2v4k", "serve"),
    ("standalone", "standalone"),
    ("data-prep", "data-prep"),  # no random suffix: vowels are never generated
])
def test_job_of_pod_falls_back_on_the_pod_name(pod, job):
    assert job_of_pod("ns", pod) == f"ns/{job}"


def test_job_of_workload_prefers_the_owner_reference():
    assert job_of_workload("ns", "pytorchjob-whatever-1a2b3", {"kind": "PyTorchJob", "name": "real"}) == "ns/real"


@pytest.mark.parametrize("workload, job", [
    ("pytorchjob-llama-ft-7753e", "llama-ft"),
    ("job-bert-pretrain-146cc", "bert-pretrain"),
    ("jobset-gpt-neox-0f3e1", "gpt-neox"),
    ("prebuilt-by-hand", "prebuilt-by-hand"),
])
def test_job_of_workload_reads_the_name_convention(workload, job):
    assert job_of_workload("ns", workload) == f"ns/{job}"


def test_a_truncated_workload_name_is_resolved_to_the_known_job():
    long = "a-very-long-training-job-name-that-kueue-had-to-cut-short-for-the-63-char-limit"
    wl = f"job-{long[:51]}-1a2b3"
    events = [
        EventRecord(id="1", time="2026-01-01T00:00:00Z", namespace="ns", reason="Started", object_kind="Job",
                    object_name=long, message="Admitted by clusterQueue cq"),
        EventRecord(id="2", time="2026-01-01T00:10:00Z", namespace="ns", reason="EvictedDueToPodsReadyTimeout",
                    object_kind="Workload", object_name=wl, message=f"Exceeded the PodsReady timeout ns/{wl}"),
    ]
    attempts = build_attempts(events)
    assert list(attempts) == [f"ns/{long}"] and attempts[f"ns/{long}"][0].end_reason == "PodsReadyTimeout"


def test_event_records_get_their_job():
    events = events_of("f_deactivated")
    build_attempts(events)
    pods = {e.job for e in events if e.object_kind == "Pod"}
    assert pods == {"team-f/resnet-ddp"}


# ----------------------------------------------------------------------------- the scenarios


@pytest.mark.parametrize("name", SCENARIOS + ["malformed"])
def test_scenario_has_the_expected_attempts(name):
    attempts = attempts_of(name) if name != "malformed" else build_attempts(
        [r for r in decode_event_stream((GANG / name / "events.ndjson").read_text().splitlines()) if isinstance(r, EventRecord)])
    for job, want in manifest(name)["jobs"].items():
        assert len(attempts[job]) == want["attempts"], job
        assert [a.number for a in attempts[job]] == list(range(1, want["attempts"] + 1))


def verdict_cases():
    for name in SCENARIOS:
        for job, want in manifest(name)["jobs"].items():
            for v in want["verdicts"]:
                yield pytest.param(name, job, v, id=f"{name}-{job.split('/')[1]}-{v['attempt']}")


@pytest.mark.parametrize("name, job, want", list(verdict_cases()))
def test_scenario_attempt_is_diagnosed_with_category_cause_and_pod(name, job, want):
    attempts = attempts_of(name)[job]
    a = next(x for x in attempts if x.number == want["attempt"])
    logs = [r for r in replay_records(name) if r.kind in ("trace", "error")] if (GANG / name / "pods").exists() else []
    v = scheduler_verdict(a, logs, config_of(name))
    if want["category"] is None:
        assert v is None and a.end_reason == want["end_reason"]
        return
    assert v["category"] == want["category"]
    if want.get("cause"):
        assert v["details"]["cause"]["kind"] == want["cause"]
    if "pod" in want and want["pod"]:
        assert v["first_failure"]["pod"] == want["pod"]
    if want.get("keyword"):
        assert want["keyword"].lower() in v["summary"].lower()
    if want.get("exception_type"):
        assert v["exception_type"] == want["exception_type"]
    if want.get("phase"):
        assert v["details"]["phase"] == want["phase"]
    if want.get("end_reason"):
        assert a.end_reason == want["end_reason"]
    assert set(v) >= {"job", "attempt", "outcome", "category", "exception_type", "first_failure", "summary",
                      "evidence", "symptoms", "events", "confidence", "details"}
    assert v["events"] and 0.0 < v["confidence"] <= 1.0


def test_image_pull_verdict_quotes_the_registry_error():
    v = scheduler_verdict(attempts_of("a_image_pull_backoff")["team-a/llama-ft"][0])
    assert "registry.example.com/ml/llama-train:2.4.1-cu214" in v["summary"]
    assert v["first_failure"]["node"] == "gpu-a2"


def test_folded_admission_events_still_number_attempts_in_order():
    # Kueue v0.9 folds identical "Admitted" events into one object (count 1, 2, 3).
    atts = attempts_of("a_image_pull_backoff")["team-a/llama-ft"]
    assert [a.end_reason for a in atts] == ["PodsReadyTimeout", "PodsReadyTimeout", "Finished"]


def test_unschedulable_verdict_names_the_missing_resource():
    v = scheduler_verdict(attempts_of("b_unschedulable_gpu")["team-b/bert-pretrain"][0])
    assert "(Insufficient nvidia.com/gpu)" in v["summary"]
    assert v["details"]["gang"]["pods_expected"] == 4 and len(v["details"]["gang"]["ready"]) == 3


def test_next_retry_follows_kueues_backoff():
    v = scheduler_verdict(attempts_of("b_unschedulable_gpu")["team-b/bert-pretrain"][0])
    assert v["details"]["requeue"]["next_retry_s"] == 60 and "next retry in about 60 s" in v["summary"].lower()


def replay_records(name: str) -> list:
    """The scenario's pod logs curated by the real pipeline (traces and errors with their attempts)."""
    from gangscope.pipeline.run import replay

    out: list = []
    events = [str(GANG / name / f) for f in INPUTS if (GANG / name / f).exists()]
    replay.run(replay.ReplayOptions(paths=[str(GANG / name / "pods")], events=events), out.extend)
    return out


def test_crash_before_ready_verdict_says_what_the_pods_own_log_said():
    records = replay_records("c_rendezvous_timeout")
    a = attempts_of("c_rendezvous_timeout")["team-c/gpt-neox"][0]
    v = scheduler_verdict(a, [r for r in records if r.kind in ("trace", "error")])
    assert v["exception_type"] == "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError"
    assert "its log: torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError" in v["summary"]
    assert v["first_failure"]["pod"] == "gpt-neox-node-0-0-bz7m5"
    assert any(e["kind"] == "trace" for e in v["evidence"])


def test_crash_before_ready_uses_a_trace_of_that_pod_in_that_attempt_only():
    a = attempts_of("c_rendezvous_timeout")["team-c/gpt-neox"][0]
    other_pod = TraceRecord(id="t1", pod="gpt-neox-node-0-1-gtdtn", time="2026-03-04T07:46:00Z",
                            exception_type="ImportError", message="no module named x")
    too_late = TraceRecord(id="t2", pod="gpt-neox-node-0-0-bz7m5", time="2026-03-04T09:00:00Z",
                           exception_type="KeyError", message="'x'")
    mine = ErrorRecord(id="e1", pod="gpt-neox-node-0-0-bz7m5", time="2026-03-04T07:47:04Z", category="rendezvous_error",
                       message="RendezvousTimeoutError")
    v = scheduler_verdict(a, [other_pod, too_late, mine])
    assert v["details"]["logs"]["record_id"] == "e1"


def test_crash_before_ready_reports_exit_code_from_the_pod_object():
    v = scheduler_verdict(attempts_of("c_rendezvous_timeout")["team-c/gpt-neox"][0])
    assert v["details"]["cause"]["exit_code"] == 1 and "(exit code 1)" in v["summary"]


def test_preemption_verdict_names_the_preemptor_and_why():
    v = scheduler_verdict(attempts_of("d_preemption")["team-d/mistral-sft"][0])
    assert v["details"]["preempted_by"]["job"] == "team-d/llama-eval"
    assert "prioritization in the ClusterQueue" in v["summary"]


def test_v09_preemption_event_alone_ends_the_attempt():
    # Kueue v0.9 records only "Preempted" with "Preempted to accommodate a workload (UID: %s) due to %s".
    base = dict(namespace="ns", object_kind="Workload", object_name="pytorchjob-x-1a2b3")
    events = [
        EventRecord(id="a", time="2026-01-01T00:00:00Z", reason="Admitted", message="Admitted by ClusterQueue cq, wait time since reservation was 0s", **base),
        EventRecord(id="p", time="2026-01-01T01:00:00Z", reason="Preempted",
                    message="Preempted to accommodate a workload (UID: 5e1c-u) due to prioritization in the ClusterQueue", **base),
    ]
    [a] = build_attempts(events)["ns/x"]
    v = scheduler_verdict(a)
    assert a.end_reason == "Preempted" and v["category"] == "preempted" and v["details"]["preempted_by"]["uid"] == "5e1c-u"


def test_node_failure_verdict_names_the_node_and_recovery_phase():
    v = scheduler_verdict(attempts_of("e_node_not_ready")["team-e/whisper-ft"][0])
    assert v["details"]["nodes"] == ["gpu-e3"] and v["details"]["phase"] == "WaitForRecovery"
    assert "WaitForRecovery" in v["summary"] and "gpu-e3" in v["summary"]


def test_tas_node_failures_eviction_names_the_unhealthy_nodes():
    base = dict(namespace="ns", object_kind="Workload", object_name="job-y-1a2b3")
    events = [
        EventRecord(id="a", time="2026-01-01T00:00:00Z", reason="Admitted", message="", **base),
        EventRecord(id="e", time="2026-01-01T00:30:00Z", reason="EvictedDueToNodeFailures",
                    message="Workload was evicted as there was no replacement for unhealthy node(s): n7,n9", **base),
    ]
    v = scheduler_verdict(build_attempts(events)["ns/y"][0])
    assert v["category"] == "node_failure" and v["details"]["nodes"] == ["n7", "n9"]


def test_wait_for_start_and_wait_for_recovery_are_told_apart():
    start = scheduler_verdict(attempts_of("b_unschedulable_gpu")["team-b/bert-pretrain"][0])
    recovery = scheduler_verdict(attempts_of("e_node_not_ready")["team-e/whisper-ft"][0])
    assert (start["details"]["phase"], recovery["details"]["phase"]) == ("WaitForStart", "WaitForRecovery")


def test_requeue_loop_is_summarized_until_deactivation():
    atts = attempts_of("f_deactivated")["team-f/resnet-ddp"]
    v = scheduler_verdict(atts[-1], [], config_of("f_deactivated"))
    assert atts[-1].end_reason == "Deactivated" and atts[-1].details["end"]["cause"] == "RequeuingLimitExceeded"
    assert "Evicted 6 times for the same cause; deactivated after 5 requeues" in v["summary"]


def test_readmission_delays_follow_the_exponential_backoff():
    atts = attempts_of("f_deactivated")["team-f/resnet-ddp"]
    waits = [round(a.details["requeue"]["readmitted_after_s"]) for a in atts[:-1]]
    assert waits == [round(backoff_s(n, GangConfig()) + 1.1) for n in range(1, 6)]


def test_v09_deactivation_reason_is_read_as_deactivated_with_its_cause():
    base = dict(namespace="ns", object_kind="Workload", object_name="job-z-1a2b3")
    events = [
        EventRecord(id="a", time="2026-01-01T00:00:00Z", reason="Admitted", message="", **base),
        EventRecord(id="d", time="2026-01-01T00:10:00Z", reason="EvictedDueToInactiveWorkloadRequeuingLimitExceeded",
                    message="The workload is deactivated due to exceeding the maximum number of re-queuing retries", **base),
    ]
    [a] = build_attempts(events)["ns/z"]
    assert (a.end_reason, a.details["end"]["cause"]) == ("Deactivated", "RequeuingLimitExceeded")


def test_block_admission_names_the_job_held_behind():
    atts = attempts_of("g_block_admission")
    q = atts["team-g/vit-small"][0].details["queued"]
    assert q["blocked_by"] == ["team-g/vit-huge"] and q["waited_s"] == pytest.approx(542.5, abs=1)


def test_a_job_still_waiting_behind_another_gets_a_pending_verdict():
    cut = "2026-03-08T16:05:00Z"
    events = [e for e in events_of("g_block_admission") if e.time and e.time < cut]
    [a] = build_attempts(events)["team-g/vit-small"]
    v = scheduler_verdict(a)
    assert a.start is None and v["outcome"] == "running" and "team-g/vit-huge" in v["summary"]
    assert "blockAdmission" in v["summary"]


def test_slow_gang_is_called_slow_not_failed():
    v = scheduler_verdict(attempts_of("g_block_admission")["team-g/vit-huge"][0])
    assert v["details"]["cause"]["kind"] == "slow" and v["confidence"] < 0.9


# ----------------------------------------------------------------------------- robustness


def malformed_records() -> list[EventRecord]:
    text = (GANG / "malformed" / "events.ndjson").read_text().splitlines()
    return [r for r in decode_event_stream(text) if isinstance(r, EventRecord)]


def test_out_of_order_and_duplicated_events_give_the_same_attempts():
    records = events_of("a_image_pull_backoff")
    shuffled = copy.deepcopy(records) + copy.deepcopy(records[:50])
    random.Random(7).shuffle(shuffled)
    assert shape(build_attempts(shuffled)) == shape(build_attempts(records))


def test_replaying_the_same_events_twice_changes_nothing():
    once = build_attempts(events_of("f_deactivated"))
    twice = build_attempts(events_of("f_deactivated") + events_of("f_deactivated"))
    assert shape(once) == shape(twice)
    assert [a.event_ids for a in once["team-f/resnet-ddp"]] == [a.event_ids for a in twice["team-f/resnet-ddp"]]


def test_malformed_events_never_make_phantom_attempts():
    atts = build_attempts(malformed_records())
    assert list(atts) == ["team-m/opt-tune"]
    assert [a.end_reason for a in atts["team-m/opt-tune"]] == ["PodsReadyTimeout", "Finished"]


def test_one_transition_reported_three_ways_ends_one_attempt():
    # Evicted condition, EvictedDueTo event and the Job's Stopped event, within a second of each other.
    wl = dict(namespace="ns", object_kind="Workload", object_name="job-q-1a2b3")
    msg = "Exceeded the PodsReady timeout ns/job-q-1a2b3"
    events = [
        EventRecord(id="a", time="2026-01-01T00:00:00Z", reason="Admitted", message="", **wl),
        EventRecord(id="c", time="2026-01-01T00:10:00Z", reason="Evicted", type="Condition", message=msg,
                    details={"condition": {"type": "Evicted", "status": "True", "reason": "PodsReadyTimeout"}}, **wl),
        EventRecord(id="e", time="2026-01-01T00:10:00.4Z", reason="EvictedDueToPodsReadyTimeout", message=msg, **wl),
        EventRecord(id="s", time="2026-01-01T00:10:01Z", reason="Stopped", message=msg, namespace="ns",
                    object_kind="Job", object_name="q"),
    ]
    [a] = build_attempts(events)["ns/q"]
    assert a.end_reason == "PodsReadyTimeout" and set(a.details["end"]["event_ids"]) == {"c", "e", "s"}


def test_an_eviction_reset_condition_neither_opens_nor_closes_an_attempt():
    wl = dict(namespace="ns", object_kind="Workload", object_name="job-r-1a2b3")
    events = [
        EventRecord(id="a", time="2026-01-01T00:00:00Z", reason="Admitted", message="", **wl),
        EventRecord(id="c", time="2026-01-01T00:00:00Z", reason="Evicted", type="Condition", message="Previously: x",
                    details={"condition": {"type": "Evicted", "status": "False", "reason": "QuotaReserved"}}, **wl),
    ]
    [a] = build_attempts(events)["ns/r"]
    assert a.end is None and a.end_reason is None


def test_an_eviction_whose_admission_expired_is_one_attempt_with_unknown_start():
    [a] = build_attempts([EventRecord(id="e", time="2026-01-01T00:10:00Z", namespace="ns", object_kind="Workload",
                                      object_name="job-s-1a2b3", reason="EvictedDueToPodsReadyTimeout",
                                      message="Exceeded the PodsReady timeout ns/job-s-1a2b3")])["ns/s"]
    assert (a.number, a.start, a.end_reason) == (1, None, "PodsReadyTimeout")


def test_pod_events_alone_make_no_attempt():
    pod = dict(namespace="ns", object_kind="Pod", object_name="t-worker-0")
    events = [EventRecord(id="p", time="2026-01-01T00:00:00Z", reason="Pulling", message='Pulling image "x"', **pod)]
    assert build_attempts(events) == {}


# ----------------------------------------------------------------------------- attempts on records


def test_log_records_get_the_attempt_their_time_falls_in():
    atts = attempts_of("a_image_pull_backoff")
    recs = [StepRecord(job="team-a/llama-ft", time=t) for t in (
        "2026-03-02T08:59:00Z", "2026-03-02T09:05:00Z", "2026-03-02T09:10:30Z", "2026-03-02T09:15:00Z",
        "2026-03-02T09:40:00.123456789Z")]
    assign_attempts(recs, atts)
    assert [r.attempt for r in recs] == [1, 1, 1, 2, 3]


def test_records_of_jobs_without_events_stay_attempt_one():
    lookup = attempt_lookup(attempts_of("a_image_pull_backoff"))
    assert lookup("other/job", "2026-03-02T09:40:00Z") == 1 and lookup(None, None) == 1


def test_replay_stamps_log_records_with_their_attempt():
    records = replay_records("a_image_pull_backoff")
    steps = [r for r in records if r.kind == "step"]
    assert steps and {r.attempt for r in steps} == {3}


# ----------------------------------------------------------------------------- accelerator time


def test_accelerator_time_uses_pod_requests():
    a = attempts_of("c_rendezvous_timeout")["team-c/gpt-neox"][0]
    acc = a.details["accelerators"]
    assert (acc["pods"], acc["accelerators"], acc["source"]) == (2, 16.0, "pods")
    assert acc["accelerator_s_lost"] == pytest.approx(16 * 600, rel=1e-3)


def test_accelerator_time_uses_workload_pod_sets_when_pods_are_unknown():
    acc = attempts_of("f_deactivated")["team-f/resnet-ddp"][0].details["accelerators"]
    assert (acc["pods"], acc["accelerators"], acc["source"]) == (2, 16.0, "workload")


def test_accelerator_time_falls_back_to_the_configured_default():
    atts = build_attempts(events_of("a_image_pull_backoff"), GangConfig(default_accelerators_per_pod=8))
    acc = atts["team-a/llama-ft"][0].details["accelerators"]
    assert (acc["source"], acc["accelerators"]) == ("default", 16.0)


def test_accelerator_time_is_summed_per_job_over_lost_attempts_only():
    atts = attempts_of("f_deactivated")["team-f/resnet-ddp"]
    assert accelerator_time_lost(atts) == pytest.approx(6 * 16 * 600, rel=1e-3)
    finished = attempts_of("a_image_pull_backoff")["team-a/llama-ft"][-1]
    assert finished.details["accelerators"]["accelerator_s_lost"] == 0.0
    v = scheduler_verdict(atts[0])
    assert v["details"]["job_accelerator_s_lost"] == pytest.approx(6 * 16 * 600, rel=1e-3)


def test_backoff_doubles_and_is_capped():
    assert [backoff_s(n, GangConfig()) for n in (1, 2, 3, 4, 7, 8)] == [60, 120, 240, 480, 3600, 3600]


# ----------------------------------------------------------------------------- diagnosis record and timeline


def test_verdict_becomes_a_diagnosis_record_with_the_shared_id():
    v = scheduler_verdict(attempts_of("b_unschedulable_gpu")["team-b/bert-pretrain"][0])
    d = diagnosis_record(v)
    assert isinstance(d, DiagnosisRecord) and d.id == stable_id("diagnosis", "team-b/bert-pretrain", 1)
    assert (d.outcome, d.category, d.pod) == ("evicted", "pods_ready_timeout", "bert-pretrain-3-fj9m9")


def test_timeline_places_attempts_events_and_failures_on_one_axis():
    events = events_of("a_image_pull_backoff")
    atts = build_attempts(events)
    fail = ErrorRecord(id="f", job="team-a/llama-ft", time="2026-03-02T09:30:00Z", category="python_exception",
                       message="boom", pod="llama-ft-master-0")
    tl = timeline("team-a/llama-ft", atts["team-a/llama-ft"], events, [fail])
    xs = [(a["x0"], a["x1"]) for a in tl["attempts"]]
    assert xs == sorted(xs) and all(0.0 <= x <= 1.0 for pair in xs for x in pair)
    assert {m["kind"] for m in tl["marks"]} >= {"admitted", "evicted", "finished"}
    assert any(f["from"] == "logs" and f["label"] == "boom" for f in tl["failures"])
    assert tl["accelerator_s_lost"] == accelerator_time_lost(atts["team-a/llama-ft"])


def test_timeline_can_be_built_from_the_events_alone():
    events = [e for e in events_of("d_preemption")]
    build_attempts(events)
    tl = timeline("team-d/mistral-sft", [e for e in events if e.job == "team-d/mistral-sft"])
    assert [a["label"] for a in tl["attempts"]] == ["Preempted", "Finished"]


def render(tl: dict) -> str:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(ROOT / "templates")), autoescape=True)
    return env.get_template("timeline.html.j2").render(timeline=tl)


def test_timeline_template_escapes_text_from_events():
    events = events_of("b_unschedulable_gpu")
    evil = next(e for e in events if e.reason == "EvictedDueToPodsReadyTimeout")
    evil.message = "<script>alert(1)</script>"
    tl = timeline("team-b/bert-pretrain", build_attempts(events)["team-b/bert-pretrain"], events)
    html = render(tl)
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<svg" in html and "http" not in html.replace("http://www.w3.org/2000/svg", "")


def test_timeline_template_renders_nothing_without_a_timeline():
    assert render(None).strip() == "" and render({"attempts": [], "marks": []}).strip() == ""


def test_replay_diagnosis_of_an_evicted_attempt_is_the_gang_verdict():
    from gangscope.pipeline.run import replay

    out: list = []
    events = [str(GANG / "a_image_pull_backoff" / "events.ndjson")]
    res = replay.run(replay.ReplayOptions(paths=[str(GANG / "a_image_pull_backoff" / "pods")], events=events), out.extend)
    by_attempt = {d.attempt: d for d in res.diagnoses if d.job == "team-a/llama-ft"}
    assert by_attempt[1].category == "pods_ready_timeout" and by_attempt[1].pod == "llama-ft-worker-0"
    assert 'could not pull image "registry.example.com/ml/llama-train:2.4.1-cu214": not found' in by_attempt[1].summary
    assert by_attempt[3].outcome == "succeeded"


def test_times_with_an_offset_find_the_same_attempt():
    lookup = attempt_lookup(attempts_of("a_image_pull_backoff"))
    assert lookup("team-a/llama-ft", "2026-03-02T10:15:00+01:00") == lookup("team-a/llama-ft", "2026-03-02T09:15:00Z") == 2


def test_the_report_shows_the_gang_timeline():
    from gangscope.pipeline.run import replay
    from gangscope.pipeline.report import render as report

    out: list = []
    events = [str(GANG / "a_image_pull_backoff" / "events.ndjson")]
    res = replay.run(replay.ReplayOptions(paths=[str(GANG / "a_image_pull_backoff" / "pods")], events=events), out.extend)
    html = report.render_report(out, res.diagnoses, timelines=res.timelines)
    assert "Gang timeline" in html and len(re.findall(r"<title>attempt \d+: ", html)) == 3


def test_scheduler_reasons_are_kept_as_a_histogram():
    v = scheduler_verdict(attempts_of("b_unschedulable_gpu")["team-b/bert-pretrain"][0])
    assert v["details"]["cause"]["scheduler_reasons"] == {
        "node(s) had untolerated taint {nvidia.com/gpu.health: degraded}": 1, "Insufficient nvidia.com/gpu": 3}


def test_a_crashing_init_container_holds_the_gang_and_its_start_does_not_count():
    pod = dict(namespace="ns", object_kind="Pod", object_name="j-worker-0", pod="j-worker-0", container="wait-for-master")
    init = {"involvedObject": {"kind": "Pod", "name": "j-worker-0", "fieldPath": "spec.initContainers{wait-for-master}"},
            "from": "event"}
    wl = dict(namespace="ns", object_kind="Workload", object_name="pytorchjob-j-1a2b3")
    events = [
        EventRecord(id="a", time="2026-01-01T00:00:00Z", reason="Admitted", message="", **wl),
        EventRecord(id="s", time="2026-01-01T00:00:05Z", reason="Started", message="Started container wait-for-master",
                    details=init, **pod),
        EventRecord(id="b", time="2026-01-01T00:01:05Z", reason="BackOff", type="Warning",
                    message="Back-off restarting failed container wait-for-master in pod j-worker-0_ns(u)", details=init, **pod),
        EventRecord(id="e", time="2026-01-01T00:10:00Z", reason="EvictedDueToPodsReadyTimeout",
                    message="Exceeded the PodsReady timeout ns/pytorchjob-j-1a2b3", **wl),
    ]
    v = scheduler_verdict(build_attempts(events)["ns/j"][0])
    assert v["details"]["cause"]["kind"] == "crash_before_ready"
    assert "init container wait-for-master of pod j-worker-0 crashed before it was ready" in v["summary"]


def test_a_lost_nodes_own_event_is_linked_to_the_job_it_took_down():
    events = events_of("e_node_not_ready")
    atts = build_attempts(events)
    node_event = next(e for e in events if e.object_kind == "Node")
    assert node_event.job == "team-e/whisper-ft" and node_event.id in atts["team-e/whisper-ft"][0].event_ids


def test_replay_reads_an_events_list_larger_than_one_read_block(tmp_path):
    from gangscope.pipeline.run import replay

    doc = json.loads((GANG / "b_unschedulable_gpu" / "events.json").read_text())
    pad = [copy.deepcopy(doc["items"][0]) for _ in range(4000)]  # >1 MiB of pretty JSON
    for i, item in enumerate(pad):
        item["metadata"]["uid"] = f"pad-{i}"
    doc["items"] = pad + doc["items"]
    big = tmp_path / "events.json"
    big.write_text(json.dumps(doc, indent=2))
    assert big.stat().st_size > 1 << 20
    res = replay.run(replay.ReplayOptions(paths=[str(GANG / "c_rendezvous_timeout" / "pods")], events=[str(big)]),
                     lambda batch: None)
    assert res.skipped_events == 0 and len(res.attempts["team-b/bert-pretrain"]) == 1


def test_the_preemptor_of_a_workload_is_not_diagnosed_as_preempted():
    import json
    import subprocess
    import sys
    from pathlib import Path

    scenario = Path(__file__).parent.parent / "fixtures" / "gang" / "d_preemption"
    proc = subprocess.run(
        [sys.executable, "-m", "gangscope", "diagnose", str(scenario / "pods"), "--events", str(scenario / "events.ndjson"), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    verdicts = {(d["job"], d["attempt"]): d["category"] for d in json.loads(proc.stdout)}
    assert verdicts[("team-d/mistral-sft", 1)] == "preempted"
    assert verdicts[("team-d/llama-eval", 1)] != "preempted"
