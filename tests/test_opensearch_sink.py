"""The OpenSearch sink against the real server: idempotent by record id, batched, retried, never silent."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path

import pytest
from opensearchpy.helpers import scan

from gangscope.parsers.records import StepRecord, TraceRecord, stable_id
from gangscope.pipeline.sinks import indices
from gangscope.pipeline.errors import SinkError
from gangscope.pipeline.sinks.opensearch import OpenSearchSink, OpenSearchUnavailable

JOB = "team-a/llama-train"


def steps(n: int, loss0: float = 2.5) -> list[StepRecord]:
    """n step records of 4 ranks, as the HF Trainer dialect yields them."""
    out = []
    for i in range(n):
        rank, step = i % 4, i // 4 + 1
        pod = f"llama-train-worker-{rank}"
        time = f"2026-03-02T10:{step // 60:02d}:{step % 60:02d}.{rank:03d}512034Z"
        out.append(StepRecord(
            id=stable_id(JOB, 1, pod, time, 0), job=JOB, namespace="team-a", pod=pod, container="pytorch",
            node=f"gpu-node-{rank // 2}", rank=rank, time=time, source=f"/var/log/pods/team-a_{pod}_uid/pytorch/0.log",
            stream="stdout", step=step, total_steps=1000, epoch=round(step / 500, 3), loss=round(loss0 - step * 1e-3, 5),
            learning_rate=3e-4, grad_norm=0.87, throughput=3180.5, throughput_unit="tokens/s", step_time_s=1.02,
            metrics={"mfu": 0.41}, dialect="hf_trainer"))
    return out


def oom_trace() -> TraceRecord:
    text = ("Traceback (most recent call last):\n  File \"/workspace/train.py\", line 187, in main\n"
            "    loss.backward()\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.")
    return TraceRecord(id=stable_id(JOB, 1, "llama-train-worker-3", "t"), job=JOB, pod="llama-train-worker-3", rank=3,
                       time="2026-03-02T10:05:00.000000001Z", exception_type="torch.OutOfMemoryError",
                       message="CUDA out of memory. Tried to allocate 2.00 GiB.", fingerprint="fp-oom", text=text)


def documents(url: str, alias: str) -> dict[str, dict]:
    client = indices.connect(url)
    return {h["_id"]: h["_source"] for h in scan(client, index=alias, query={"query": {"match_all": {}}})}


@pytest.fixture
def prefix(opensearch_url, index_prefix):
    value = index_prefix + "-"
    yield value
    indices.delete_all(indices.connect(opensearch_url), value)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Relay:
    """A TCP relay to the real server that can cut its connections and refuse the next N.

    It stands in for a network that fails; every byte that passes is the real server's.
    """

    def __init__(self, target: tuple[str, int]):
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.refuse = 0
        self.refused = 0
        self.open: list[socket.socket] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def cut(self, refuse_next: int) -> None:
        with self.lock:
            self.refuse = refuse_next
            for s in self.open:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()
            self.open.clear()

    def close(self) -> None:
        self.cut(0)
        self.listener.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                if self.refuse:
                    self.refuse -= 1
                    self.refused += 1
                    client.close()
                    continue
                upstream = socket.create_connection(self.target)
                self.open += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


@pytest.fixture
def relay(opensearch_url):
    host, port = opensearch_url.split("://", 1)[1].split(":")
    r = Relay((host, int(port)))
    yield r
    r.close()


def test_records_are_indexed_under_their_id_in_the_alias_of_their_kind(opensearch_url, prefix):
    records = steps(8) + [oom_trace()]
    with OpenSearchSink(opensearch_url, prefix=prefix, refresh=True) as sink:
        sink.write(records)
    step_docs = documents(opensearch_url, indices.alias_name("step", prefix))
    trace_docs = documents(opensearch_url, indices.alias_name("trace", prefix))
    assert set(step_docs) == {r.id for r in records[:8]}
    assert set(trace_docs) == {records[8].id}
    assert trace_docs[records[8].id]["fingerprint"] == "fp-oom"
    assert sink.stats.written == {"step": 8, "trace": 1}


def test_prepare_makes_every_kinds_alias_before_any_record_and_records_then_land_in_them(opensearch_url, prefix):
    client = indices.connect(opensearch_url)
    with OpenSearchSink(opensearch_url, prefix=prefix, refresh=True) as sink:
        assert not any(state.live for state in indices.kind_states(client, prefix).values())
        sink.prepare()
        assert all(state.live for state in indices.kind_states(client, prefix).values())
        sink.prepare()  # again: nothing missing, nothing made
        sink.write([*steps(4), oom_trace()])
    assert set(documents(opensearch_url, indices.alias_name("step", prefix))) == {r.id for r in steps(4)}
    assert sink.stats.written == {"step": 4, "trace": 1}


def test_replaying_the_same_records_twice_leaves_exactly_the_same_documents(opensearch_url, prefix):
    records = steps(40) + [oom_trace()]
    alias = indices.alias_name("step", prefix)
    with OpenSearchSink(opensearch_url, prefix=prefix, refresh=True) as first:
        first.write(records)
    before = documents(opensearch_url, alias)
    with OpenSearchSink(opensearch_url, prefix=prefix, refresh=True) as second:
        second.write(records)
    after = documents(opensearch_url, alias)
    assert len(before) == 40
    assert after == before
    assert (first.stats.created, first.stats.updated) == (41, 0)
    assert (second.stats.created, second.stats.updated) == (0, 41)


def test_a_replay_with_changed_content_overwrites_instead_of_duplicating(opensearch_url, prefix):
    alias = indices.alias_name("step", prefix)
    with OpenSearchSink(opensearch_url, prefix=prefix, refresh=True) as sink:
        sink.write(steps(12, loss0=2.5))
    with OpenSearchSink(opensearch_url, prefix=prefix, refresh=True) as sink:
        sink.write(steps(12, loss0=9.5))
    docs = documents(opensearch_url, alias)
    assert len(docs) == 12
    assert all(d["loss"] > 9 for d in docs.values())


def test_records_are_sent_in_batches_of_the_given_count(opensearch_url, prefix):
    with OpenSearchSink(opensearch_url, prefix=prefix, batch_docs=7) as sink:
        sink.write(steps(30))
    assert sink.stats.batches == 5  # 7 + 7 + 7 + 7 + 2
    assert sink.stats.total == 30


def test_records_are_sent_in_batches_of_the_given_size(opensearch_url, prefix):
    with OpenSearchSink(opensearch_url, prefix=prefix, batch_docs=10_000, batch_bytes=4_000) as sink:
        sink.write(steps(30))
    # A step document is ~700 bytes with its action line: 4 kB holds 5 or 6 of them.
    assert 5 <= sink.stats.batches <= 8
    assert sink.stats.total == 30


def test_a_document_the_server_rejects_is_counted_and_dead_lettered_with_the_reason(opensearch_url, prefix, tmp_path):
    dead = tmp_path / "dead.ndjson"
    good = steps(4)
    # `metrics.train` becomes a float first; a later line that reports `train.tokens` needs it to be an object.
    good[0].metrics = {"train": 1.0}
    clash = steps(5)[4]
    clash.metrics = {"train.tokens": 4096.0}
    with OpenSearchSink(opensearch_url, prefix=prefix, dead_letter=dead, refresh=True) as sink:
        sink.write(good)
        sink.flush()
        sink.write([clash])
    assert sink.stats.failed == 1
    assert sink.stats.written == {"step": 4}
    assert "mapper_parsing_exception" in sink.stats.summary()
    [entry] = [json.loads(line) for line in dead.read_text().splitlines()]
    assert entry["id"] == clash.id
    assert entry["status"] == 400
    assert entry["error"]["type"] == "mapper_parsing_exception"
    assert entry["record"]["metrics"] == {"train.tokens": 4096.0}


def test_a_record_without_an_id_is_dead_lettered_and_the_rest_of_its_batch_indexed(opensearch_url, prefix, tmp_path):
    dead = tmp_path / "dead.ndjson"
    records = steps(6)
    records[2].id = ""
    with OpenSearchSink(opensearch_url, prefix=prefix, dead_letter=dead) as sink:
        sink.write(records)
    assert sink.stats.written == {"step": 5}
    assert sink.stats.failure_reasons == {"missing_id": 1}
    [entry] = [json.loads(line) for line in dead.read_text().splitlines()]
    assert entry["record"]["step"] == records[2].step


def test_no_dead_letter_file_is_written_when_nothing_fails(opensearch_url, prefix, tmp_path):
    dead = tmp_path / "dead.ndjson"
    with OpenSearchSink(opensearch_url, prefix=prefix, dead_letter=dead) as sink:
        sink.write(steps(4))
    assert not dead.exists()
    assert sink.stats.failed == 0


def test_a_server_that_is_down_gives_one_clear_error(prefix):
    port = closed_port()
    with pytest.raises(OpenSearchUnavailable) as caught:
        OpenSearchSink(f"http://127.0.0.1:{port}", prefix=prefix)
    message = str(caught.value)
    assert message == f"OpenSearch at http://127.0.0.1:{port} is not reachable (connection refused)"
    assert isinstance(caught.value, SinkError) and caught.value.exit_code == 2


def test_the_password_never_appears_in_an_error(prefix):
    port = closed_port()
    with pytest.raises(OpenSearchUnavailable) as caught:
        OpenSearchSink(f"http://admin:s3cret-pw@127.0.0.1:{port}", prefix=prefix)
    assert "s3cret-pw" not in str(caught.value)
    assert f"127.0.0.1:{port}" in str(caught.value)


def test_a_missing_ca_bundle_is_a_clear_error(tmp_path):
    with pytest.raises(SinkError, match="CA bundle not found: .*nope.pem"):
        OpenSearchSink("https://127.0.0.1:9200", ca_certs=str(tmp_path / "nope.pem"))


def test_a_dropped_connection_is_retried_with_backoff_until_the_batch_is_in(opensearch_url, prefix, relay):
    sink = OpenSearchSink(f"http://127.0.0.1:{relay.port}", prefix=prefix, refresh=True,
                          initial_backoff=0.05, max_retries=6)
    records = steps(40)
    sink.write(records[:20])
    sink.flush()
    relay.cut(refuse_next=2)
    sink.write(records[20:])
    stats = sink.close()
    assert relay.refused == 2
    assert stats.retries >= 20  # the whole second batch went again at least once
    assert stats.total == 40 and stats.failed == 0
    assert len(documents(opensearch_url, indices.alias_name("step", prefix))) == 40


def test_a_server_that_stays_away_mid_run_raises_and_says_how_much_is_unsent(opensearch_url, prefix, relay):
    sink = OpenSearchSink(f"http://127.0.0.1:{relay.port}", prefix=prefix, initial_backoff=0.01, max_retries=2)
    records = steps(13)
    sink.write(records[:4])
    sink.flush()
    relay.cut(refuse_next=1000)
    sink.write(records[4:])
    with pytest.raises(OpenSearchUnavailable, match=r"gave up after 3 tries with 9 documents unsent"):
        sink.flush()


# --- from the pipeline: the fixtures, replayed --------------------------------------------------

FIXTURE_RUNS = Path(__file__).resolve().parent.parent / "fixtures" / "runs"


def replay_into(url: str, prefix: str, workers: int = 1):
    from gangscope.pipeline.run import replay

    with OpenSearchSink(url, prefix=prefix, refresh=True) as sink:
        result = replay.run(replay.ReplayOptions(paths=[str(FIXTURE_RUNS)], workers=workers), sink.write, sink=sink)
    return result, sink.stats


def everything(url: str, prefix: str) -> dict[str, dict]:
    return {f"{h['_index'].rsplit('-v', 1)[0]}/{h['_id']}": h["_source"]
            for h in scan(indices.connect(url), index=f"{prefix}gangscope-*", query={"query": {"match_all": {}}})}


def test_replaying_the_fixtures_twice_leaves_exactly_the_same_documents(opensearch_url, prefix):
    result, first = replay_into(opensearch_url, prefix)
    before = everything(opensearch_url, prefix)
    _, second = replay_into(opensearch_url, prefix)
    after = everything(opensearch_url, prefix)
    assert sum(result.records.values()) > 0 and first.failed == 0
    assert len(after) == len(before) > 0
    assert after == before
    assert second.created == 0


def test_worker_processes_index_the_same_documents_as_one_process(opensearch_url, prefix):
    replay_into(opensearch_url, prefix + "one-", workers=1)
    _, stats = replay_into(opensearch_url, prefix + "two-", workers=2)
    try:
        one = {k.split("gangscope-", 1)[1]: v for k, v in everything(opensearch_url, prefix + "one-").items()}
        two = {k.split("gangscope-", 1)[1]: v for k, v in everything(opensearch_url, prefix + "two-").items()}
    finally:
        client = indices.connect(opensearch_url)
        indices.delete_all(client, prefix + "one-")
        indices.delete_all(client, prefix + "two-")
    assert one == two
    assert stats.total >= len(two) and stats.failed == 0
