"""The digest a run keeps for diagnosis: bounded by bytes, and the diagnosis still right past the bound."""

from __future__ import annotations

import time
from pathlib import Path

import msgspec
import pytest

from gangscope.parsers.times import seconds as time_seconds
from gangscope.parsers.records import StepRecord, stable_id
from gangscope.pipeline.run import replay
from gangscope.pipeline.diagnose.attempt import diagnose
from gangscope.pipeline.diagnose.digest import JobDigest

RUN = Path(__file__).resolve().parent.parent / "fixtures" / "public" / "oom_then_watchdog"  # label: cuda_oom, rank 11


@pytest.fixture(scope="module")
def run_records():
    """Every record replay makes of the run (the sink's view), in the order it makes them."""
    records = []
    replay.run(replay.ReplayOptions(paths=[str(RUN / "pods")]), records.extend)
    return [r for r in records if r.kind != "diagnosis"]


def _later(record, hours: int):
    """The record again, as if printed `hours` later (a new id: another occurrence)."""
    t = time.gmtime(time_seconds(record.time) + hours * 3600)
    when = time.strftime("%Y-%m-%dT%H:%M:%S", t) + record.time[19:]
    return msgspec.structs.replace(record, time=when, id=stable_id(record.id, hours))


def test_a_digest_fed_far_past_its_budget_stays_within_it_and_still_names_the_first_failure(run_records):
    digest = JobDigest(max_bytes=128 << 10)
    flood = [_later(r, h) for h in range(1, 301) for r in run_records if r.kind in ("error", "trace")]
    fed = flood[: len(flood) // 2] + run_records + flood[len(flood) // 2 :]
    for record in fed:
        digest.add(record)
    [verdict] = diagnose(digest.all_records())
    assert sum(len(msgspec.json.encode(r)) for r in fed) > 100 * digest.max_bytes
    assert digest.bytes <= digest.max_bytes
    assert sum(digest.dropped.values()) > 0 and digest.summarized > 0
    assert (verdict.category, verdict.first_failure["rank"], verdict.first_failure["pod"]) == (
        "cuda_oom", 11, "embed-train-worker-2")


def test_a_replay_over_its_digest_budget_counts_what_it_dropped_and_summarized():
    small = replay.run(replay.ReplayOptions(paths=[str(RUN / "pods")], digest_max_bytes=16 << 10), lambda batch: None)
    summary = small.summary()
    assert small.digest.bytes <= 16 << 10
    assert summary["digest_records_dropped"] == sum(small.digest.dropped.values()) > 0
    assert summary["digest_records_summarized"] == small.digest.summarized > 0


def test_step_series_of_many_jobs_stay_within_the_total_budget():
    """Each job under its own limit, but thousands of jobs: the series of all of them together
    stay bounded, and every job keeps its latest steps spread over its run."""
    digest = JobDigest(max_steps_per_job=1_000, max_steps=5_000)
    for job in range(200):
        for step in range(1, 301):
            digest.add(StepRecord(job=f"team-a/job-{job}", pod=f"job-{job}-worker-0", rank=0, step=step, loss=1.0))
    kept = sum(len(series) for series in digest.steps.values())
    assert kept <= 5_000
    assert digest.series_steps == kept
    assert len(digest.steps) == 200 and all(series for series in digest.steps.values())
    assert len(digest.last_steps) == 200  # every rank's last step is kept whatever the thinning


def test_a_rank_s_newer_epoch_record_holds_the_strings_of_the_one_it_replaces_not_copies():
    """A rank's last progress word is built from its parked state, with copies of its strings; the
    digest keeps the earlier version's (equal values), so 100k tiny pods do not hold both."""
    from gangscope.parsers.records import EpochRecord

    def copy(text: str) -> str:
        return "".join(list(text))  # an equal string, another object

    first = EpochRecord(id="e" * 40, job="ns/job", pod="job-worker-0", node="n1", time="2026-12-01T00:00:00Z", epoch=1.0)
    last = EpochRecord(id=copy(first.id), job=copy(first.job), pod=copy(first.pod), node="n2",
                       time="2026-12-01T00:05:00Z", epoch=2.0)
    digest = JobDigest()
    digest.add(first)
    digest.add(last)
    [kept] = [r for r in digest.all_records() if r.kind == "epoch"]
    assert kept is last and kept.epoch == 2.0
    assert kept.id is first.id and kept.job is first.job and kept.pod is first.pod
    assert kept.node == "n2" and kept.time == "2026-12-01T00:05:00Z"  # what changed is kept as it is
