"""`gangscope replay --from-kafka TOPIC`: curate a range of a pod-log topic as a batch.

The range is given by message times (`--since` / `--until`) or offsets; it is read with a
consumer group of its own (default `gangscope-replay-<random>`), so the live service's offsets
are untouched, and the run ends at the end of the range. It reads with the backend `consume` would
(`--kafka-client`, pipeline/sources/kafka_client.py). The records are those `replay` makes
of the same lines read from files: each partition's lines are curated in order, every open
record is closed at the end, then progress, stragglers and diagnoses as in pipeline/replay.py.
"""

from __future__ import annotations

import uuid

from gangscope.parsers import times
from gangscope.pipeline.run import replay as replay_mod
from gangscope.pipeline.curate.stats import CurationLimits
from gangscope.pipeline.errors import UsageError
from gangscope.pipeline.correlate.progress import DerivedProgress
from gangscope.pipeline.curate.partition import LogPartition
from gangscope.pipeline.sources import kafka as ksrc
from gangscope.pipeline.sources import kafka_auth


def parse_time(text: str | None, flag: str) -> int | None:
    """RFC 3339 (or epoch seconds) -> epoch milliseconds, as Kafka's timestamps count."""
    if text is None:
        return None
    try:
        return int(float(text) * 1000)
    except ValueError:
        pass
    seconds = times.seconds(text)
    if seconds is None:
        raise UsageError(f"{flag}: want an RFC 3339 time (2026-03-02T10:00:00Z) or epoch seconds, got {text!r}")
    return int(seconds * 1000)


class _Settings:
    """The few settings the Kafka clients need, from replay's flags and the environment."""

    def __init__(self, bootstrap: str, group: str, kafka_client: str):
        import os

        self.bootstrap = bootstrap
        self.group = group
        self.kafka_client = kafka_client
        self.client_id = "gangscope-replay"
        self.start = "earliest"
        self.max_poll_records = 10_000
        self.security_protocol = os.environ.get("GANGSCOPE_SECURITY_PROTOCOL", "PLAINTEXT")
        self.sasl_mechanism = os.environ.get("GANGSCOPE_SASL_MECHANISM")
        self.sasl_username = os.environ.get("GANGSCOPE_SASL_USERNAME")
        self.sasl_password = _sasl_password(os.environ)
        self.ssl_cafile = os.environ.get("GANGSCOPE_SSL_CAFILE")
        self.ssl_certfile = os.environ.get("GANGSCOPE_SSL_CERTFILE")
        self.ssl_keyfile = os.environ.get("GANGSCOPE_SSL_KEYFILE")
        self.ssl_check_hostname = os.environ.get("GANGSCOPE_SSL_CHECK_HOSTNAME", "true").lower() not in ("0", "false")


def _sasl_password(environ) -> str | None:
    """GANGSCOPE_SASL_PASSWORD, or the first line of the file GANGSCOPE_SASL_PASSWORD_FILE (or
    GANGSCOPE_KAFKA_SASL_PASSWORD_FILE) names, as `consume` reads them (pipeline/run/config.py)."""
    from gangscope.pipeline.run.config import BY_NAME, read_secret_file

    password = environ.get("GANGSCOPE_SASL_PASSWORD")
    name = next((n for n in BY_NAME["sasl_password_file"].env_names if environ.get(n)), None)
    if name is None:
        return password
    if password:
        raise UsageError(f"--from-kafka: GANGSCOPE_SASL_PASSWORD and {name} are both set: set one")
    return read_secret_file(environ[name], f"--from-kafka: {name}")


def run(options: replay_mod.ReplayOptions, write, *, topic: str, bootstrap: str | None, group: str | None = None,
        since: str | None = None, until: str | None = None, from_offset: int | None = None,
        to_offset: int | None = None, kafka_client: str | None = None) -> replay_mod.ReplayResult:
    """Curate the range of `topic`, handing each batch of records to `write`. kafka_client: the
    backend (kafka-python, confluent; None or auto: GANGSCOPE_KAFKA_CLIENT, else as `consume`'s auto)."""
    import os

    from kafka.structs import OffsetAndMetadata

    from gangscope.pipeline.sources.kafka_client import client_errors, open_consumer, resolve_client

    if not bootstrap:
        raise UsageError("--from-kafka: no Kafka bootstrap servers (--bootstrap or GANGSCOPE_KAFKA_BOOTSTRAP)")
    since_ms, until_ms = parse_time(since, "--since"), parse_time(until, "--until")
    client = resolve_client(kafka_client or os.environ.get("GANGSCOPE_KAFKA_CLIENT"), "--from-kafka")
    settings = _Settings(bootstrap, group or f"gangscope-replay-{uuid.uuid4().hex[:8]}", client)
    errors = client_errors(client)

    kafka_auth.check(settings, "--from-kafka")
    try:
        consumer = open_consumer(settings, client, ksrc.consumer_options(settings))
    except errors as exc:
        raise UsageError(f"--from-kafka: cannot reach Kafka at {bootstrap} ({exc})") from None
    batch_run = replay_mod.Replay(options, write, None)
    result = batch_run.result
    try:
        rng = ksrc.resolve_range(consumer, topic, since_ms, until_ms, from_offset, to_offset)
        batch_run.load_events(options.events)
        attempt_of = replay_mod.attempt_lookup_of(batch_run.attempts)
        parts: dict = {}
        for messages in ksrc.read_range(consumer, rng):
            tp = (messages[0].topic, messages[0].partition)
            part = parts.get(tp)
            if part is None:
                limits = CurationLimits(max_containers=options.max_containers)
                part = parts[tp] = LogPartition(attempt_of, result.curation, limits, progress=DerivedProgress())
                part.curator.source = f"{tp[0]}/{tp[1]}"  # what a failure counted in its curation names as its file
            out: list = []
            touched = set()
            for m in messages:
                result.curation.lines += 1
                try:
                    env = ksrc.decode_log(m.value)
                except ksrc.Undecodable:
                    result.curation.unreadable_lines += 1
                    continue
                except Exception as exc:  # a message the decoder fails on: counted, skipped (pipeline/isolation.py)
                    result.read.failures.add("sources", exc, file=f"{m.topic}/{m.partition}", position=m.offset)
                    continue
                touched.add(part.feed(m.offset, env, out))
            part.touched(touched, 0.0)
            batch_run.deliver(out)
        for part in parts.values():
            out = []
            part.close_all(out)
            batch_run.deliver(out)
            batch_run.rank_progress.park(part.progress)
        result.pods = len({key for part in parts.values() for key in part.containers()})
        batch_run.finish()
        if rng.stop:
            consumer.commit({tp: OffsetAndMetadata(off, "", -1) for tp, off in rng.stop.items()})
    except errors as exc:
        raise UsageError(f"--from-kafka {topic}: {exc}") from None
    finally:
        consumer.close(autocommit=False)
    return result
