"""The step index is sorted on job, then time newest first (schema 2); the progress panel reads each
job's newest step record with a search sorted as the index is, and falls back to one top_hits per
job on an index made before the sort (which that search would read whole). Both give the same rows."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone

import pytest

from gangscope.parsers.records import EpochRecord, StepRecord, stable_id
from gangscope.pipeline.dashboard import create_app
from gangscope.pipeline.dashboard.query import Search
from gangscope.pipeline.sinks import indices
from gangscope.pipeline.sinks.indices import IndexSettings
from gangscope.pipeline.sinks.opensearch import OpenSearchSink

T0 = datetime(2026, 3, 2, 10, 0, 0, tzinfo=timezone.utc)
JOBS = ("ml/alpha", "ml/beta", "team/gamma")


def _records() -> list:
    """Three jobs of four ranks, written out of time order; a job's newest record is neither its largest
    step (ml/beta restarted from step 1 after step 90) nor the last one written."""
    out = []
    for j, job in enumerate(JOBS):
        steps = list(range(1, 91)) + (list(range(1, 31)) if job == "ml/beta" else [])
        for n, step in enumerate(steps):
            for rank in range(4):
                t = T0 + timedelta(seconds=j * 10_000 + n * 2, milliseconds=rank)
                out.append(StepRecord(id=stable_id(job, rank, n), job=job, attempt=1 + (n >= 90), namespace=job.split("/")[0],
                                      pod=f"{job.split('/')[1]}-{rank}", rank=rank, step=step, total_steps=200,
                                      time=t.isoformat().replace("+00:00", "Z"), loss=2.0 / step, step_time_s=1.0))
        out.append(EpochRecord(id=stable_id(job, "epoch"), job=job, attempt=1, namespace=job.split("/")[0],
                               time=(T0 + timedelta(seconds=j * 10_000)).isoformat().replace("+00:00", "Z"),
                               epoch=1.0, total_epochs=4, step=10, total_steps=200))
    random.Random(7).shuffle(out)
    return out


def _unsorted_step_index(client, prefix: str) -> None:
    """A step index as schema 1 made it: the same mapping, no sort (made before the templates exist)."""
    alias = indices.alias_name("step", prefix)
    mapping = indices.render_index_template("step", prefix)["template"]["mappings"]
    common = indices.render_component(IndexSettings(), 1)["template"]["mappings"]["properties"]
    client.indices.create(index=f"{alias}-v1", body={
        "mappings": {**mapping, "_meta": {"gangscope": {"kind": "step", "schema": 1}},
                     "properties": {**common, **mapping["properties"]}},
        "aliases": {alias: {}}})


@pytest.fixture
def both(opensearch_url, index_prefix):
    """The same records under two prefixes: a sorted step index (installed now) and an unsorted one."""
    client = indices.connect(opensearch_url)
    sorted_prefix, unsorted_prefix = index_prefix + "-s-", index_prefix + "-u-"
    _unsorted_step_index(client, unsorted_prefix)
    for prefix in (sorted_prefix, unsorted_prefix):
        with OpenSearchSink(opensearch_url, prefix=prefix, refresh=True) as sink:
            sink.write(_records())
    yield sorted_prefix, unsorted_prefix
    for prefix in (sorted_prefix, unsorted_prefix):
        indices.delete_all(client, prefix)


def test_the_step_index_is_sorted_on_job_then_newest_first(opensearch_url, both):
    client = indices.connect(opensearch_url)
    assert Search(client, both[0]).index_sort("step") == (("job", "asc"), ("time", "desc"))
    assert Search(client, both[1]).index_sort("step") == ()
    assert Search(client, both[0] + "absent-").index_sort("step") == ()


def test_progress_is_the_same_on_a_sorted_and_an_unsorted_step_index(opensearch_url, both):
    answers = []
    for prefix in both:
        api = create_app(opensearch_url, prefix=prefix).test_client()
        answers.append([api.get("/api/progress", query_string=q).get_json()["data"]
                        for q in ({}, {"job": "ml/beta"}, {"since": "2026-03-02T12:00"}, {"job": "absent"})])
    assert answers[0] == answers[1]
    rows = {r["job"]: r for r in answers[0][0]["jobs"]}
    assert set(rows) == set(JOBS)
    assert rows["ml/beta"]["step"] == 30 and rows["ml/beta"]["attempt"] == 2  # the newest, not the largest step
    assert rows["ml/beta"]["last_update"] == "2026-03-02T12:50:38.003000Z"  # rank 3's, 3 ms after rank 0's
    assert rows["ml/alpha"]["step_records"] == 360 and rows["ml/beta"]["step_records"] == 480
    assert [r["job"] for r in answers[0][2]["jobs"]] == ["team/gamma", "ml/beta"]  # since: alpha is older
    assert answers[0][3]["jobs"] == []
