"""The consumer backend behind `consume`: kafka-python or confluent-kafka (librdkafka).

The service (pipeline/run/service.py) talks to one interface, the part of kafka-python's
KafkaConsumer it needs: subscribe with a rebalance listener, poll batches of messages (each with
topic, partition, offset, key, value, timestamp) keyed by kafka.structs.TopicPartition, pause and
resume, commit offsets with metadata, committed offsets, the partition's end (highwater, end
offsets), assignment, seek, close. `open_consumer` gives a kafka-python KafkaConsumer as it is, or
`ConfluentConsumer`, which answers the same calls with librdkafka underneath.

Why two: kafka-python decodes records in Python (~110 k records per CPU-second on the bench
corpus, bench/kafka_clients.py); librdkafka decodes them in C (~540 k). See README (Performance)
for why confluent is the default when it is installed (`--kafka-client auto`).
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import msgspec
import structlog
from kafka.structs import OffsetAndMetadata, OffsetAndTimestamp, TopicPartition

log = structlog.get_logger("gangscope.consume")

CLIENTS = ("kafka-python", "confluent")


def default_client() -> str:
    """The backend of `--kafka-client auto`, the default: confluent when confluent-kafka is installed
    (exact on every consume test, and ~1.4x the lines per CPU-second: README, Performance), else
    kafka-python."""
    import importlib.util

    return "confluent" if importlib.util.find_spec("confluent_kafka") is not None else "kafka-python"


def resolve_client(name: str | None, context: str) -> str:
    """The backend a `--kafka-client` value names (auto, None: `default_client()`), checked: a name
    that is none, or confluent where confluent-kafka is not installed, is a usage error starting
    with `context` ("consume", "--from-kafka")."""
    from gangscope.pipeline.errors import UsageError

    client = default_client() if name in (None, "", "auto") else name
    if client not in CLIENTS:
        raise UsageError(f"{context}: kafka_client must be auto or one of {', '.join(CLIENTS)}, got {name!r}")
    if client == "confluent":
        try:
            import confluent_kafka  # noqa: F401
        except ImportError:
            raise UsageError(f"{context}: kafka_client confluent needs confluent-kafka (pip install confluent-kafka)") from None
    return client


def open_consumer(cfg, client: str, options: dict[str, Any]):
    """A consumer of backend `client` for the settings `cfg`; `options`: kafka-python's options
    (pipeline/sources/kafka.py consumer_options), which the confluent backend translates."""
    if client == "kafka-python":
        from kafka import KafkaConsumer

        return KafkaConsumer(**options)
    if client == "confluent":
        consumer = ConfluentConsumer(confluent_config(cfg, options))
        consumer.max_records = options.get("max_poll_records", 5000)
        return consumer
    raise ValueError(f"unknown Kafka client {client!r} (one of {', '.join(CLIENTS)})")


def client_errors(client: str) -> tuple[type[BaseException], ...]:
    """The exceptions a client of backend `client` raises when Kafka refuses or cannot be reached."""
    from kafka.errors import KafkaError

    if client == "confluent":
        from confluent_kafka import KafkaException

        return (KafkaError, KafkaException)
    return (KafkaError,)


def confluent_config(cfg, options: dict[str, Any]) -> dict[str, Any]:
    """librdkafka's names for the consumer options kafka-python took (servers, group, TLS, SASL)."""
    conf: dict[str, Any] = {
        **confluent_client_config(options),
        "group.id": options["group_id"],
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "auto.offset.reset": options["auto_offset_reset"],
        "session.timeout.ms": options["session_timeout_ms"],
        "heartbeat.interval.ms": options["heartbeat_interval_ms"],
        "fetch.wait.max.ms": options.get("fetch_max_wait_ms", 100),
        "max.partition.fetch.bytes": min(options.get("max_partition_fetch_bytes", 4 << 20), PARTITION_FETCH_BYTES),
        "queued.max.messages.kbytes": QUEUED_KBYTES,
        "fetch.queue.backoff.ms": FETCH_QUEUE_BACKOFF_MS,
    }
    if options.get("group_instance_id"):
        conf["group.instance.id"] = options["group_instance_id"]
    if options.get("metadata_max_age_ms"):
        conf["topic.metadata.refresh.interval.ms"] = options["metadata_max_age_ms"]
    return conf


# librdkafka's prefetch (CONFIGURATION.md, confluentinc/librdkafka; fetch.queue.backoff.ms since 2.3.0,
# CHANGELOG.md): its broker thread fetches until the consumer queue holds queued.max.messages.kbytes
# (64 MB by default), then waits fetch.queue.backoff.ms (1 s by default) before it looks again. Each
# fetch lands in pages the thread touches for the first time: with the defaults the realistic
# corpus's 300k messages (157 MB) cost that thread ~50k page faults and 0.23-0.6 s of CPU, most of it
# in the kernel, 4-10 % of the consumer's (/proc/PID/task/TID/stat of `consume` under
# bench.kafka_consume --only throughput, load ~10). A queue of 16 MB (~30k such messages, 0.6 s at
# 50k lines/s) in 1 MB fetches per partition reuses its memory: 13-20k faults and 0.16-0.17 s,
# polled at 15k or 50k messages/s or as fast as it goes (bench/kafka_prefetch.py). The backoff
# is then 100 ms: at 1 s a consumer that drained 16 MB waited for the next fetch (300k messages
# read in 5.9 s instead of 2.2 s).
PARTITION_FETCH_BYTES = 1 << 20
QUEUED_KBYTES = 16 * 1024
FETCH_QUEUE_BACKOFF_MS = 100


def confluent_client_config(options: dict[str, Any]) -> dict[str, Any]:
    """librdkafka's names for what every client takes (servers, id, TLS, SASL), from kafka-python's
    options (pipeline/sources/kafka.py client_options)."""
    conf: dict[str, Any] = {
        "bootstrap.servers": ",".join(options["bootstrap_servers"]),
        "client.id": options["client_id"],
        "security.protocol": options["security_protocol"],
        "error_cb": _log_error,
    }
    if options["security_protocol"] in ("SSL", "SASL_SSL"):
        for ours, theirs in (("ssl_cafile", "ssl.ca.location"), ("ssl_certfile", "ssl.certificate.location"),
                             ("ssl_keyfile", "ssl.key.location")):
            if options.get(ours):
                conf[theirs] = options[ours]
        conf["ssl.endpoint.identification.algorithm"] = "https" if options.get("ssl_check_hostname", True) else "none"
    if options["security_protocol"].startswith("SASL"):
        conf["sasl.mechanism"] = options["sasl_mechanism"]
        if options.get("sasl_plain_username") is not None:
            conf["sasl.username"] = options["sasl_plain_username"]
        if options.get("sasl_plain_password") is not None:
            conf["sasl.password"] = options["sasl_plain_password"]
    return conf


ALL_BROKERS_DOWN = -187  # librdkafka's RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN (confluent_kafka.KafkaError._ALL_BROKERS_DOWN)


def _log_error(err) -> None:
    # librdkafka retries by itself (broker down, reconnects); these are what it tells while it does
    log.warning("kafka client", error=str(err))


class Message(msgspec.Struct, gc=False):
    """One consumed message, with kafka-python's ConsumerRecord attribute names: the offset and value
    (read for every message) taken at once, the key and time (read for a dead letter) when asked from
    librdkafka's message (`m`). A msgspec Struct, made in C (a class with slots ran a Python __init__
    per message) and left out of the cycle collector (it holds no container that could hold it):
    poll's loop over 20,000 messages of the realistic corpus and a read of each one's offset and
    value 76.1M -> 48.6M instructions (valgrind --tool=callgrind; a
    tuple subclass made with tuple.__new__ was 79.5M, its properties slower to read than the loop gained)."""

    topic: Any
    partition: Any
    offset: Any
    value: Any
    m: Any = None

    @property
    def key(self):
        return self.m.key()

    @property
    def timestamp(self):
        return self.m.timestamp()[1]


def _run(coroutine) -> None:
    """Runs one of kafka-python's async listener methods to its end (nothing in it really waits:
    this backend's commit_async commits synchronously)."""
    if inspect.iscoroutine(coroutine):
        asyncio.run(coroutine)


class ConfluentConsumer:
    """kafka-python's KafkaConsumer calls the service makes, on confluent_kafka.Consumer.

    Rebalance callbacks run inside `poll()` on the caller's thread (librdkafka calls them from
    its poll), so the listener may commit synchronously.
    """

    def __init__(self, conf: dict[str, Any]):
        from confluent_kafka import Consumer, KafkaException

        self.max_records = 5000
        self._brokers_down = False
        conf = {**conf, "error_cb": self._on_error}
        try:
            self._c = Consumer(conf)
        except KafkaException as exc:
            from kafka.errors import KafkaConfigurationError

            raise KafkaConfigurationError(str(exc)) from None
        self._paused: set[TopicPartition] = set()
        self._assigned: set[TopicPartition] = set()
        self._seeks: dict[TopicPartition, int] = {}
        self._assigned_at: dict[TopicPartition, int] | None = None  # assign()'s partitions and start offsets
        self._assign_due: dict[TopicPartition, int] | None = None  # an assign() not yet made: made at the next poll
        self._commit_waiting: _Waiting | None = None  # a commit past its time limit, still waiting for a broker

    def _on_error(self, err) -> None:
        """librdkafka's error callback (served inside `poll()`): logged, and "all brokers down"
        (_ALL_BROKERS_DOWN) remembered. librdkafka reconnects by itself, and a blocked offset commit
        may never fail, so this is how the service learns that Kafka went away."""
        _log_error(err)
        if err.code() == ALL_BROKERS_DOWN:
            self._brokers_down = True

    def took_brokers_down(self) -> bool:
        """Whether every broker was down since the last call (then forgotten)."""
        down, self._brokers_down = self._brokers_down, False
        return down

    # --- group --------------------------------------------------------------------------------

    def subscribe(self, topics, listener=None) -> None:
        def on_assign(consumer, partitions):
            tps = {TopicPartition(p.topic, p.partition) for p in partitions}
            self._assigned |= tps
            if listener is not None:
                _run(listener.on_partitions_assigned(tps))

        def on_revoke(consumer, partitions):
            tps = {TopicPartition(p.topic, p.partition) for p in partitions}
            if listener is not None:
                _run(listener.on_partitions_revoked(tps))
            self._assigned -= tps
            self._paused -= tps

        def on_lost(consumer, partitions):
            tps = {TopicPartition(p.topic, p.partition) for p in partitions}
            if listener is not None:
                _run(listener.on_partitions_lost(tps))
            self._assigned -= tps
            self._paused -= tps

        self._c.subscribe(list(topics), on_assign=on_assign, on_revoke=on_revoke, on_lost=on_lost)

    def assignment(self) -> set[TopicPartition]:
        return set(self._assigned)

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        try:
            meta = self._c.list_topics(topic, timeout=5.0).topics.get(topic)
        except Exception:
            return None
        if meta is None or meta.error is not None:
            return None
        return set(meta.partitions)

    # --- reading ------------------------------------------------------------------------------

    def poll(self, timeout_ms: int = 0, max_records: int | None = None) -> dict[TopicPartition, list[Message]]:
        self._make_due_assign()
        self._apply_seeks()
        msgs = self._wait_for_messages(max_records or self.max_records, timeout_ms / 1000)
        out: dict[TopicPartition, list[Message]] = {}
        topic, partition = None, None
        bucket: list[Message] = []
        message = Message
        for m in msgs:
            if m.error() is not None:
                if m.error().code() != -191:  # _PARTITION_EOF: not an error
                    log.warning("kafka fetch error", error=str(m.error()))
                continue
            p = m.partition()
            if p != partition or m.topic() != topic:
                topic, partition = m.topic(), p
                bucket = out.setdefault(TopicPartition(topic, partition), [])
            bucket.append(message(topic, partition, m.offset(), m.value(), m))
        for tp in [tp for tp in out if tp in self._paused or tp not in self._assigned]:
            # fetched before a pause or a revocation took effect: a paused partition reads them
            # again from the first one (librdkafka's position is already past them)
            messages = out.pop(tp)
            if tp in self._assigned:
                self._seeks.setdefault(tp, messages[0].offset)
        return out

    def _wait_for_messages(self, most: int, timeout: float) -> list:
        """Up to `most` messages: the first that comes within `timeout` seconds, then what comes with
        it within GATHER_S. librdkafka's consume(n, timeout) waits out its whole timeout unless n
        messages come, so a stream slower than n per timeout waited that long at every poll (the
        service's 200 ms); returning each message at once made ~10x more polls at 2,000 lines/s,
        each with the loop's work around it (py-spy of the service, bench.kafka_consume --only delay)."""
        first = self._c.poll(timeout)  # rebalance callbacks are served inside it, as in consume
        if first is None:
            return []
        if most <= 1:
            return [first]
        return [first, *self._c.consume(num_messages=most - 1, timeout=GATHER_S)]

    def seek(self, tp: TopicPartition, offset: int) -> None:
        if self._assign_due is not None and tp in self._assign_due:
            self._assign_due[tp] = offset  # where the one assign() of the next poll starts it
            return
        self._seeks[tp] = offset
        self._apply_seeks()

    def _apply_seeks(self) -> None:
        if not self._seeks:
            return
        from confluent_kafka import TopicPartition as CTP

        for tp, offset in list(self._seeks.items()):
            if tp not in self._assigned:
                del self._seeks[tp]
                continue
            try:
                self._c.seek(CTP(tp.topic, tp.partition, offset))
            except Exception:
                continue  # partition not fetching yet (just assigned): tried again at the next poll
            del self._seeks[tp]

    def pause(self, *tps: TopicPartition) -> None:
        from confluent_kafka import TopicPartition as CTP

        tps = tuple(tp for tp in tps if tp in self._assigned)
        if tps:
            self._c.pause([CTP(tp.topic, tp.partition) for tp in tps])
            self._paused |= set(tps)

    def resume(self, *tps: TopicPartition) -> None:
        from confluent_kafka import TopicPartition as CTP

        tps = tuple(tp for tp in tps if tp in self._assigned)
        if tps:
            self._c.resume([CTP(tp.topic, tp.partition) for tp in tps])
            self._paused -= set(tps)

    def paused(self) -> set[TopicPartition]:
        return set(self._paused)

    def highwater(self, tp: TopicPartition) -> int | None:
        from confluent_kafka import TopicPartition as CTP

        try:
            _, high = self._c.get_watermark_offsets(CTP(tp.topic, tp.partition), cached=True)
        except Exception:
            return None
        return high if high is not None and high >= 0 else None

    def end_offsets(self, tps, timeout_ms: int = 5000) -> dict[TopicPartition, int]:
        from confluent_kafka import TopicPartition as CTP

        out = {}  # asked once: the service's lag asks with a 1 s bound inside its loop (run/partition_ends.py)
        for tp in tps:
            _, high = self._c.get_watermark_offsets(CTP(tp.topic, tp.partition), timeout=timeout_ms / 1000)
            out[tp] = high
        return out

    # --- ranges (replay --from-kafka) ---------------------------------------------------------

    def assign(self, tps) -> None:
        """Manual assignment (a range of replay --from-kafka), made at the next poll so that the seeks
        that follow become its start offsets: one librdkafka assign with them. Assigning at once
        (at the stored offset) and again at each seek let a fetch, or the position, of the first
        assignment win now and then: a range read 0 of its 200 messages (a rare CI failure of
        tests/test_kafka_service.py::test_replay_from_kafka_reads_only_the_time_or_offset_range)."""
        from confluent_kafka import OFFSET_STORED

        self._assigned = set(tps)
        self._assign_due = {tp: OFFSET_STORED for tp in tps}

    def _make_due_assign(self) -> None:
        if self._assign_due is None:
            return
        from confluent_kafka import TopicPartition as CTP

        self._assigned_at, self._assign_due = self._assign_due, None
        self._c.assign([CTP(tp.topic, tp.partition, at) for tp, at in self._assigned_at.items()])

    def position(self, tp: TopicPartition) -> int:
        from confluent_kafka import TopicPartition as CTP

        if tp in self._seeks:
            return self._seeks[tp]
        if self._assign_due is not None and tp in self._assign_due:
            return self._assign_due[tp]
        (got,) = self._c.position([CTP(tp.topic, tp.partition)])
        if got.offset < 0 and self._assigned_at is not None:
            return self._assigned_at.get(tp, -1)  # nothing fetched yet: where assign() starts it
        return got.offset if got.offset >= 0 else -1

    def beginning_offsets(self, tps) -> dict[TopicPartition, int]:
        return {tp: self._watermarks(tp, 10.0)[0] for tp in tps}

    def _watermarks(self, tp: TopicPartition, timeout: float) -> tuple[int, int]:
        """(low, high) of the partition from its leader, asked again while the answer is not an offset."""
        from confluent_kafka import TopicPartition as CTP

        return _asked_again(lambda: self._c.get_watermark_offsets(CTP(tp.topic, tp.partition), timeout=timeout),
                            lambda got: got is not None and got[0] >= 0 and got[1] >= 0,
                            f"the first and end offsets of {tp.topic}/{tp.partition}")

    def offsets_for_times(self, wanted: dict[TopicPartition, int]) -> dict[TopicPartition, OffsetAndTimestamp | None]:
        """The first offset at or after each time, None where no message is that late. A partition
        answered with an error (a leader's offset not yet available: OFFSET_NOT_AVAILABLE, KIP-207) is
        asked again: read as None, it ended a --since range before it began (a rare CI failure of
        test_replay_from_kafka_reads_only_the_time_or_offset_range: 0 of 600 lines, exit 0)."""
        from confluent_kafka import TopicPartition as CTP

        found = _asked_again(
            lambda: self._c.offsets_for_times([CTP(tp.topic, tp.partition, ms) for tp, ms in wanted.items()],
                                              timeout=10.0),
            lambda got: all(p.error is None for p in got), "the offsets of --since/--until")
        return {TopicPartition(p.topic, p.partition): (OffsetAndTimestamp(p.offset, -1, -1) if p.offset >= 0 else None)
                for p in found}

    # --- offsets ------------------------------------------------------------------------------

    def committed(self, tp: TopicPartition, metadata: bool = False, timeout_ms: int = 10_000):
        from confluent_kafka import TopicPartition as CTP

        (got,) = self._c.committed([CTP(tp.topic, tp.partition)], timeout=timeout_ms / 1000)
        if got.offset < 0:
            return None
        if metadata:
            return OffsetAndMetadata(got.offset, got.metadata or "", -1)
        return got.offset

    def commit(self, offsets: dict[TopicPartition, OffsetAndMetadata], timeout_ms: int | None = None) -> None:
        """Commit `offsets`, waiting at most `timeout_ms` (None: until a broker answers), then
        KafkaTimeoutError, as kafka-python's commit(timeout_ms=...) raises. librdkafka's synchronous
        commit has no time limit of its own (it waits an outage out, as Java's commitSync), so it
        runs on a thread of its own and is waited for; one past its limit goes on there, and until
        it ends another commit fails at once (no pile of waiting threads, no older offsets landing
        after newer ones)."""
        from confluent_kafka import TopicPartition as CTP
        from kafka.errors import KafkaTimeoutError

        if not offsets:
            return
        # metadata only when there is some: librdkafka's TopicPartition (2.16) refuses None for it
        parts = [CTP(tp.topic, tp.partition, om.offset, metadata=om.metadata) if om.metadata
                 else CTP(tp.topic, tp.partition, om.offset) for tp, om in offsets.items()]
        if timeout_ms is None:
            self._c.commit(offsets=parts, asynchronous=False)
            return
        if self._commit_waiting is not None and not self._commit_waiting.wait(0):
            raise KafkaTimeoutError("an earlier offset commit is still waiting for a broker")
        waiting = self._commit_waiting = _Waiting(lambda: self._c.commit(offsets=parts, asynchronous=False))
        if not waiting.wait(timeout_ms / 1000):
            raise KafkaTimeoutError(f"offset commit not answered within {timeout_ms / 1000:g} s")
        self._commit_waiting = None
        waiting.result()

    async def commit_async(self, offsets) -> None:
        # a revocation's commit (inside poll): bounded like the service's own commits
        self.commit(offsets, timeout_ms=REVOCATION_COMMIT_MS)

    def close(self, autocommit: bool = False, timeout_ms: int | None = None) -> None:
        waiting = self._commit_waiting
        if waiting is not None and not waiting.wait((timeout_ms or 0) / 1000):
            # a commit still inside librdkafka: destroying the client under it is not safe; the
            # process ends without (the group drops this member at its session timeout)
            log.warning("consumer not closed: an offset commit still waits for a broker")
            return
        self._c.close()


# How long a poll gathers messages after its first one (a backlog fills a poll at once).
GATHER_S = 0.05
ASK_TRIES = 6  # an offsets request answered with an error is asked again, after 0.1, 0.2, ... 1.6 s


def _asked_again(ask, good, what: str):
    """`ask()`'s answer once `good(answer)`, asked again with backoff while it is not (librdkafka
    answers an offsets request with a per-partition error, or an invalid offset, while a partition's
    leader is not ready); then librdkafka's error, or a KafkaException saying what was asked."""
    import time

    from confluent_kafka import KafkaException

    last: Exception | None = None
    for attempt in range(ASK_TRIES):
        try:
            got = ask()
        except KafkaException as exc:
            last = exc
        else:
            if good(got):
                return got
            errors = [p.error for p in got if getattr(p, "error", None) is not None] if isinstance(got, list) else []
            last = KafkaException(errors[0]) if errors else KafkaException(f"no answer for {what}: {got!r}")
        if attempt + 1 < ASK_TRIES:
            log.info("kafka offsets asked again", what=what, error=str(last))
            time.sleep(0.1 * 2 ** attempt)
    raise last

# How long a commit on revocation may wait (it runs inside poll, where the loop stands still).
REVOCATION_COMMIT_MS = 10_000


class _Waiting:
    """A blocking call on a daemon thread of its own (one that outlives its wait must not hold the
    process at exit): `wait(seconds)` whether it ended, `result()` its return or its exception."""

    def __init__(self, call):
        import threading

        self._done = threading.Event()
        self._value: Any = None
        self._error: BaseException | None = None

        def run():
            try:
                self._value = call()
            except BaseException as exc:  # handed to result()
                self._error = exc
            finally:
                self._done.set()

        threading.Thread(target=run, name="gangscope-kafka-commit", daemon=True).start()

    def wait(self, seconds: float) -> bool:
        return self._done.wait(seconds)

    def result(self) -> Any:
        if self._error is not None:
            raise self._error
        return self._value
