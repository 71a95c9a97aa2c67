"""`gangscope consume` end to end against the real Kafka and OpenSearch.

1. throughput: N Fluent Bit records (bench.corpus's default mix: ordinary lines, step lines,
   tracebacks) are produced first; then ONE consumer process reads them; lines/s from its
   first line read to the last one acknowledged by OpenSearch (from its /metrics).
2. delay: once the service has joined its group (/healthz), a producer sends R lines/s for D
   seconds; every 100th line is a probe (an NCCL watchdog line, which makes an error record at
   once); a poller searches OpenSearch for the probes every 50 ms; delay = searchable - the time
   the schedule said to send the probe (a producer behind its schedule counts; how far behind it
   was is printed), p50 / p99.

    eval "$(services/up)"; python -m bench.kafka_consume --lines 300000 --rate 10000 --seconds 20
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from statistics import quantiles

from bench.corpus import generate
from gangscope.parsers import envelopes, times
from gangscope.pipeline.sinks import indices
from gangscope.pipeline.sources.files import discover

PROBE = ("[E ProcessGroupNCCL.cpp:475] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, "
         "OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600039 milliseconds before timing out. probe={k}")
_PROBE_RE = re.compile(r"probe=(\d+)")


def corpus_pods(lines: int, pods: int = 16, mix: str = "default") -> list[tuple[bytes, dict, list[dict]]]:
    """The CRI corpus of that mix, per pod: its key (pod uid), its Fluent Bit `kubernetes` block and its
    lines in order, each as a Fluent Bit record's fields (time, stream, _p, log)."""
    root = Path(tempfile.mkdtemp(prefix="gangscope-bench-"))
    try:
        generate(root, lines, mix, pods=pods)
        sources, _ = discover([str(root)])
        out = []
        for source in sources:
            ident = source.identity
            kube = {"pod_name": ident.pod, "namespace_name": ident.namespace, "pod_id": ident.pod_uid,
                    "container_name": ident.container, "labels": {}}
            fields = []
            for path in source.paths:
                with open(path, encoding="utf-8") as f:
                    for raw in f:
                        env = envelopes.decode_cri(raw.rstrip("\n"))
                        if env is not None:
                            fields.append({"time": env.time, "stream": env.stream, "_p": "P" if env.partial else "F",
                                           "log": env.text})
            out.append(((ident.pod_uid or ident.pod).encode(), kube, fields))
        return out
    finally:
        shutil.rmtree(root, ignore_errors=True)


def corpus_records(lines: int, pods: int = 16, mix: str = "default") -> list[tuple[bytes, bytes]]:
    """The CRI corpus of that mix as Fluent Bit records (key = pod uid), in each pod's order."""
    return [(key, json.dumps({"@timestamp": times.seconds(f["time"]), **f, "kubernetes": kube}).encode())
            for key, kube, fields in corpus_pods(lines, pods, mix) for f in fields]


class Producer:
    """The bench's producer: librdkafka's (confluent-kafka) when installed, kafka-python's otherwise.
    What it costs is CPU the consumer under test does not get on a small machine (kafka-python's
    reached ~2,000 of the 10,000 lines/s asked on 2 loaded cores), so the cheaper one is used."""

    def __init__(self, bootstrap: str, linger_ms: int = 5):
        try:
            from confluent_kafka import Producer as Librdkafka
        except ImportError:
            from kafka import KafkaProducer

            self._kp = KafkaProducer(bootstrap_servers=bootstrap, acks=1, linger_ms=linger_ms, batch_size=1 << 20)
            self._rd = None
            self.name = "kafka-python"
        else:
            self._rd = Librdkafka({"bootstrap.servers": bootstrap, "acks": 1, "linger.ms": linger_ms,
                                   "batch.size": 1 << 20, "queue.buffering.max.messages": 1_000_000})
            self.name = "confluent-kafka"

    def send(self, topic: str, key: bytes, value: bytes) -> None:
        if self._rd is None:
            self._kp.send(topic, key=key, value=value)
            return
        while True:
            try:
                self._rd.produce(topic, value=value, key=key)
                break
            except BufferError:  # its queue is full: let it deliver
                self._rd.poll(0.05)
        self._rd.poll(0)

    def flush(self) -> None:
        if self._rd is None:
            self._kp.flush()
        else:
            self._rd.flush()

    def close(self) -> None:
        if self._rd is None:
            self._kp.close()
        else:
            self._rd.flush()


def create_topic(bootstrap: str, name: str, partitions: int) -> None:
    from kafka.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=1)])
    admin.close()


def start_service(bootstrap: str, url: str, topic: str, prefix: str, log: Path) -> tuple[subprocess.Popen, str]:
    cmd = [sys.executable, "-c", "from gangscope.pipeline.run.cli import main; raise SystemExit(main())", "consume",
           "--bootstrap", bootstrap, "--opensearch", url, "--topic", topic, "--index-prefix", prefix,
           "--group", f"{topic}-bench", "--metrics-port", "0", "--max-poll-records", "10000",
           "--dead-letter-topic", "", "--commit-interval", "1"]
    proc = subprocess.Popen(cmd, stdout=open(log, "wb"), stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for line in log.read_text().splitlines():
            if '"event": "metrics"' in line:
                return proc, json.loads(line)["url"]
        time.sleep(0.1)
    proc.kill()
    raise SystemExit(f"the service did not start; see {log}")


def wait_joined(proc: subprocess.Popen, murl: str, log: Path, seconds: float = 120) -> None:
    """Until the service owns its partitions (/healthz says joined): its indices made, its group
    joined. A fixed wait started the producer before that on a loaded machine (the first probes
    then waited for the start, not for the stream)."""
    health = murl.rsplit("/", 1)[0] + "/healthz"
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        try:
            with urllib.request.urlopen(health, timeout=10) as answer:
                if json.loads(answer.read()).get("joined"):
                    return
        except (OSError, ValueError):  # 503 while not ready (urllib raises HTTPError, an OSError)
            pass
        time.sleep(0.2)
    proc.kill()
    raise SystemExit(f"the service did not join its group within {seconds:g} s; see {log}")


def metric(text: str, name: str) -> float:
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name) and not line.startswith("#"):
            total += float(line.rsplit(" ", 1)[1])
    return total


def unacknowledged(murl: str) -> int | None:
    """The records the service made that OpenSearch has not acknowledged yet (its /healthz), None when
    it does not say."""
    health = murl.rsplit("/", 1)[0] + "/healthz"
    try:
        with urllib.request.urlopen(health, timeout=10) as answer:
            body = answer.read()
    except urllib.error.HTTPError as exc:  # 503 while not healthy: the body still says
        body = exc.read()
    except OSError:
        return None
    try:
        return json.loads(body).get("unacknowledged")
    except ValueError:
        return None


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def opensearch_cpu(url: str) -> float | None:
    """CPU seconds the OpenSearch cluster's processes have used so far (_nodes/stats/process), None
    when it does not answer. On a small machine OpenSearch shares the cores with the consumer: what
    it spends per record is part of the consumer's speed (300k realistic lines at load 8-27, over the
    throughput run's span: 4.9-5.5 s of OpenSearch CPU, 73-82 us per record, beside the consumer's
    5.0-5.8 s; the same step and error records bulk-indexed alone, a final refresh included: 45-50 us
    each, the same with or without their null fields, refreshed each second or once, in bulks of 1,000
    to 5,000; making a run's indices 0.6-0.7 s before its first line, deleting them 0.35 s)."""
    try:
        with urllib.request.urlopen(f"{url}/_nodes/stats/process?filter_path=nodes.*.process.cpu.total_in_millis",
                                    timeout=10) as answer:
            nodes = json.loads(answer.read()).get("nodes") or {}
        return sum(n["process"]["cpu"]["total_in_millis"] for n in nodes.values()) / 1000
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def throughput(args, url: str) -> dict:
    """Lines/s of one consumer process from its first line read to the last one indexed, and lines
    per CPU-second of that process over the same span; OpenSearch's CPU over that span (per record
    indexed) and the tail: from the last line read to the last record acknowledged (the records
    curation held, and the bulks in flight or waiting, indexed while the consumer has nothing to read)."""
    mix = getattr(args, "mix", "default")
    print(f"corpus: {args.lines:,} lines, mix {mix} ...", flush=True)
    records = corpus_records(args.lines, mix=mix)
    topic = f"bench-throughput-{uuid.uuid4().hex[:8]}"
    create_topic(args.bootstrap, topic, args.partitions)
    producer = Producer(args.bootstrap, linger_ms=50)
    t = time.perf_counter()
    for key, value in records:
        producer.send(topic, key, value)
    producer.flush()
    producer.close()
    print(f"produced {len(records):,} records in {time.perf_counter() - t:.1f} s ({producer.name})", flush=True)
    prefix = f"bench-{uuid.uuid4().hex[:8]}-"
    log = Path(tempfile.mkdtemp()) / "service.log"
    proc, murl = start_service(args.bootstrap, url, topic, prefix, log)
    try:
        first = None
        # The end is the last record acknowledged, not the last line read: a lag of 0 says every line
        # was read, while what the curation still holds (open traces, a bar's steps) is indexed after
        # (a run stopped at the lag saw 46,313 of 66,188 records indexed and counted neither their time
        # nor their CPU). So the count of records out must stay the same for a second once every line
        # is read; the figures are taken where it reached its last value.
        last_out, at_last = -1.0, None
        read_all = None  # when every line was read
        while True:
            text = urllib.request.urlopen(murl, timeout=10).read().decode()
            read = metric(text, "gangscope_lines_in_total")
            now = time.perf_counter()
            if read and first is None:
                first = (now, read, cpu_seconds(proc.pid), opensearch_cpu(url))
            if read_all is None and read >= len(records):
                read_all = now
            lag = metric(text, "gangscope_consumer_lag")
            out = metric(text, "gangscope_records_out_total")
            done_reading = read >= len(records) and lag == 0 and metric(text, "gangscope_sink_latency_seconds_count")
            if done_reading:
                # and nothing waiting for OpenSearch or in flight (/healthz): a bulk that took longer than
                # the second below was cut off (45,704 and 48,532 of 66,399 records indexed at load 5-9);
                # a service that does not say (an older commit's) is taken at the second alone
                done_reading = unacknowledged(murl) in (0, None)
            if out != last_out or not done_reading:
                last_out, at_last = out, (now, cpu_seconds(proc.pid), opensearch_cpu(url))
            elif now - at_last[0] >= 1.0:
                break
            # each look at /metrics costs the consumer CPU (a thread and a render per scrape: 5 a second
            # were 4.8-5.5 % of its busy samples, py-spy): 5 a second only near the first line and the last
            time.sleep(0.2 if first is None or read >= 0.95 * len(records) else 1.0)
        cpu = at_last[1] - first[2]
        seconds = at_last[0] - first[0]
        lines = len(records) - first[1]
        os_cpu = at_last[2] - first[3] if at_last[2] is not None and first[3] is not None else None
        tail = at_last[0] - read_all if read_all is not None else None
        print(f"throughput: {lines:,.0f} lines in {seconds:.2f} s = {lines / seconds:,.0f} lines/s, "
              f"{lines / cpu:,.0f} lines per CPU-second of the consumer ({cpu:.1f} s CPU; one consumer process, "
              f"{args.partitions} partitions, {out:,.0f} records indexed)", flush=True)
        if os_cpu is not None:
            print(f"throughput: OpenSearch {os_cpu:.1f} s CPU over the same span ({os_cpu / max(out, 1) * 1e6:,.0f} us "
                  f"per record indexed); {tail:.2f} s from the last line read to the last record acknowledged",
                  flush=True)
        return {"lines": lines, "seconds": seconds, "cpu": cpu, "records": out, "opensearch_cpu": os_cpu, "tail": tail}
    finally:
        proc.terminate()
        proc.wait(60)
        _cleanup(url, prefix)


def delay(args, url: str) -> dict | None:
    topic = f"bench-delay-{uuid.uuid4().hex[:8]}"
    create_topic(args.bootstrap, topic, args.partitions)
    prefix = f"bench-{uuid.uuid4().hex[:8]}-"
    log = Path(tempfile.mkdtemp()) / "service.log"
    proc, murl = start_service(args.bootstrap, url, topic, prefix, log)
    # The corpus's pods as they are, each its own lines in its order, the pods' lines interleaved one
    # by one; every 100th line a probe of the pod whose turn it is. (The lines of all pods dealt to 16
    # pods in turn made each pod a mix of every framework and of tracebacks cut by other lines, which
    # no pod prints: the curation held Trainer dicts it could never number and took most of the
    # consumer's CPU on them.)
    pods = corpus_pods(args.rate * args.seconds, mix=getattr(args, "mix", "default"))
    read_at = [0] * len(pods)
    sent: dict[int, float] = {}  # probe -> when the schedule said to send it (rate x lines before it)
    lag: list[float] = []  # how late after that the producer actually sent each probe
    found: dict[int, float] = {}
    stop = threading.Event()
    client = indices.connect(url)
    alias = indices.alias_name("error", prefix)

    def poll() -> None:
        while not stop.is_set() or len(found) < len(sent):
            # a copy first (dict() does not let the producer's thread in): iterating `sent` while
            # the producer adds to it raised in this thread, which then found nothing more
            pending = [t for k, t in dict(sent).items() if k not in found]
            if pending:
                oldest = min(pending)
                since = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(oldest - 1)) + "Z"
                # the probes only (the noise makes error records too): a search that fetched every
                # error since the oldest pending probe, 20 times a second, was OpenSearch's CPU too
                query = {"bool": {"filter": [{"range": {"time": {"gte": since}}}, {"match": {"line": "probe"}}]}}
                try:
                    res = client.search(index=alias, body={"query": query, "size": 10000, "_source": ["line"]},
                                        ignore_unavailable=True)
                    now = time.time()
                    for hit in res["hits"]["hits"]:
                        m = _PROBE_RE.search(hit["_source"].get("line", ""))
                        if m and int(m.group(1)) not in found:
                            found[int(m.group(1))] = now
                except Exception:
                    pass
            if stop.is_set() and time.time() - stopped_at > 30:
                return
            time.sleep(0.05)

    stopped_at = 0.0
    poller = threading.Thread(target=poll, daemon=True)
    producer = Producer(args.bootstrap)
    wait_joined(proc, murl, log)
    poller.start()
    start = time.time()
    n = 0
    probes = 0
    try:
        while time.time() - start < args.seconds:
            due = int((time.time() - start) * args.rate)  # paced by the clock: catch up after a slow send
            if n >= due:
                time.sleep(0.002)
                continue
            for _ in range(min(due - n, 1000)):
                turn = n % len(pods)
                key, kube, lines = pods[turn]
                now = time.time()
                ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1e9):09d}Z"
                if n % 100 == 0:
                    line = {"stream": "stderr", "_p": "F", "log": PROBE.format(k=probes)}
                    # from the time it was due, not from when the producer got to it: a producer
                    # behind its schedule (CPU taken by the rest) is delay a reader of the logs sees
                    sent[probes] = start + n / args.rate
                    lag.append(now - sent[probes])
                    probes += 1
                else:
                    line = lines[read_at[turn] % len(lines)]
                    read_at[turn] += 1
                rec = {"@timestamp": now, "time": ts, "stream": line["stream"], "_p": line["_p"], "log": line["log"],
                       "kubernetes": kube}
                producer.send(topic, key, json.dumps(rec).encode())
                n += 1
        producer.flush()
        rate = n / (time.time() - start)
        stopped_at = time.time()
        stop.set()
        poller.join(60)
        delays = sorted(found[k] - sent[k] for k in found)
        if len(delays) < 2:
            print(f"delay: only {len(delays)} of {len(sent)} probes became searchable; see {log}")
            return None
        q = quantiles(delays, n=100)
        behind = quantiles(lag, n=100)[98] if len(lag) > 1 else 0.0
        # the same without the probes due in the first seconds: the indices are new then (made at the
        # service's start), and OpenSearch's first mapping updates (a step record's new metric names)
        # held the first bulks 1-2 s at load 12, which the probes behind them waited out too
        settle = getattr(args, "settle", 5.0)
        later = sorted(found[k] - sent[k] for k in found if sent[k] - start >= settle)
        qs = quantiles(later, n=100) if len(later) > 1 else None
        after = f"; due after the first {settle:g} s: p50 {qs[49]:.3f} s, p99 {qs[98]:.3f} s" if qs else ""
        print(f"delay: produced {n:,} lines at {rate:,.0f} lines/s (the producer's p99 behind its schedule "
              f"{behind:.3f} s); {len(found)}/{len(sent)} probes searchable; "
              f"p50 {q[49]:.3f} s, p99 {q[98]:.3f} s, max {delays[-1]:.3f} s{after}", flush=True)
        return {"rate": rate, "p50": q[49], "p99": q[98], "max": delays[-1], "found": len(found), "sent": len(sent),
                "behind_p99": behind, "settled_p50": qs[49] if qs else None, "settled_p99": qs[98] if qs else None}
    finally:
        producer.close()
        proc.terminate()
        proc.wait(60)
        _cleanup(url, prefix)


def _cleanup(url: str, prefix: str) -> None:
    req = urllib.request.Request(f"{url}/{prefix}*?expand_wildcards=all", method="DELETE")
    try:
        urllib.request.urlopen(req, timeout=30).close()
    except Exception:
        pass


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bootstrap", default=os.environ.get("GANGSCOPE_KAFKA_BOOTSTRAP"))
    ap.add_argument("--opensearch", default=os.environ.get("GANGSCOPE_OPENSEARCH_URL"))
    ap.add_argument("--lines", type=int, default=300_000)
    ap.add_argument("--mix", default="default", help="bench.corpus mix of the throughput run")
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--rate", type=int, default=10_000, help="lines/s of the delay run")
    ap.add_argument("--seconds", type=int, default=20, help="length of the delay run")
    ap.add_argument("--settle", type=float, default=5.0,
                    help="the delay run also reports p50/p99 of the probes due after this many seconds (the "
                         "indices are new at the start: OpenSearch's first mapping updates hold the first bulks)")
    ap.add_argument("--only", choices=("throughput", "delay"))
    args = ap.parse_args()
    if not args.bootstrap or not args.opensearch:
        raise SystemExit("set GANGSCOPE_KAFKA_BOOTSTRAP and GANGSCOPE_OPENSEARCH_URL (eval \"$(services/up)\")")
    if args.only != "delay":
        throughput(args, args.opensearch.rstrip("/"))
    if args.only != "throughput":
        delay(args, args.opensearch.rstrip("/"))


if __name__ == "__main__":
    main()
