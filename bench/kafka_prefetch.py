"""librdkafka's prefetch settings, measured: what its broker thread costs to read a topic.

The bench corpus (bench.corpus, realistic mix) is produced once to a new topic; then, for each
setting, a confluent-kafka consumer of a new group reads it from the start at a paced rate (the
consumer's loop stands for the service's curation) or as fast as it goes, and this prints the
wall time and, per thread of this process (/proc/self/task), CPU seconds and minor page faults:
`rdk:broker*` is librdkafka's fetching, `python` the caller's poll.

    eval "$(services/up)"; python -m bench.kafka_prefetch --rate 15000 --rate 0
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

from bench.kafka_consume import Producer, corpus_records, create_topic
from gangscope.pipeline.sources.kafka_client import FETCH_QUEUE_BACKOFF_MS, PARTITION_FETCH_BYTES, QUEUED_KBYTES

SETTINGS = {
    "librdkafka's defaults": {"max.partition.fetch.bytes": 4 << 20},
    "consume's": {"max.partition.fetch.bytes": PARTITION_FETCH_BYTES, "queued.max.messages.kbytes": QUEUED_KBYTES,
                  "fetch.queue.backoff.ms": FETCH_QUEUE_BACKOFF_MS},
}


def threads() -> dict[str, tuple[float, int]]:
    """Thread name -> (CPU seconds, minor faults), summed over this process's threads of that name."""
    out: dict[str, tuple[float, int]] = {}
    for task in Path("/proc/self/task").iterdir():
        try:
            name = (task / "comm").read_text().strip()
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile
        cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        was = out.get(name, (0.0, 0))
        out[name] = (was[0] + cpu, was[1] + int(fields[7]))
    return out


def read(bootstrap: str, topic: str, total: int, conf: dict, rate: int) -> None:
    from confluent_kafka import Consumer

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"prefetch-{uuid.uuid4().hex[:8]}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False, "fetch.wait.max.ms": 100, **conf})
    consumer.subscribe([topic])
    n, start = 0, None
    while n < total:
        batch = consumer.consume(10_000, 0.2)
        if not batch:
            continue
        start = start or time.perf_counter()
        n += len(batch)
        if rate:
            time.sleep(len(batch) / rate)
    wall = time.perf_counter() - start
    got = threads()
    consumer.close()
    print(f"  {wall:6.2f} s wall; " + "; ".join(f"{name} {cpu:.2f} s CPU, {faults:,} faults"
                                                for name, (cpu, faults) in sorted(got.items()) if cpu or faults > 100))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bootstrap", default=os.environ.get("GANGSCOPE_KAFKA_BOOTSTRAP"))
    ap.add_argument("--lines", type=int, default=300_000)
    ap.add_argument("--rate", type=int, action="append", help="messages/s the reader takes (0: as fast as it goes)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--read", nargs=4, metavar=("TOPIC", "TOTAL", "CONF", "RATE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.read:  # one reader, in a process of its own
        topic, total, conf, rate = args.read
        read(args.bootstrap, topic, int(total), json.loads(conf), int(rate))
        return
    if not args.bootstrap:
        raise SystemExit("set GANGSCOPE_KAFKA_BOOTSTRAP (eval \"$(services/up)\")")
    records = corpus_records(args.lines, mix="realistic")
    topic = f"bench-prefetch-{uuid.uuid4().hex[:8]}"
    create_topic(args.bootstrap, topic, 4)
    producer = Producer(args.bootstrap, linger_ms=50)
    for key, value in records:
        producer.send(topic, key, value)
    producer.close()
    for rate in args.rate or [15_000, 0]:
        for _ in range(args.rounds):
            for name, conf in SETTINGS.items():
                # each read in a process of its own: a second consumer here would find the first's memory
                print(f"{name}, {'as fast as it goes' if not rate else f'{rate:,} messages/s'}:", flush=True)
                subprocess.run([sys.executable, "-m", "bench.kafka_prefetch", "--bootstrap", args.bootstrap, "--read",
                                topic, str(len(records)), json.dumps(conf), str(rate)], check=True)


if __name__ == "__main__":
    main()
