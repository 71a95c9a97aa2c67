"""kafka-python against confluent-kafka: the cost of fetching every record of one topic.

The realistic corpus (bench/corpus.py) is produced once as Fluent Bit records to a new topic;
then each client reads all of it in a fresh consumer group, in a child process, and hands every
value over (no curation): CPU seconds of the child from its first record to its last, and wall
time over the same span. kafka-python runs with its defaults and with larger fetches;
confluent-kafka (librdkafka, `pip install confluent-kafka`) is skipped when not installed.

    set -a; . /tmp/work/servers.env; set +a
    python -m bench.kafka_clients --lines 300000
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import uuid

from bench import kafka_consume

_CHILD = r"""
import resource, sys, time, uuid
bootstrap, topic, which, expected = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])

def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime

n = size = 0
t0 = c0 = None
group = f"bench-clients-{uuid.uuid4().hex[:8]}"
if which.startswith("kafka-python"):
    from kafka import KafkaConsumer
    more = {}
    if which == "kafka-python-large-fetch":
        more = dict(fetch_max_bytes=64 << 20, max_partition_fetch_bytes=16 << 20, fetch_min_bytes=1 << 20, fetch_max_wait_ms=100)
    c = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
                      enable_auto_commit=False, max_poll_records=10000, **more)
    while n < expected:
        for msgs in c.poll(timeout_ms=1000).values():
            if t0 is None:
                t0, c0 = time.perf_counter(), cpu()
            for m in msgs:
                n += 1
                size += len(m.value)
else:
    from confluent_kafka import Consumer
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                  "enable.auto.commit": False})
    c.subscribe([topic])
    while n < expected:
        for m in c.consume(num_messages=10000, timeout=1.0):
            if m.error():
                continue
            if t0 is None:
                t0, c0 = time.perf_counter(), cpu()
            n += 1
            size += len(m.value())
c.close()
print(n, size, cpu() - c0, time.perf_counter() - t0)
"""

CLIENTS = ("kafka-python", "kafka-python-large-fetch", "confluent-kafka")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bootstrap", default=os.environ.get("GANGSCOPE_KAFKA_BOOTSTRAP"))
    ap.add_argument("--lines", type=int, default=300_000)
    ap.add_argument("--mix", default="realistic")
    ap.add_argument("--rounds", type=int, default=2, help="each client this many times, in turns (the best counts)")
    args = ap.parse_args()
    if not args.bootstrap:
        raise SystemExit("set GANGSCOPE_KAFKA_BOOTSTRAP (eval \"$(services/up)\")")
    from kafka import KafkaProducer

    records = kafka_consume.corpus_records(args.lines, mix=args.mix)
    topic = f"bench-clients-{uuid.uuid4().hex[:8]}"
    kafka_consume.create_topic(args.bootstrap, topic, 4)
    producer = KafkaProducer(bootstrap_servers=args.bootstrap, acks=1, linger_ms=50, batch_size=1 << 20)
    for key, value in records:
        producer.send(topic, key=key, value=value)
    producer.flush()
    producer.close()
    try:
        import confluent_kafka  # noqa: F401
        clients = CLIENTS
    except ImportError:
        print("confluent-kafka is not installed: pip install confluent-kafka")
        clients = CLIENTS[:2]
    best: dict[str, tuple[float, float]] = {}
    for _ in range(args.rounds):
        for which in clients:
            done = subprocess.run([sys.executable, "-c", _CHILD, args.bootstrap, topic, which, str(len(records))],
                                  capture_output=True, text=True, timeout=600)
            if done.returncode != 0:
                raise SystemExit(f"{which} failed: {done.stderr.strip()[-400:]}")
            n, size, cpu, wall = done.stdout.split()
            cpu, wall = float(cpu), float(wall)
            old = best.get(which)
            best[which] = (min(cpu, old[0]), min(wall, old[1])) if old else (cpu, wall)
    mb = sum(len(v) for _k, v in records) / 1e6
    print(f"{len(records):,} records, {mb:.0f} MB, topic {topic} (4 partitions)")
    for which, (cpu, wall) in best.items():
        print(f"{which:26} {len(records) / cpu:>10,.0f} records per CPU-second  {len(records) / wall:>9,.0f} records/s wall")


if __name__ == "__main__":
    main()
