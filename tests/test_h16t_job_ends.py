"""[issue 16] The end of an attempt told by the job's controllers, not only by log lines (SPEC rev. 2 `success`:
"... Kueue `Finished` / Job `Complete`, and no failure"): correlate/job_ends.py, diagnose/endings.job_end.

Fixtures: fixtures/job_ends (built by its build.py from the controllers' format strings, sources in
its README.md) and the Workload objects of fixtures/gang/d_preemption and e_node_not_ready.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gangscope.pipeline.correlate.job_ends import job_event_end, workload_finish
from gangscope.pipeline.run import replay

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "gang"
JOB_ENDS = FIX.parent / "job_ends"


def diagnoses(paths: list[Path], events: list[Path]) -> dict[tuple[str, int], object]:
    result = replay.run(replay.ReplayOptions(paths=[str(p) for p in paths], events=[str(e) for e in events]),
                        lambda batch: None)
    assert result.failures.summary() == []
    return {(d.job, d.attempt): d for d in result.diagnoses}


@pytest.fixture(scope="module")
def job_ends() -> dict:
    return diagnoses([JOB_ENDS / "pods"], [JOB_ENDS / "events.ndjson", JOB_ENDS / "workloads.json"])


# (job, outcome, category): what each end now gives (at 2316852: running/hang, nccl_error, unknown).
EXPECTED = [
    ("team-j/llama-sft", "succeeded", "success"),  # Kueue Finished=Succeeded + PyTorchJobSucceeded; log cut at 12/40
    ("team-j/bert-legacy", "succeeded", "success"),  # Kueue v0.4-v0.6 JobFinished "Job finished successfully"; no log
    ("team-j/vit-deadline", "failed", "time_limit"),  # Finished=Failed "Job was active longer than specified deadline"
    ("team-j/resnet-backoff", "failed", "unknown"),  # Job BackoffLimitExceeded, no cause in the log
    ("team-j/gpt-restart", "succeeded", "success"),  # a rank failed, torchrun restarted, training reached 30/30
    ("team-j/t5-fail", "failed", "unknown"),  # PyTorchJobFailed, no cause in the log
    ("team-j/mixtral-js", "succeeded", "success"),  # JobSet AllJobsCompleted
    ("team-j/falcon-js", "failed", "unknown"),  # JobSet FailedJobs
]


@pytest.mark.parametrize("job,outcome,category", EXPECTED, ids=[e[0] for e in EXPECTED])
def test_job_end_fixture(job_ends, job, outcome, category):
    d = job_ends[(job, 1)]
    assert (d.outcome, d.category) == (outcome, category), d.summary


def test_fixture_is_rebuilt_identically(tmp_path):
    """build.py writes exactly the committed files (the strings stay where their sources are cited)."""
    copy = tmp_path / "job_ends"
    shutil.copytree(JOB_ENDS, copy, ignore=shutil.ignore_patterns("events.ndjson", "workloads.json", "pods"))
    import runpy

    runpy.run_path(str(copy / "build.py"), run_name="__main__")
    for f in sorted(p.relative_to(JOB_ENDS) for p in JOB_ENDS.rglob("*") if p.is_file() and p.name != "build.py"
                    and "__pycache__" not in p.parts):
        assert (copy / f).read_text() == (JOB_ENDS / f).read_text(), f


def test_evidence_is_the_controllers_word(job_ends):
    d = job_ends[("team-j/vit-deadline", 1)]
    assert any("Job was active longer than specified deadline" in e["text"] for e in d.evidence)
    d = job_ends[("team-j/llama-sft", 1)]
    assert "successfully completed" in d.summary


def test_recovered_restart_lists_the_failure_as_symptom(job_ends):
    d = job_ends[("team-j/gpt-restart", 1)]
    assert d.symptoms and d.symptoms[0]["category"] == "nccl_error"
    assert "recovering" in d.summary and "step 30" in d.summary


def test_failure_with_no_progress_after_it_still_wins(tmp_path):
    """A Succeeded job whose log shows no step after its failure: the failure in the logs stands."""
    src = JOB_ENDS / "pods" / next(p.name for p in (JOB_ENDS / "pods").iterdir() if "gpt-restart" in p.name)
    dst = tmp_path / "pods" / src.name / "pytorch"
    dst.mkdir(parents=True)
    lines = (src / "pytorch" / "0.log").read_text().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if "Worker group FAILED" in line)
    (dst / "0.log").write_text("".join(lines[: cut + 1]))
    events = tmp_path / "events.ndjson"
    events.write_text("".join(line for line in (JOB_ENDS / "events.ndjson").read_text().splitlines(keepends=True)
                              if '"name":"gpt-restart"' in line))
    d = diagnoses([tmp_path / "pods"], [events])[("team-j/gpt-restart", 1)]
    assert (d.outcome, d.category) == ("failed", "nccl_error")


@pytest.mark.parametrize("scenario,job,attempt", [
    ("d_preemption", "team-d/llama-eval", 1), ("d_preemption", "team-d/mistral-sft", 2),
    ("e_node_not_ready", "team-e/whisper-ft", 2),
])
def test_kueue_finished_succeeded_without_logs_is_success(scenario, job, attempt):
    """The Workload's Finished=True reason Succeeded (kueue v0.7+) with no end line in the logs (none kept)."""
    folder = FIX / scenario
    events = sorted(folder.glob("events.*")) + [folder / "workloads.json"]
    d = diagnoses([folder / "pods"], events)[(job, attempt)]
    assert (d.outcome, d.category) == ("succeeded", "success"), d.summary


def test_finishedworkload_event_alone_claims_nothing(tmp_path):
    """Kueue's `FinishedWorkload` event says the same for a success and a failure: alone it proves no end."""
    events = tmp_path / "events.ndjson"
    kept = [line for line in (JOB_ENDS / "events.ndjson").read_text().splitlines(keepends=True)
            if "llama-sft" in line and '"PyTorchJobSucceeded"' not in line]
    assert any('"reason":"FinishedWorkload"' in line for line in kept)
    events.write_text("".join(kept))
    d = diagnoses([JOB_ENDS / "pods"], [events])[("team-j/llama-sft", 1)]
    assert d.category != "success" and d.outcome != "succeeded"


@pytest.mark.parametrize("reason,message,expected", [
    ("Succeeded", "PyTorchJob team-x/a successfully completed.", ("succeeded", None)),
    ("Succeeded", "", ("succeeded", None)),  # batch Job Complete before k8s 1.31 has no message
    ("Failed", "Job has reached the specified backoff limit", ("failed", "unknown")),
    ("Failed", "Job was active longer than specified deadline", ("failed", "time_limit")),
    ("Failed", "Job team-x/a has failed because it was active longer than specified deadline", ("failed", "time_limit")),
    ("Failed", "PyTorchJob a is failed because 2 Worker replica(s) failed.", ("failed", "unknown")),
    ("Failed", "jobset failed due to reaching max number of restarts", ("failed", "unknown")),
    ("FailedToStart", "admission webhook denied the request", ("failed", "unknown")),
    ("JobFinished", "Job finished successfully", ("succeeded", None)),
    ("JobFinished", "Job failed", ("failed", "unknown")),
    ("JobSetFinished", "JobSet finished successfully", ("succeeded", None)),
    ("JobSetFinished", "JobSet failed", ("failed", "unknown")),
    ("SUCCEEDED", "", ("succeeded", None)),
    ("FAILED", "", ("failed", "unknown")),
    ("OutOfSync", "The prebuilt workload is out of sync with its user job", None),
    ("OwnerNotFound", "The workload's owner no longer exists", None),
    ("JobFinished", "something else", None),
])
def test_workload_finished_reasons(reason, message, expected):
    end = workload_finish(reason, message)
    assert (None if end is None else (end.outcome, end.category)) == expected


@pytest.mark.parametrize("kind,reason,message,expected", [
    ("Job", "Completed", "Job completed", ("succeeded", None)),
    ("Job", "BackoffLimitExceeded", "Job has reached the specified backoff limit", ("failed", "unknown")),
    ("Job", "DeadlineExceeded", "Job was active longer than specified deadline", ("failed", "time_limit")),
    ("Job", "PodFailurePolicy", "Container main for pod team-x/a-0-b8k2z failed with exit code 42 matching FailJob "
                                "rule at index 0", ("failed", "unknown")),
    ("Job", "MaxFailedIndexesExceeded", "Job has exceeded the specified maximal number of failed indexes",
     ("failed", "unknown")),
    ("Job", "SuccessfulCreate", "Created pod: a-x4w9z", None),
    ("PyTorchJob", "PyTorchJobSucceeded", "PyTorchJob team-x/a successfully completed.", ("succeeded", None)),
    ("MPIJob", "MPIJobSucceeded", "MPIJob team-x/a successfully completed.", ("succeeded", None)),
    ("TFJob", "TFJobFailed", "TFJob team-x/a has failed because 1 Worker replica(s) failed.", ("failed", "unknown")),
    ("PyTorchJob", "PyTorchJobFailed", "Job a has failed because it was active longer than specified deadline",
     ("failed", "time_limit")),
    ("PyTorchJob", "PyTorchJobRestarting", "PyTorchJob a is restarting because 1 Worker replica(s) failed.", None),
    ("PyTorchJob", "FinishedWorkload", "Workload 'team-x/pytorchjob-a-1b2c3' is declared finished", None),
    ("JobSet", "AllJobsCompleted", "jobset completed successfully", ("succeeded", None)),
    ("JobSet", "ReachedMaxRestarts", "jobset failed due to reaching max number of restarts", ("failed", "unknown")),
    ("Pod", "Completed", "Job completed", None),  # only a Job's own controller
])
def test_job_events(kind, reason, message, expected):
    end = job_event_end(kind, reason, message)
    assert (None if end is None else (end.outcome, end.category)) == expected


def test_sigterm_sent_by_the_jobs_deadline_is_time_limit(tmp_path):
    """A batch Job past activeDeadlineSeconds: its pods get SIGTERM, torchrun logs the signal (a stop from outside,
    `preempted` alone); with the Job's DeadlineExceeded the root is the time limit (SPEC rev. 2 `time_limit`)."""
    src = JOB_ENDS / "pods" / next(p.name for p in (JOB_ENDS / "pods").iterdir() if "vit-deadline" in p.name)
    dst = tmp_path / "pods" / src.name / "train"
    dst.mkdir(parents=True)
    sigterm = next((FIX.parent / "runs" / "sigterm" / "pods").glob("*worker-1*/*/0.log")).read_text().splitlines()
    tail = [f"2026-04-07T08:59:59.{i:06d}000Z {line.split(' ', 1)[1]}" for i, line in enumerate(sigterm[4:35])]
    (dst / "0.log").write_text((src / "train" / "0.log").read_text() + "\n".join(tail) + "\n")
    events = tmp_path / "events.ndjson"
    events.write_text("".join(line for line in (JOB_ENDS / "events.ndjson").read_text().splitlines(keepends=True)
                              if "vit-deadline" in line))
    d = diagnoses([tmp_path / "pods"], [events])[("team-j/vit-deadline", 1)]
    assert (d.outcome, d.category) == ("failed", "time_limit"), d.summary
    assert "DeadlineExceeded" in d.summary
    # Without the Job's event the same log is a stop from outside.
    events.write_text("")
    d = diagnoses([tmp_path / "pods"], [events])[("team-j/vit-deadline", 1)]
    assert d.category == "preempted"
