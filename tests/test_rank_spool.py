"""Each rank's newest record waits on disk past a bound (pipeline/diagnose/rank_spool.py), and the
back half and the report take the jobs a part at a time (JobDigest.parts): what they make is what
they make of everything in memory at once (issue 17: 100k tiny pod files held ~100 MB of last
steps and epoch records to the end of the run)."""

from __future__ import annotations

import io
import random
from pathlib import Path

import pytest

from gangscope.parsers.records import StepRecord, job_key, to_dict
from gangscope.pipeline.diagnose import back_half
from gangscope.pipeline.diagnose.digest import JobDigest
from gangscope.pipeline.diagnose.rank_spool import RankSpool, partition_of
from gangscope.pipeline.report.render import write_report, write_report_in_parts
from gangscope.pipeline.run import replay

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def test_a_spool_keeps_the_newest_record_of_each_key_at_its_first_write_as_a_dict_does():
    rng = random.Random(17)
    spool, want = RankSpool(buffer=7), {}
    for i in range(3_000):
        key = rng.randrange(300)
        job = f"ns/job{key % 23}"
        spool.put(key, job, (key, i), tag=i)
        want[key] = (key, i)
    assert spool.spilled
    assert list(spool.items()) != list(want.items())  # read back partition by partition...
    assert dict(spool.items()) == want  # ...the newest of each key
    for n in range(spool.partitions()):
        got = [record for record, _tag in spool.entries(n)]
        mine = [v for k, v in want.items() if partition_of(f"ns/job{k % 23}") == n]
        assert got == mine  # in the order of first writes, as the dict has them
        assert [tag for _r, tag in spool.entries(n)] == [v[1] for v in mine]
    assert spool.entries(0) == spool.entries(0)  # read as often as asked
    spool.close()


def test_an_unspilled_spool_is_one_part_in_memory():
    spool = RankSpool(buffer=100)
    for i in range(10):
        spool.put(i % 4, "ns/a", i)
    assert not spool.spilled and spool.partitions() == 1
    assert [r for r, _ in spool.entries(0)] == [8, 9, 6, 7] and len(spool) == 4


def _stream(paths: list[Path]):
    records: list = []
    result = replay.run(replay.ReplayOptions(paths=[str(p) for p in paths]), records.extend)
    return [r for r in records if r.kind not in ("diagnosis",) and not (r.kind == "signal" and r.signal == "straggler")], result


@pytest.fixture(scope="module")
def fixture_run():
    return _stream([FIXTURES / "runs", FIXTURES / "public", FIXTURES / "dialects"])


def _digest(records, buffer: int | None, max_steps: int = 50_000) -> JobDigest:
    if buffer is None:
        digest = JobDigest(max_steps=max_steps)
    else:
        digest = JobDigest(max_steps=max_steps, latest=RankSpool(buffer=buffer), last_steps=RankSpool(buffer=buffer))
    for r in records:
        digest.add(r)
    return digest


@pytest.mark.parametrize("max_steps", [50_000, 300])  # 300: series thinned, last steps outside them
def test_the_back_half_and_the_report_part_by_part_make_what_they_make_of_everything_at_once(fixture_run, max_steps):
    records, result = fixture_run
    jobs = sorted({job_key(r) for r in records})
    whole, parted = _digest(records, None, max_steps), _digest(records, 5, max_steps)
    assert whole.part_count() == 1 and parted.part_count() > 1
    parts = list(parted.parts())
    # every record of a job in one part; together the parts hold what the whole digest does
    homes: dict[str, set[int]] = {}
    for n, part in enumerate(parts):
        for r in part:
            homes.setdefault(job_key(r), set()).add(n)
    assert len(homes) > 20 and all(len(h) == 1 for h in homes.values())
    assert sorted(map(repr, whole.all_records())) == sorted(r for part in parts for r in map(repr, part))
    a = back_half.analyse(whole, result.attempts, jobs=jobs)
    b = back_half.analyse(parted, result.attempts, jobs=jobs)
    assert len(a.diagnoses) > 20
    assert [to_dict(d) for d in b.diagnoses] == [to_dict(d) for d in a.diagnoses]
    assert [to_dict(s) for s in b.stragglers] == [to_dict(s) for s in a.stragglers]
    assert list(b.timelines.items()) == list(a.timelines.items())
    page_a, page_b = io.StringIO(), io.StringIO()
    write_report(page_a, whole.all_records(), a.diagnoses, timelines=a.timelines)
    write_report_in_parts(page_b, zip(parted.parts(), b.diagnoses.parts(), strict=True), timelines=b.timelines)
    assert page_b.getvalue() == page_a.getvalue()
    assert all(d.job in page_a.getvalue() for d in a.diagnoses)
    parted.close()


def test_a_rank_s_last_step_read_back_from_disk_is_left_out_when_its_series_holds_it():
    steps = [StepRecord(id=f"s{j}-{s}", job=f"ns/job{j}", pod=f"job{j}-0", rank=0, step=s, time="2026-01-01T00:00:00Z")
             for s in range(1, 4) for j in range(40)]
    digest = _digest(steps, 3)
    kept = [r for part in digest.parts() for r in part]
    assert len(kept) == len({r.id for r in kept}) == len(steps)  # every step once: the last ones are in the series
