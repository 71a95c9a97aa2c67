"""Index templates, versioned indices behind aliases, and the atomic reindex, on the real OpenSearch."""

from __future__ import annotations

import threading

import pytest

from gangscope.parsers.records import EpochRecord, StepRecord, TraceRecord, stable_id, to_dict
from gangscope.pipeline.sinks import indices
from gangscope.pipeline.dashboard import create_app
from gangscope.pipeline.sinks.indices import IndexSettings, OpenSearchError
from gangscope.pipeline.sinks.opensearch import OpenSearchSink

JOB = "team-a/llama-train"
MAX_READS = 5000  # bounds the reader's loop; it stops three reads after the swap


@pytest.fixture
def client(opensearch_url):
    return indices.connect(opensearch_url)


@pytest.fixture
def prefix(client, index_prefix):
    value = index_prefix + "-"
    yield value
    indices.delete_all(client, value)


def step(i: int, loss: float, second: int = 0, nanos: int = 0) -> StepRecord:
    pod = f"llama-train-worker-{i % 4}"
    time = f"2026-03-02T10:00:{second:02d}.{nanos:09d}Z"
    return StepRecord(id=stable_id(JOB, pod, i), job=JOB, pod=pod, rank=i % 4, time=time, step=i, total_steps=500,
                      loss=loss, step_time_s=1.0, metrics={"tokens_per_s": 3100, "train.mfu": 0.41})


def live(client, kind: str, prefix: str) -> str | None:
    return indices.kind_state(client, kind, prefix).live


def test_install_puts_one_versioned_index_behind_each_alias(client, prefix):
    indices.install(client, prefix)
    for kind in indices.KINDS:
        assert live(client, kind, prefix) == f"{prefix}gangscope-{kind}-v1"


def test_installing_twice_changes_nothing(client, prefix):
    indices.install(client, prefix)
    before = client.indices.get(index=f"{prefix}gangscope-*")
    report = indices.install(client, prefix)
    after = client.indices.get(index=f"{prefix}gangscope-*")
    assert sorted(after) == sorted(before)
    assert {n: b["settings"]["index"]["uuid"] for n, b in after.items()} == \
           {n: b["settings"]["index"]["uuid"] for n, b in before.items()}
    assert sum("is current" in line for line in report.lines) == len(indices.KINDS)


def test_shards_and_replicas_come_from_the_settings(client, prefix):
    indices.install(client, prefix, IndexSettings(shards=2, replicas=0))
    settings = client.indices.get_settings(index=f"{prefix}gangscope-step-v1")[f"{prefix}gangscope-step-v1"]
    assert settings["settings"]["index"]["number_of_shards"] == "2"
    assert settings["settings"]["index"]["number_of_replicas"] == "0"


def test_times_keep_their_nanoseconds_in_order(opensearch_url, client, prefix):
    # Three lines in the same microsecond: only the nanoseconds tell them apart.
    records = [step(1, 2.0, nanos=123456789), step(2, 2.0, nanos=123456701), step(3, 2.0, nanos=123456750)]
    with OpenSearchSink(opensearch_url, prefix=prefix, refresh=True) as sink:
        sink.write(records)
    r = client.search(index=f"{prefix}gangscope-step", body={"sort": [{"time": "asc"}], "size": 3})
    assert [h["_source"]["step"] for h in r["hits"]["hits"]] == [2, 3, 1]
    mapping = client.indices.get_mapping(index=f"{prefix}gangscope-step")
    assert next(iter(mapping.values()))["mappings"]["properties"]["time"]["type"] == "date_nanos"


def test_trace_text_is_searchable_and_the_fingerprint_is_a_keyword(opensearch_url, client, prefix):
    trace = TraceRecord(id="t1", job=JOB, fingerprint="3f9a0c2e", exception_type="torch.OutOfMemoryError",
                        text="Traceback (most recent call last):\n  File \"/workspace/train.py\", line 187, in main\n"
                             "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.")
    with OpenSearchSink(opensearch_url, prefix=prefix, refresh=True) as sink:
        sink.write([trace])
    alias = f"{prefix}gangscope-trace"
    by_words = client.search(index=alias, body={"query": {"match": {"text": "memory allocate"}}})
    by_fingerprint = client.search(index=alias, body={"query": {"term": {"fingerprint": "3f9a0c2e"}}})
    partial_fingerprint = client.search(index=alias, body={"query": {"term": {"fingerprint": "3f9a"}}})
    assert by_words["hits"]["total"]["value"] == 1
    assert by_fingerprint["hits"]["total"]["value"] == 1
    assert partial_fingerprint["hits"]["total"]["value"] == 0


def test_step_metrics_are_mapped_as_floats_whatever_their_names(opensearch_url, client, prefix):
    with OpenSearchSink(opensearch_url, prefix=prefix, refresh=True) as sink:
        sink.write([step(1, 2.0), step(2, 1.9)])
    props = next(iter(client.indices.get_mapping(index=f"{prefix}gangscope-step").values()))["mappings"]["properties"]
    assert props["metrics"]["properties"]["tokens_per_s"]["type"] == "float"
    assert props["metrics"]["properties"]["train"]["properties"]["mfu"]["type"] == "float"
    avg = client.search(index=f"{prefix}gangscope-step",
                        body={"size": 0, "aggs": {"t": {"avg": {"field": "metrics.tokens_per_s"}}}})
    assert avg["aggregations"]["t"]["value"] == 3100


def test_fields_the_templates_do_not_know_are_kept_but_not_mapped(opensearch_url, client, prefix):
    indices.install(client, prefix)
    client.index(index=f"{prefix}gangscope-error", id="x", body={"kind": "error", "category": "cuda_oom",
                                                                  "made_up_by_a_newer_parser": "some text"},
                 refresh=True)
    props = next(iter(client.indices.get_mapping(index=f"{prefix}gangscope-error").values()))["mappings"]["properties"]
    assert "made_up_by_a_newer_parser" not in props
    assert client.get(index=f"{prefix}gangscope-error", id="x")["_source"]["made_up_by_a_newer_parser"] == "some text"


def test_an_index_older_than_the_templates_gets_the_new_mapping_in_place(client, prefix):
    indices.install(client, prefix)
    index = f"{prefix}gangscope-epoch-v1"
    client.indices.put_mapping(index=index, body={"_meta": {"gangscope": {"kind": "epoch", "schema": 0}}})
    report = indices.install(client, prefix)
    assert any(line.startswith("epoch: ") and "upgraded in place" in line for line in report.lines)
    meta = client.indices.get_mapping(index=index)[index]["mappings"]["_meta"]
    assert meta["gangscope"]["schema"] == indices.SCHEMA
    assert live(client, "epoch", prefix) == index


def test_an_index_whose_mapping_cannot_change_in_place_is_rebuilt_behind_the_alias(client, prefix):
    # An older schema mapped `rank` as a keyword; a field's type cannot change in place.
    alias = f"{prefix}gangscope-step"
    indices.install_templates(client, prefix)
    client.indices.create(index=f"{alias}-v1", body={
        "mappings": {"_meta": {"gangscope": {"kind": "step", "schema": 0}}, "properties": {"rank": {"type": "keyword"}}},
        "aliases": {alias: {}}})
    client.index(index=alias, id="s1", body={"kind": "step", "job": JOB, "rank": "3", "loss": 1.5}, refresh=True)
    report = indices.install(client, prefix, kinds=["step"])
    assert any("rebuilt as" in line and f"{alias}-v2" in line for line in report.lines)
    assert live(client, "step", prefix) == f"{alias}-v2"
    props = client.indices.get_mapping(index=f"{alias}-v2")[f"{alias}-v2"]["mappings"]["properties"]
    assert props["rank"]["type"] == "integer"
    assert client.get(index=alias, id="s1")["_source"]["loss"] == 1.5


def test_a_step_index_made_before_its_sort_is_rebuilt_sorted_behind_the_alias(client, prefix):
    # Schema 1 made the step index unsorted; a sort is fixed when an index is created, so the same
    # mapping does not make it current: the records move to a sorted v2 and the alias follows.
    alias = f"{prefix}gangscope-step"
    mapping = indices.render_index_template("step", prefix)["template"]["mappings"]
    common = indices.render_component(IndexSettings(), 1)["template"]["mappings"]["properties"]
    client.indices.create(index=f"{alias}-v1", body={  # before the templates exist: no sort
        "mappings": {**mapping, "_meta": {"gangscope": {"kind": "step", "schema": 1}},
                     "properties": {**common, **mapping["properties"]}},
        "aliases": {alias: {}}})
    assert indices._index_sort(client, f"{alias}-v1") is None
    for i, second in enumerate((5, 9, 7)):
        client.index(index=alias, id=f"s{i}", body=to_dict(step(i, 2.0 - i / 10, second)))
    client.indices.refresh(index=alias)
    report = indices.install(client, prefix, kinds=["step"])
    assert any("rebuilt as" in line and f"{alias}-v2" in line for line in report.lines)
    assert live(client, "step", prefix) == f"{alias}-v2"
    assert indices._index_sort(client, f"{alias}-v2") == {"field": ["job", "time"], "order": ["asc", "desc"]}
    newest = client.search(index=alias, body={"size": 1, "query": {"term": {"job": JOB}},
                                              "sort": [{"job": "asc"}, {"time": "desc"}]})
    assert newest["hits"]["hits"][0]["_id"] == "s1" and client.count(index=alias)["count"] == 3
    assert any("is current" in line for line in indices.install(client, prefix, kinds=["step"]).lines)


def test_a_concrete_index_in_place_of_an_alias_is_a_clear_error(client, prefix):
    client.indices.create(index=f"{prefix}gangscope-step")
    with pytest.raises(OpenSearchError, match=r"gangscope-step is a concrete index, not an alias"):
        indices.install(client, prefix)


def test_the_retention_policy_is_rendered_and_skipped_with_a_message_without_ism(client, prefix):
    policy = indices.render_policy("step", IndexSettings(retain="3d"))
    report = indices.install(client, prefix)
    assert policy["policy"]["states"][0]["transitions"][0]["conditions"] == {"min_index_age": "3d"}
    if indices.has_ism(client):
        assert report.ism and any("ISM policies" in line for line in report.lines)
    else:
        assert not report.ism
        assert any("ISM plugin (opensearch-index-management) is not installed" in line for line in report.lines)


def test_reindex_fills_the_next_version_and_moves_the_alias(opensearch_url, client, prefix):
    with OpenSearchSink(opensearch_url, prefix=prefix, refresh=True) as sink:
        sink.write([step(i, 1.0) for i in range(10)])
    with OpenSearchSink(opensearch_url, prefix=prefix, reindex=True) as sink:
        sink.write([step(i, 2.0) for i in range(10)])
    assert sink.stats.aliases_swapped == {f"{prefix}gangscope-step": f"{prefix}gangscope-step-v2"}
    assert live(client, "step", prefix) == f"{prefix}gangscope-step-v2"
    r = client.search(index=f"{prefix}gangscope-step", body={"size": 0, "aggs": {"l": {"sum": {"field": "loss"}}}})
    assert (r["hits"]["total"]["value"], r["aggregations"]["l"]["value"]) == (10, 20.0)


def test_reindex_keeps_the_previous_version_and_drops_older_ones(opensearch_url, client, prefix):
    for loss in (1.0, 2.0, 3.0):
        with OpenSearchSink(opensearch_url, prefix=prefix, reindex=True) as sink:
            sink.write([step(i, loss) for i in range(3)])
    state = indices.kind_state(client, "step", prefix)
    assert state.live == f"{prefix}gangscope-step-v3"
    assert sorted(state.versions) == [2, 3]


def test_kinds_a_reindex_got_nothing_for_keep_their_index(opensearch_url, client, prefix):
    epoch = EpochRecord(id="e1", job=JOB, time="2026-03-02T10:00:00Z", epoch=1.0, total_epochs=3, progress=0.33)
    with OpenSearchSink(opensearch_url, prefix=prefix, refresh=True) as sink:
        sink.write([epoch, step(1, 1.0)])
    with OpenSearchSink(opensearch_url, prefix=prefix, reindex=True) as sink:
        sink.write([step(1, 2.0)])
    assert live(client, "epoch", prefix) == f"{prefix}gangscope-epoch-v1"
    assert client.count(index=f"{prefix}gangscope-epoch")["count"] == 1
    assert not client.indices.exists(index=f"{prefix}gangscope-epoch-v2")


def test_a_reindex_that_fails_leaves_the_alias_where_it_was(opensearch_url, client, prefix):
    with OpenSearchSink(opensearch_url, prefix=prefix, refresh=True) as sink:
        sink.write([step(i, 1.0) for i in range(5)])
    with pytest.raises(RuntimeError):
        with OpenSearchSink(opensearch_url, prefix=prefix, reindex=True, batch_docs=2) as sink:
            sink.write([step(i, 2.0) for i in range(3)])
            raise RuntimeError("the input went away half-way")
    assert live(client, "step", prefix) == f"{prefix}gangscope-step-v1"
    assert not client.indices.exists(index=f"{prefix}gangscope-step-v2")
    assert client.count(index=f"{prefix}gangscope-step")["count"] == 5


def test_a_reindex_left_half_built_by_a_crash_is_dropped_by_the_next_one(opensearch_url, client, prefix):
    with OpenSearchSink(opensearch_url, prefix=prefix, refresh=True) as sink:
        sink.write([step(i, 1.0) for i in range(5)])
    crashed = indices.Reindex(client, prefix)  # never committed nor aborted: the process died
    client.index(index=crashed.target("step"), body={"kind": "step", "job": "half-built"}, refresh=True)
    with OpenSearchSink(opensearch_url, prefix=prefix, reindex=True) as sink:
        sink.write([step(i, 2.0) for i in range(5)])
    state = indices.kind_state(client, "step", prefix)
    assert state.live == f"{prefix}gangscope-step-v2"
    assert client.count(index=state.live, body={"query": {"term": {"job": "half-built"}}})["count"] == 0


def test_readers_never_see_an_empty_or_partial_index_during_a_reindex(opensearch_url, client, prefix):
    n = 600
    with OpenSearchSink(opensearch_url, prefix=prefix, refresh=True) as sink:
        sink.write([step(i, 1.0, second=i % 60) for i in range(n)])
    app = create_app(opensearch_url, prefix=prefix).test_client()
    seen: list[tuple[int, float, int]] = []
    first_read, swapped = threading.Event(), threading.Event()

    def read() -> None:
        reader = indices.connect(opensearch_url)
        after_swap = 0
        for _ in range(MAX_READS):
            r = reader.search(index=f"{prefix}gangscope-step",
                              body={"size": 0, "track_total_hits": True, "aggs": {"l": {"sum": {"field": "loss"}}}})
            panel = app.get("/api/steps").get_json()["data"]
            seen.append((r["hits"]["total"]["value"], r["aggregations"]["l"]["value"], panel["records"]))
            first_read.set()
            if swapped.is_set():
                after_swap += 1
                if after_swap >= 3:
                    break

    reader = threading.Thread(target=read)
    reader.start()
    assert first_read.wait(60)
    # Many small batches with a refresh in between: a reader on the new index would see it grow.
    with OpenSearchSink(opensearch_url, prefix=prefix, reindex=True, batch_docs=50) as sink:
        for i in range(0, n, 50):
            sink.write([step(j, 2.0, second=j % 60) for j in range(i, i + 50)])
            sink.flush()
            client.indices.refresh(index=f"{prefix}gangscope-step-v2")
    swapped.set()
    reader.join()
    assert {(count, records) for count, _, records in seen} == {(n, n)}
    assert {total for _, total, _ in seen} == {n * 1.0, n * 2.0}  # it read before and after the swap
    assert live(client, "step", prefix) == f"{prefix}gangscope-step-v2"
