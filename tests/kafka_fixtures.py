"""Helpers of the Kafka service tests: fixtures as Fluent Bit records, producing, running the service,
reading the index back, and the same files replayed by `replay` for comparison."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from gangscope.parsers import envelopes, times
from gangscope.pipeline.sinks import indices
from gangscope.pipeline.sources.files import discover

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = [ROOT / "fixtures" / "runs", ROOT / "fixtures" / "dialects"]


def fluentbit_records(paths=FIXTURES, host: str | None = None) -> list[tuple[bytes, bytes]]:
    """(key, value) per log line of the kubelet CRI files under `paths`, as Fluent Bit's Kafka
    output writes them after `multiline.parser cri` and the kubernetes filter (FORMATS.md 1.4-1.5):
    P fragments joined into one `_p: F` record with the first fragment's time; keyed by pod uid.
    Pods are interleaved by time, each pod's lines in file order."""
    sources, problems = discover([str(p) for p in paths])
    assert not problems, problems
    out: list[tuple[float, int, bytes, bytes]] = []
    n = 0
    for source in sources:
        ident = source.identity
        kube = {"pod_name": ident.pod, "namespace_name": ident.namespace, "pod_id": ident.pod_uid,
                "labels": {}, "container_name": ident.container}
        if host:
            kube["host"] = host
        key = (ident.pod_uid or ident.pod).encode()
        # Fluent Bit joins the P fragments as bytes (a character the runtime cut between two 16 KiB chunks comes out
        # whole) and its multiline parser flushes a chain no F line ends (a container's last line without its newline)
        pending: dict[str, list] = {}

        def emit(ts: str, stream: str, data: bytes) -> None:
            nonlocal n
            seconds = times.seconds(ts)
            record = {"@timestamp": seconds, "time": ts, "stream": stream, "_p": "F",
                      "log": data.decode("utf-8", "replace"), "kubernetes": kube}
            out.append((seconds, n, key, json.dumps(record).encode()))
            n += 1

        for path in source.paths:
            with open(path, "rb") as f:
                for raw in f:
                    env = envelopes.decode_cri(raw.rstrip(b"\n").decode("utf-8", "replace"))
                    assert env is not None, raw
                    data = raw.rstrip(b"\n").split(b" ", 3)[3]
                    if env.partial:
                        pending.setdefault(env.stream, [env.time]).append(data)
                        continue
                    first = pending.pop(env.stream, None)
                    emit(first[0] if first else env.time, env.stream, b"".join(first[1:]) + data if first else data)
        for stream, (ts, *chunks) in pending.items():
            emit(ts, stream, b"".join(chunks))
    out.sort(key=lambda item: (item[0], item[1]))
    return [(key, value) for _, _, key, value in out]


def produce(bootstrap: str, topic: str, messages: list[tuple[bytes | None, bytes]]) -> None:
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=20, batch_size=256 * 1024)
    for key, value in messages:
        producer.send(topic, key=key, value=value)
    producer.flush()
    producer.close()


def service_command(bootstrap: str, opensearch: str, topic: str, prefix: str, group: str, *extra: str) -> list[str]:
    return [sys.executable, "-c", "from gangscope.pipeline.run.cli import main; raise SystemExit(main())", "consume",
            "--bootstrap", bootstrap, "--opensearch", opensearch, "--topic", topic, "--index-prefix", prefix,
            "--group", group, "--metrics-port", "0", "--flush-idle", "1", "--attempt-idle", "3",
            "--open-wait", "6",
            "--commit-interval", "0.5", "--dead-letter-topic", f"{topic}-dead", *extra]


def start_service(cmd: list[str], log_path: Path, cwd: Path | None = None) -> subprocess.Popen:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    out = open(log_path, "ab")
    return subprocess.Popen(cmd, stdout=out, stderr=out, stdin=subprocess.DEVNULL, env=env, cwd=cwd)


def documents(url: str, prefix: str) -> dict[str, dict[str, dict]]:
    """kind -> {_id: _source} of every record index of a prefix (refreshed first)."""
    from opensearchpy.helpers import scan

    client = indices.connect(url)
    out: dict[str, dict[str, dict]] = {}
    for kind in indices.KINDS:
        alias = indices.alias_name(kind, prefix)
        if not client.indices.exists(index=alias):
            continue
        client.indices.refresh(index=alias)
        out[kind] = {h["_id"]: h["_source"] for h in scan(client, index=alias, query={"query": {"match_all": {}}})}
    return out


def replay_into(url: str, prefix: str, paths=FIXTURES, events=()) -> None:
    """`replay` of the same files (and event files), into OpenSearch under another prefix."""
    from gangscope.pipeline.run import replay as replay_mod
    from gangscope.pipeline.sinks.opensearch import OpenSearchSink

    sink = OpenSearchSink(url, prefix=prefix, refresh=True, dead_letter=None)
    replay_mod.run(replay_mod.ReplayOptions(paths=[str(p) for p in paths], events=[str(p) for p in events]), sink.write)
    sink.close()


def comparable(docs: dict[str, dict[str, dict]]) -> dict[str, dict[str, dict]]:
    """Documents as both paths must agree on them: all but `source` (the envelope: cri or fluentbit)."""
    return {kind: {i: {k: v for k, v in d.items() if k != "source"} for i, d in by.items()}
            for kind, by in docs.items() if by}


def difference(want: dict, got: dict, limit: int = 5) -> str:
    """What differs between two comparable() results, briefly (for assertion messages)."""
    lines = []
    for kind in sorted(set(want) | set(got)):
        w, g = want.get(kind, {}), got.get(kind, {})
        missing, extra = set(w) - set(g), set(g) - set(w)
        changed = [i for i in set(w) & set(g) if w[i] != g[i]]
        if missing or extra or changed:
            lines.append(f"{kind}: {len(w)} wanted, {len(g)} indexed, {len(missing)} missing, {len(extra)} extra, "
                         f"{len(changed)} changed")
            for i in changed[:limit]:
                fields = sorted(k for k in set(w[i]) | set(g[i]) if w[i].get(k) != g[i].get(k))
                lines.append(f"  {i}: {fields}")
    return "\n".join(lines) or "no difference"


def wait_until(check, timeout: float, every: float = 0.5, what: str = "condition"):
    """Poll `check()` until it returns a truthy value; fail after `timeout` seconds (a deadline, not a speed test)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(every)


def committed_offsets(bootstrap: str, group: str, topic: str) -> dict[int, int | None]:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    try:
        parts = consumer.partitions_for_topic(topic) or set()
        return {p: consumer.committed(TopicPartition(topic, p)) for p in sorted(parts)}
    finally:
        consumer.close(autocommit=False)


def end_offsets(bootstrap: str, topic: str) -> dict[int, int]:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap)
    try:
        tps = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())]
        return {tp.partition: off for tp, off in consumer.end_offsets(tps).items()}
    finally:
        consumer.close()


def split_by_job(messages: list[tuple[bytes, bytes]]) -> tuple[list, list]:
    """The messages of the first half of the jobs, and the rest (each job's lines stay together, so a
    pause between the two is a quiet job, not a traceback cut in two)."""
    from gangscope.pipeline.curate.fluentbit import identity_from_kubernetes
    from gangscope.pipeline.curate.identity import job_of

    jobs = {}
    of = []
    for key, value in messages:
        job = job_of(identity_from_kubernetes(json.loads(value)["kubernetes"]))
        jobs.setdefault(job, len(jobs))
        of.append(jobs[job])
    cut = len(jobs) // 2
    first = [m for m, j in zip(messages, of) if j < cut]
    second = [m for m, j in zip(messages, of) if j >= cut]
    return first, second


# --- servers of a test's own, and the service's metrics (tests/test_faults.py) ----------------


def free_ports(n: int) -> list[int]:
    """`n` distinct free ports of the loopback: the sockets are held open together while the kernel picks
    them (one bound and closed at a time may be given the same port twice: CI once drew a Kafka port equal to
    its controller port, and services/up refused it)."""
    import socket

    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


class PrivateServer:
    """A Kafka broker or OpenSearch node of one test's own: services/up with ports and a run folder
    of its own, so the test may stop, restart or starve it without touching the shared servers.
    `settings`: more services/up environment (GANGSCOPE_OPENSEARCH_EXTRA_SETTINGS, say)."""

    PORTS = {"kafka": ("GANGSCOPE_KAFKA_PORT", "GANGSCOPE_KAFKA_CONTROLLER_PORT", "GANGSCOPE_KAFKA_SASL_PORT"),
             "opensearch": ("GANGSCOPE_OPENSEARCH_PORT", "GANGSCOPE_OPENSEARCH_TRANSPORT_PORT")}
    ADDRESS = {"kafka": "GANGSCOPE_KAFKA_BOOTSTRAP", "opensearch": "GANGSCOPE_OPENSEARCH_URL"}

    def __init__(self, name: str, **settings: str):
        import tempfile

        self.name = name
        self.run_dir = Path(tempfile.mkdtemp(prefix=f"gangscope-private-{name}-"))
        self.env = dict(os.environ, GANGSCOPE_SERVICES_RUN=str(self.run_dir),
                        **{var: str(port) for var, port in zip(self.PORTS[name], free_ports(len(self.PORTS[name])))},
                        **settings)
        self.env.pop(self.ADDRESS[name], None)
        self.address: str | None = None

    def _script(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(ROOT / "services" / args[0]), *args[1:]], env=self.env, capture_output=True,
                              text=True, stdin=subprocess.DEVNULL, timeout=900)

    def up(self) -> str:
        done = self._script("up", self.name)
        if done.returncode != 0:
            logs = "".join(f"\n--- {p}:\n" + p.read_text(errors="replace")[-3000:]
                           for p in sorted(self.run_dir.glob(f"{self.name}/**/*.log")))
            raise AssertionError(f"services/up {self.name} (private) failed:\n{done.stderr[-2000:]}{logs}")
        lines = dict(line.partition("=")[::2] for line in done.stdout.splitlines())
        self.address = lines[self.ADDRESS[self.name]]
        return self.address

    def down(self) -> None:
        done = self._script("down", self.name)
        assert done.returncode == 0, done.stderr

    def remove(self) -> None:
        import shutil

        self._script("down", "--wipe", self.name)
        shutil.rmtree(self.run_dir, ignore_errors=True)


def metric_values(text: str, name: str) -> dict[tuple, float]:
    """Samples of one metric in a /metrics page: sorted label pairs -> value."""
    from prometheus_client.parser import text_string_to_metric_families

    return {tuple(sorted(s.labels.items())): s.value for family in text_string_to_metric_families(text)
            for s in family.samples if s.name == name}


def settled(url: str, prefix: str, want: dict, timeout: float, against: str = "replay's") -> dict:
    """Wait until the index of `prefix` equals `want` (what `against` made); fail with the
    difference if it never does. Returns the index's documents."""
    last: dict = {}

    def same():
        nonlocal last
        last = comparable(documents(url, prefix))
        return last == want

    try:
        wait_until(same, timeout, every=1.0, what=f"the index to equal {against}")
    except AssertionError:
        raise AssertionError(f"index differs from {against}:\n" + difference(want, last)) from None
    return last


def stop(proc: subprocess.Popen, sig=signal.SIGTERM, timeout: float = 60) -> int:
    """Ask the service to stop (SIGTERM) and wait for its exit code."""
    if proc.poll() is None:
        proc.send_signal(sig)
    return proc.wait(timeout)
