"""Kafka as a source: client options from the settings, messages decoded, bad ones dead-lettered.

Pod-log messages are Fluent Bit's Kafka output records (FORMATS.md 1.5: JSON with `log`,
`stream`, `time` or `@timestamp`, `_p`, the `kubernetes` block); event messages are one
Kubernetes Event, Kueue Workload or Pod JSON each, handed on as JSON (their records are made
by pipeline/curate/events.py). A message that is neither goes to the dead-letter topic with its original key and bytes, and the reason in
its headers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

import msgspec

from gangscope.parsers import envelopes

# Header names on a dead-lettered message.
H_REASON = "gangscope-reason"
H_DETAIL = "gangscope-detail"
H_TOPIC = "gangscope-topic"
H_PARTITION = "gangscope-partition"
H_OFFSET = "gangscope-offset"

_decoder = msgspec.json.Decoder()


def client_options(cfg) -> dict[str, Any]:
    """What every kafka-python client gets from the settings: servers, TLS and SASL."""
    opts: dict[str, Any] = {
        "bootstrap_servers": [s.strip() for s in cfg.bootstrap.split(",") if s.strip()],
        "client_id": cfg.client_id,
        "security_protocol": cfg.security_protocol,
    }
    if cfg.security_protocol in ("SSL", "SASL_SSL"):
        opts.update(ssl_check_hostname=cfg.ssl_check_hostname, ssl_cafile=cfg.ssl_cafile,
                    ssl_certfile=cfg.ssl_certfile, ssl_keyfile=cfg.ssl_keyfile)
    if cfg.security_protocol.startswith("SASL"):
        opts.update(sasl_mechanism=cfg.sasl_mechanism, sasl_plain_username=cfg.sasl_username,
                    sasl_plain_password=cfg.sasl_password)
    return opts


def consumer_options(cfg, group: str | None = None) -> dict[str, Any]:
    """A consumer that commits only when told to (offsets follow the sink's acknowledgements)."""
    session_ms = int(getattr(cfg, "session_timeout", 45.0) * 1000)
    extra: dict[str, Any] = {"session_timeout_ms": session_ms, "heartbeat_interval_ms": max(100, min(3000, session_ms // 3))}
    if getattr(cfg, "instance_id", None):
        extra["group_instance_id"] = cfg.instance_id
    return dict(
        client_options(cfg),
        **extra,
        group_id=group if group is not None else cfg.group,
        enable_auto_commit=False,
        auto_offset_reset=cfg.start,
        max_poll_records=cfg.max_poll_records,
        # a fetch returns as soon as anything is there; long waits only when idle
        fetch_max_wait_ms=100,
        max_partition_fetch_bytes=4 << 20,
    )


def producer_options(cfg) -> dict[str, Any]:
    return dict(client_options(cfg), acks="all", linger_ms=5)


# --- decoding -------------------------------------------------------------------------------


class Undecodable(Exception):
    """A message that cannot be read: `reason` is a short id, `detail` says more."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(reason, detail)
        self.reason = reason
        self.detail = detail


def _json_value(value: bytes | None) -> Any:
    if not value:
        raise Undecodable("empty", "message without a value")
    try:
        return _decoder.decode(value)
    except msgspec.DecodeError as exc:
        raise Undecodable("not_json", str(exc)[:200]) from None
    except RecursionError:  # msgspec's guard against deep nesting: hostile, not a crash
        raise Undecodable("too_deep", "JSON nested deeper than the decoder follows") from None


def _json_object(value: bytes | None) -> dict[str, Any]:
    obj = _json_value(value)
    if not isinstance(obj, dict):
        raise Undecodable("not_an_object", f"JSON {type(obj).__name__}")
    return obj


class _FluentBitRecord(msgspec.Struct, gc=False):
    """The fields of a Fluent Bit record the fast path reads, typed as the common case has them
    (gc=False: decoded JSON values cannot refer back to the record, so no cycle can go through it).
    A record of any other shape (no string `log` or `time`, a `_p` that is no string, not JSON,
    not an object) fails to decode into it and is read by `read_record` as before."""

    log: str
    time: str
    stream: Any = None
    p: Any = msgspec.field(default=None, name="_p")
    kubernetes: msgspec.Raw = msgspec.field(default_factory=msgspec.Raw)


_record_decoder = msgspec.json.Decoder(_FluentBitRecord)
_new_tuple = tuple.__new__  # an Envelope from its five fields without NamedTuple's Python-level __new__
_KUBE_CACHE_MAX = 8192


class _KubernetesBlocks:
    """The `kubernetes` block of each record, decoded and checked once per distinct text: a pod's
    records all carry the same block, so a line costs a lookup of its bytes, and the records of one
    container share one dict (the block is read, never changed, downstream)."""

    def __init__(self):
        self._known: dict[bytes, tuple[dict | None, str | None]] = {}
        # The block read last, as it came (msgspec.Raw) and as read: a partition's messages come
        # mostly in runs of one pod's, so most records compare their block's bytes with the last
        # one's and stop there (no copy to bytes, no hash, no lookup: 0.11 -> 0.03 s CPU for the
        # realistic corpus's 300 k records, bench/kafka_consume.py corpus_records).
        self._last: msgspec.Raw | None = None
        self._last_found: tuple[dict | None, str | None] = (None, None)

    def read(self, raw: msgspec.Raw) -> tuple[dict | None, str | None]:
        """(the block, None) or (None, what is wrong with it)."""
        if raw == self._last:
            return self._last_found
        text = bytes(raw)
        found = self._known.get(text)
        if found is None:
            kube = _decoder.decode(text) if text else None
            problem = envelopes.kubernetes_problem(kube) if kube is not None else None
            found = (None, problem) if problem is not None else (kube, None)
            if len(self._known) >= _KUBE_CACHE_MAX:
                self._known.clear()  # bounded: many distinct pods only cost a decode each again
            self._known[text] = found
        self._last, self._last_found = raw, found
        return found


_kubernetes_blocks = _KubernetesBlocks()


def decode_log(value: bytes | None, _decode=_record_decoder.decode, _blocks=_kubernetes_blocks, _new=_new_tuple,
               _envelope=envelopes.Envelope) -> envelopes.Envelope:
    """One Fluent Bit record as an envelope, or Undecodable. (The hot path: one call per line.)
    Records of the common shape are decoded straight into their fields (`_FluentBitRecord`); any
    other is read by `read_record`, the one reading of a record's fields, so both give the same
    envelope or the same reason (tests/test_consume_decode.py). The block of the record before is
    compared here, not in a call of `_KubernetesBlocks.read`, and the text's line end is tested by
    its last character rather than `str.endswith` (a call that parses its arguments), and the record
    Struct is not tracked by the cycle collector: decode_log over 30,000 messages of the realistic
    corpus 336.8M -> 306.6M instructions (valgrind --tool=callgrind);
    msgspec's own decoding is 166.7M of what is left."""
    try:
        rec = _decode(value)
        raw = rec.kubernetes
        if raw == _blocks._last:
            kube, problem = _blocks._last_found
        else:
            kube, problem = _blocks.read(raw)
    except Exception:  # another shape, not JSON, nested too deep, no bytes: the general reading
        return _decode_log_general(value)
    if problem is not None:
        raise Undecodable("bad_kubernetes", problem)
    text = rec.log
    if text[-1:] == "\n":
        text = text[:-1]
        if text[-1:] == "\r":
            text = text[:-1]
    stream = rec.stream
    return _new(_envelope, (rec.time, stream if stream == "stdout" or stream == "stderr" else "stdout", rec.p == "P",
                            text, kube))


def _decode_log_general(value: bytes | None, _decode=_decoder.decode, _envelope=envelopes.read_record) -> envelopes.Envelope:
    """decode_log for a record of any shape: JSON to a dict, its fields read by `read_record`."""
    try:
        obj = _decode(value)
    except (msgspec.DecodeError, TypeError, RecursionError):
        obj = _json_value(value)  # raises with the reason
    if type(obj) is not dict:
        raise Undecodable("not_an_object", f"JSON {type(obj).__name__}")
    env = _envelope(obj)
    if type(env) is not envelopes.Envelope:
        if env is None:
            raise Undecodable("no_log_text", "record has no string 'log' or 'message'")
        # the record's fields checked in one place (parsers/envelopes.py): a list or object where
        # the `kubernetes` block names the container cannot key the curation state
        raise Undecodable("bad_kubernetes", env.detail)
    return env


def event_object(value: bytes | None) -> Any:
    """The JSON of one events message (an Event, Workload, Pod, list or watch event), or
    Undecodable. Its records are made by pipeline/curate/events.py: a source only reads."""
    return _json_value(value)


# --- dead letters ---------------------------------------------------------------------------


class DeadLetters:
    """Sends undecodable messages to a topic: original key and value, the reason in headers.

    `flush()` returns when the broker has them (called before offsets are committed, so a
    message is either dead-lettered or read again); one the broker did not take is sent again
    at the next flush, which raises meanwhile. The producer is of the backend `cfg.kafka_client`
    names (kafka-python, or confluent-kafka), as the consumer's.
    """

    def __init__(self, cfg, topic: str):
        self.topic = topic
        client = getattr(cfg, "kafka_client", "kafka-python")
        self.producer = _ConfluentProducer(cfg) if client == "confluent" else _KafkaPythonProducer(cfg)
        self.sent = 0

    def send(self, message, reason: str, detail: str = "") -> None:
        headers = [
            (H_REASON, reason.encode()),
            (H_DETAIL, detail.encode("utf-8", "replace")[:1000]),
            (H_TOPIC, message.topic.encode()),
            (H_PARTITION, str(message.partition).encode()),
            (H_OFFSET, str(message.offset).encode()),
        ]
        self.producer.send(self.topic, message.key, message.value, headers)
        self.sent += 1

    def flush(self, timeout: float | None = None) -> None:
        """Wait for the broker's acknowledgement of everything sent; raises (a KafkaError) if one
        failed or did not come in time."""
        self.producer.flush(timeout)

    def close(self, timeout: float = 10) -> None:
        try:
            self.producer.close(timeout)
        except Exception:  # closing at shutdown: nothing left to lose
            pass


class _KafkaPythonProducer:
    """kafka-python's producer: each send's future kept until a flush found it acknowledged."""

    def __init__(self, cfg):
        from kafka import KafkaProducer

        self._p = KafkaProducer(**producer_options(cfg))
        self._sent: list = []  # (future, what was sent)

    def send(self, topic, key, value, headers) -> None:
        self._sent.append((self._p.send(topic, key=key, value=value, headers=headers), (topic, key, value, headers)))

    def flush(self, timeout: float | None) -> None:
        if not self._sent:
            return
        self._p.flush(timeout=timeout)
        sent, self._sent = self._sent, []
        failed: list[str] = []
        for future, what in sent:
            try:
                future.get(timeout=0)
            except Exception as exc:  # not taken (or not answered yet): sent again, the flush fails
                failed.append(str(exc) or type(exc).__name__)
                self.send(*what)
        if failed:
            from kafka.errors import KafkaError

            raise KafkaError(f"{len(failed)} dead letters not acknowledged ({failed[0]}); sent again")

    def close(self, timeout: float) -> None:
        self._p.close(timeout=timeout)


class _ConfluentProducer:
    """confluent-kafka's producer (librdkafka): delivery reports, served by flush, say which
    messages the broker did not take; those are produced again."""

    def __init__(self, cfg):
        from confluent_kafka import KafkaException, Producer

        from gangscope.pipeline.sources.kafka_client import confluent_client_config

        conf = dict(confluent_client_config(client_options(cfg)), acks="all", **{"linger.ms": 5})
        try:
            self._p = Producer(conf)
        except KafkaException as exc:
            from kafka.errors import KafkaConfigurationError

            raise KafkaConfigurationError(str(exc)) from None
        self._failed: list[tuple[tuple, str]] = []

    def send(self, topic, key, value, headers) -> None:
        what = (topic, key, value, headers)

        def delivered(err, _msg):
            if err is not None:
                self._failed.append((what, str(err)))

        while True:
            try:
                self._p.produce(topic, key=key, value=value, headers=headers, on_delivery=delivered)
                break
            except BufferError:  # librdkafka's queue is full: wait for deliveries to make room
                self._p.poll(0.5)
        self._p.poll(0)  # serves the delivery reports due

    def flush(self, timeout: float | None) -> None:
        from kafka.errors import KafkaError, KafkaTimeoutError

        left = self._p.flush(-1 if timeout is None else timeout)
        failed, self._failed = self._failed, []
        for what, _ in failed:
            self.send(*what)
        if failed:
            raise KafkaError(f"{len(failed)} dead letters not acknowledged ({failed[0][1]}); sent again")
        if left:
            raise KafkaTimeoutError(f"{left} dead letters not acknowledged within {timeout:g} s")

    def close(self, timeout: float) -> None:
        self._p.flush(timeout)


# --- ranges (replay --from-kafka) -----------------------------------------------------------


@dataclass
class Range:
    """Per partition: the first offset to read and the offset to stop before."""

    start: dict[Any, int]
    stop: dict[Any, int]

    @property
    def total(self) -> int:
        return sum(max(0, self.stop[tp] - self.start[tp]) for tp in self.stop)


def resolve_range(consumer, topic: str, since_ms: int | None = None, until_ms: int | None = None,
                  from_offset: int | None = None, to_offset: int | None = None) -> Range:
    """The offsets of `topic` that fall in [since, until) (message timestamps) or [from, to) offsets."""
    from kafka import TopicPartition

    parts = consumer.partitions_for_topic(topic)
    if not parts:
        from gangscope.pipeline.errors import UsageError

        raise UsageError(f"--from-kafka {topic}: no such topic on the brokers")
    tps = [TopicPartition(topic, p) for p in sorted(parts)]
    first = consumer.beginning_offsets(tps)
    end = consumer.end_offsets(tps)

    def at(ms: int | None, default: dict) -> dict:
        if ms is None:
            return dict(default)
        found = consumer.offsets_for_times({tp: ms for tp in tps})
        return {tp: (found[tp].offset if found.get(tp) is not None else end[tp]) for tp in tps}

    start = at(since_ms, first)
    stop = at(until_ms, end)
    if from_offset is not None:
        start = {tp: max(first[tp], from_offset) for tp in tps}
    if to_offset is not None:
        stop = {tp: min(end[tp], to_offset) for tp in tps}
    return Range(start, stop)


def read_range(consumer, rng: Range, poll_ms: int = 500) -> Iterator[list]:
    """Batches of messages of the range, in offset order per partition; ends at the range's end."""
    tps = [tp for tp in rng.stop if rng.stop[tp] > rng.start[tp]]
    if not tps:
        return
    consumer.assign(tps)
    for tp in tps:
        consumer.seek(tp, rng.start[tp])
    left = set(tps)
    while left:
        batch = consumer.poll(timeout_ms=poll_ms)
        for tp, messages in batch.items():
            if tp not in left:
                continue
            stop = rng.stop[tp]
            keep = [m for m in messages if m.offset < stop]
            if keep:
                yield keep
            if (messages and messages[-1].offset >= stop - 1) or consumer.position(tp) >= stop:
                left.discard(tp)
                consumer.pause(tp)
        for tp in list(left):
            if consumer.position(tp) >= rng.stop[tp]:
                left.discard(tp)
