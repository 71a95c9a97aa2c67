"""The digest a run keeps for diagnosis: bounded by bytes, and the diagnosis still right past the bound."""

from __future__ import annotations

import time
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gangscope.parsers.times import seconds as time_seconds
from gangscope.parsers.records import StepRecord, stable_id
from gangscope.pipeline.run import replay
from gangscope.pipeline.diagnose.attempt import diagnose
from gangscope.pipeline.diagnose.digest import JobDigest
from gangscope.pipeline.diagnose.rank_spool import RankSpool

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
    series = dict(digest.step_series())
    kept = sum(len(s) for s in series.values())
    assert kept <= 5_000
    assert digest.series_steps == kept
    assert len(series) == 200 and all(series.values())
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


class _ListSeries:
    """The step series as the digest kept them in memory before they went to disk (lists of the
    steps, thinned in place): the reference for what `JobDigest.step_series` gives."""

    def __init__(self, max_steps_per_job: int, max_steps: int):
        self.max_steps_per_job, self.max_steps = max_steps_per_job, max_steps
        self.steps: dict[str, list] = {}
        self.stride: dict[str, int] = {}
        self.seen: dict[str, int] = {}

    def add(self, step) -> None:
        job = step.job or ""
        seen = self.seen.get(job, 0)
        self.seen[job] = seen + 1
        if seen % self.stride.setdefault(job, 1):
            return
        series = self.steps.setdefault(job, [])
        series.append(step)
        if len(series) >= self.max_steps_per_job:
            self._thin(job)
        elif sum(map(len, self.steps.values())) > self.max_steps:
            self._thin(max(self.steps, key=lambda j: len(self.steps[j])))  # the first of the longest

    def _thin(self, job: str) -> None:
        self.steps[job] = self.steps[job][::2]
        self.stride[job] *= 2


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.sampled_from(["a", "b"])), min_size=1, max_size=400),
       st.integers(2, 9), st.integers(3, 40), st.sampled_from([1, 3, 4096]), st.booleans())
def test_step_series_on_disk_are_the_series_thinned_in_memory_whatever_spills(arrivals, per_job, total, buffer, parts):
    """Each job's series waits on disk as appended (a 1-step buffer spills every step); what is
    read back is what lists thinned in place kept, job by job in the order of their first steps,
    and each part holds its jobs' series in that order with every rank's last step once."""
    digest = JobDigest(max_steps_per_job=per_job, max_steps=total, series_buffer=buffer)
    if parts:
        digest.last_steps = RankSpool(buffer=1)  # spilled: the parts are the 64 partitions
    reference = _ListSeries(per_job, total)
    for i, (job, namespace) in enumerate(arrivals):
        step = StepRecord(id=f"s{i}", job=f"job{job}" if job else None, namespace=namespace, pod=f"p{job}-{i % 3}",
                          rank=i % 3, step=i, time=f"2026-01-01T00:00:{i % 60:02d}Z")
        digest.add(step)
        reference.add(step)
    got = {job: [s.id for s in series] for job, series in digest.step_series()}
    assert got == {job: [s.id for s in series] for job, series in reference.steps.items()}
    assert digest.series_steps == sum(map(len, reference.steps.values()))
    # the steps thinned out leave the disk as they go: what waits is what the series hold, twice at most
    waiting = sum(1 for n in range(64) for _ in digest._appended.read(n))
    assert waiting <= 2 * digest.series_steps + 4 * buffer
    assert digest.part_count() == (64 if parts else 1)
    in_order = [s.id for series in reference.steps.values() for s in series]  # jobs by first step
    kept, everything = set(in_order), []
    for part in digest.parts():
        steps = [r.id for r in part if r.kind == "step"]
        assert len(set(steps)) == len(steps)  # a rank's last step in its series is not there twice
        in_series = [i for i in steps if i in kept]
        assert in_series == [i for i in in_order if i in set(in_series)]
        everything += steps
    assert kept <= set(everything)
    digest.close()


def test_a_released_digest_holds_nothing_but_still_counts_what_it_dropped(run_records):
    """The CLI lets the digest go after the report (the sink's close needs the room): nothing of it
    is read again, and summary.json's counts of what it dropped and summarized stay."""
    digest = JobDigest(max_bytes=20_000, series_buffer=8)
    for record in run_records:
        digest.add(record)
    dropped, summarized = dict(digest.dropped), digest.summarized
    assert dropped and any(digest.step_series()) and digest.records
    digest.release()
    assert dict(digest.dropped) == dropped and digest.summarized == summarized
    assert not digest.records and not list(digest.step_series()) and not any(digest.parts())
    assert not digest._sizes and not digest._attempts and not digest._series and not digest._by_length and not digest._lengths


def test_steps_thinned_out_of_every_series_leave_the_disk():
    """Many jobs past the total: nearly every step is appended to a series and most are thinned
    out later; the files keep what the series still hold (twice that at most), not every step."""
    digest = JobDigest(max_steps_per_job=64, max_steps=200, series_buffer=16)
    reference = _ListSeries(64, 200)
    for step in range(100):
        for job in range(60):
            record = StepRecord(id=f"{job}-{step}", job=f"team-a/job-{job}", pod=f"job-{job}-0", rank=0, step=step)
            digest.add(record)
            reference.add(record)
    waiting = sum(1 for n in range(64) for _ in digest._appended.read(n))
    assert digest.series_steps == sum(map(len, reference.steps.values())) <= 200 + 60
    assert waiting <= 2 * digest.series_steps + 4 * 16
    assert {job: [s.id for s in series] for job, series in digest.step_series()} == \
        {job: [s.id for s in series] for job, series in reference.steps.items()}


class _PerClassHeaps:
    """The drop order as it was kept before (a dict of a heap per drop class, each of
    ((-time, -entry), entry, kind)): the reference for the one heap of flat tuples."""

    def __init__(self, key):
        import heapq
        import math

        from gangscope.parsers import times
        from gangscope.pipeline.diagnose import digest as module

        self.key, self.bytes, self.heaps, self._heapq, self._math, self._times, self._module = key, 0, {}, heapq, math, times, module

    def push(self, entry, record):
        t = self._times.seconds(record.time)
        latest_first = (-(t if t is not None else self._math.inf), -entry)
        self._heapq.heappush(self.heaps.setdefault(self._module._class_of(record), []), (latest_first, entry, record.kind))

    def pop(self):
        for cls in sorted(self.heaps):
            heap = self.heaps[cls]
            _order, entry, kind = self._heapq.heappop(heap)
            if not heap:
                del self.heaps[cls]
            return entry, kind
        return None


_CATEGORIES = ["cuda_oom", "nccl_timeout", "nan_loss", "success", "unknown", "deprecation", "watchdog", "exit_code"]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["error", "trace", "child_failed", "event"]), st.integers(0, 4),
                          st.integers(1, 2), st.one_of(st.none(), st.integers(0, 5)), st.sampled_from(_CATEGORIES),
                          st.integers(0, 600)), min_size=1, max_size=120),
       st.integers(0, 6000))
def test_records_dropped_for_the_byte_budget_are_the_ones_the_per_class_heaps_dropped(made, budget):
    """Past the budget, an attempt's records go in its drop order: the least telling class first,
    within it the latest in time first (a record without a time first of all), then the latest
    kept. One heap of flat tuples per attempt (~290 bytes an attempt with a record, was ~770) drops
    the same records, in the same order, as a heap per class did, for any mix of kinds, classes,
    times, attempts and budgets (fails with the class, the time or the arrival left out of the key)."""
    from gangscope.parsers.records import ErrorRecord, EventRecord, TraceRecord
    from gangscope.pipeline.diagnose import digest as module

    def record(i, what, job, attempt, minute, category, size):
        common = dict(id=f"r{i}", job=f"ns/job{job}", attempt=attempt, pod=f"job{job}-0",
                      time=None if minute is None else f"2026-01-01T00:{minute:02d}:00Z")
        if what == "error":
            return ErrorRecord(category=category, message="m" * size, **common)
        if what == "event":
            return EventRecord(reason="Evicted", message="e" * size, **common)
        return TraceRecord(exception_type="RuntimeError", text="t" * size,
                           form="child_failed" if what == "child_failed" else "traceback", **common)

    records = [record(i, *m) for i, m in enumerate(made)]
    new = JobDigest(max_bytes=budget)
    for r in records:
        new.add(r)
    original = module._AttemptBytes
    module._AttemptBytes = _PerClassHeaps
    try:
        old = JobDigest(max_bytes=budget)
        for r in records:
            old.add(r)
    finally:
        module._AttemptBytes = original
    assert [r.id for r in new._kept()] == [r.id for r in old._kept()]
    assert dict(new.dropped) == dict(old.dropped) and new.bytes == old.bytes <= budget
