"""The step panel's per-job extremes (largest step, range of ranks, any step time) come from sorted
searches of size 1 in one _msearch: they must be the numbers OpenSearch's max/min aggregations give."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from gangscope.parsers.records import StepRecord, stable_id
from gangscope.pipeline.dashboard import create_app
from gangscope.pipeline.dashboard.query import Filters, Search
from gangscope.pipeline.dashboard.panels.step_jobs import with_extremes
from gangscope.pipeline.sinks import indices
from gangscope.pipeline.sinks.indices import OpenSearchError
from gangscope.pipeline.sinks.opensearch import OpenSearchSink

T0 = datetime(2026, 3, 2, 10, 0, 0, tzinfo=timezone.utc)


def _step(job: str, rank: int | None, n: int, step: int | None, step_time_s: float | None) -> StepRecord:
    ns = job.split("/")[0]
    return StepRecord(id=stable_id(job, rank, n), job=job, attempt=1, namespace=ns, pod=f"p-{rank}", rank=rank,
                      time=(T0 + timedelta(seconds=n)).isoformat().replace("+00:00", "Z"), step=step, loss=1.0,
                      step_time_s=step_time_s)


@pytest.fixture
def uneven(opensearch_url, index_prefix):
    """'ml/gang': ranks 3..6 (no rank 0), steps to 251, a rank-less line and one without a step;
    'ml/untimed': ranks 0..7, more records, no step time; 'ml/solo': no rank, no step time."""
    prefix = index_prefix + "-"
    records = [_step("ml/gang", rank, rank * 1000 + n, n, 1.0) for rank in range(3, 7) for n in range(1, 252)]
    records += [_step("ml/gang", None, 9001, 7, 1.0), _step("ml/gang", 4, 9002, None, 1.0)]
    records += [_step("ml/untimed", rank, rank * 1000 + n, n * 3, None) for rank in range(8) for n in range(1, 200)]
    records += [_step("ml/solo", None, n, n * 100, None) for n in range(1, 30)]
    with OpenSearchSink(opensearch_url, prefix=prefix, refresh=True) as sink:
        sink.write(records)
    yield prefix
    indices.delete_all(indices.connect(opensearch_url), prefix)


def _aggregated(search: Search) -> dict[str, dict]:
    r = search("step", {"size": 0, "aggs": {"by_job": {"terms": {"field": "job", "size": 12}, "aggs": {
        "max_step": {"max": {"field": "step"}}, "min_rank": {"min": {"field": "rank"}},
        "max_rank": {"max": {"field": "rank"}}, "timed": {"value_count": {"field": "step_time_s"}}}}}})
    return {b["key"]: {k: b[k]["value"] for k in ("max_step", "min_rank", "max_rank", "timed")}
            for b in r["aggregations"]["by_job"]["buckets"]}


def test_the_extremes_are_those_of_max_and_min_aggregations(opensearch_url, uneven):
    search = Search(indices.connect(opensearch_url), uneven)
    jobs = [{"key": job, "doc_count": 0} for job in ("ml/gang", "ml/untimed", "ml/solo", "ml/absent")]
    found = {b["key"]: {k: b[k]["value"] for k in ("max_step", "min_rank", "max_rank", "timed")}
             for b in with_extremes(search, Filters(), jobs)}
    expected = _aggregated(search)
    for job in ("ml/gang", "ml/untimed", "ml/solo"):
        assert {k: v for k, v in found[job].items() if k != "timed"} == \
            {k: v for k, v in expected[job].items() if k != "timed"}
        assert bool(found[job]["timed"]) == bool(expected[job]["timed"])
    assert found["ml/gang"] == {"max_step": 251.0, "min_rank": 3.0, "max_rank": 6.0, "timed": 1}
    assert found["ml/solo"] == {"max_step": 2900.0, "min_rank": None, "max_rank": None, "timed": 0}
    assert found["ml/absent"] == {"max_step": None, "min_rank": None, "max_rank": None, "timed": 0}


def test_the_panel_draws_the_lowest_rank_and_compares_the_timed_job(opensearch_url, uneven):
    client = create_app(opensearch_url, prefix=uneven).test_client()
    data = client.get("/api/steps").get_json()["data"]
    by_job = {j["job"]: j for j in data["jobs"]}
    assert by_job["ml/gang"]["line_rank"] == 3 and by_job["ml/gang"]["step_interval"] == 3  # 251 steps / 100
    assert by_job["ml/untimed"]["line_rank"] == 0 and by_job["ml/untimed"]["step_interval"] == 6
    assert by_job["ml/solo"]["line_rank"] is None and by_job["ml/solo"]["step_interval"] == 29
    ranks = client.get("/api/ranks").get_json()["data"]
    assert ranks["rank_job"] == "ml/gang"  # ml/untimed has more ranks, but no step time to compare


def test_many_searches_answer_in_order_and_a_failed_one_raises(opensearch_url, uneven):
    search = Search(indices.connect(opensearch_url), uneven)
    answers = search.each([("step", {"size": 0, "query": {"term": {"job": job}}}) for job in ("ml/solo", "ml/gang")]
                          + [("signal", {"size": 0})])
    assert [a["hits"]["total"]["value"] for a in answers] == [29, 4 * 251 + 2, 0]
    assert Search(indices.connect(opensearch_url), uneven + "none-").each([("step", {"size": 0})])[0]["hits"]["total"]["value"] == 0
    with pytest.raises(OpenSearchError):
        search.each([("step", {"size": 0}), ("step", {"size": 1, "sort": [{"no_such_field": "desc"}]})])


def test_a_since_of_the_datetime_input_filters_every_panel(opensearch_url, uneven):
    """<input type=datetime-local> sends minutes without seconds; OpenSearch refused them (HTTP 400)."""
    client = create_app(opensearch_url, prefix=uneven).test_client()
    for name in ("progress", "steps", "ranks", "errors", "traces", "events", "diagnoses"):
        assert client.get(f"/api/{name}?since=2026-03-02T10:00").status_code == 200, name
    data = client.get("/api/steps?since=2026-03-02T11:15&job=ml/gang").get_json()["data"]
    assert data["records"] == 2 * 251 + 2  # from 4,500 s on: ranks 5 and 6 (at rank * 1000 + n s), and the two at 9,00x s
