"""The checkpoint store against the real OpenSearch: the checkpoints of a commit saved in one
request (pipeline/run/checkpoint.py save_many), each read back as saved, a refused one said."""

from __future__ import annotations

import pytest

from gangscope.pipeline.run.checkpoint import CheckpointStore
from gangscope.pipeline.sinks import indices
from gangscope.pipeline.sinks.indices import OpenSearchError

pytestmark = pytest.mark.servers


@pytest.fixture()
def store(opensearch_url, index_prefix):
    client = indices.connect(opensearch_url)
    prefix = f"{index_prefix}-ckpt-"
    store = CheckpointStore(client, prefix, "group-a", opensearch_url)
    store.ensure()
    yield store
    client.indices.delete(index=store.index, ignore_unavailable=True)


def _requests(client):
    """Counts the HTTP requests the client makes (its transport's own method, wrapped)."""
    calls = []
    perform = client.transport.perform_request

    def counted(method, url, *args, **kwargs):
        calls.append((method, url))
        return perform(method, url, *args, **kwargs)

    client.transport.perform_request = counted
    return calls


def test_the_checkpoints_of_a_commit_go_in_one_request_and_each_reads_back(store):
    states = [("pod-logs", p, 100 + p, bytes([p]) * (1000 * (p + 1))) for p in range(4)]
    calls = _requests(store.client)
    store.save_many(states)
    assert len(calls) == 1 and calls[0][1].endswith("/_bulk")
    for topic, partition, offset, state in states:
        assert store.load(topic, partition) == (offset, state)
    store.save_many([("pod-logs", 2, 205, b"later")])  # a later save replaces that partition's only
    assert store.load("pod-logs", 2) == (205, b"later")
    assert store.load("pod-logs", 3) == (103, states[3][3])
    store.save("pod-logs", 7, 9, b"one")
    assert store.load("pod-logs", 7) == (9, b"one")


def test_a_checkpoint_the_server_refuses_is_said_with_its_partition(store):
    store.save_many([("pod-logs", 0, 1, b"first")])
    store.client.indices.put_settings(index=store.index, body={"index.blocks.write": True})
    try:
        with pytest.raises(OpenSearchError, match="checkpoint of pod-logs/0 not saved"):
            store.save_many([("pod-logs", 0, 2, b"second"), ("pod-logs", 1, 2, b"other")])
    finally:
        store.client.indices.put_settings(index=store.index, body={"index.blocks.write": None})
    assert store.load("pod-logs", 0) == (1, b"first")
    assert store.load("pod-logs", 1) is None
