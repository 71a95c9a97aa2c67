"""The consumer's curation path in process, without servers: Fluent Bit records -> LogPartition.

What `gangscope consume` does per poll batch between decoding and the sink: `decode_log` each
message, `LogPartition.feed_batch` (the Hyperscan batch scan, then the curators), `touched`.
Lines/s of that alone, to compare a change of the per-line path before and after in one minute
(bench.kafka_consume measures the whole service against real servers).

    python -m bench.partition_bench --lines 300000
"""

from __future__ import annotations

import argparse
import time

from bench.kafka_consume import corpus_records
from gangscope.pipeline.correlate.event_book import AttemptOf, EventBook
from gangscope.pipeline.correlate.progress import DerivedProgress
from gangscope.pipeline.curate import partition
from gangscope.pipeline.sources import kafka as ksrc


def run(values: list[bytes], batch: int, scanner) -> tuple[float, int]:
    """CPU seconds to curate the values in poll batches of `batch`, and the records made."""
    state = partition.LogPartition(AttemptOf(EventBook()), progress=DerivedProgress())
    out: list = []
    t0 = time.process_time()  # CPU seconds: steadier than wall time on a shared machine
    for start in range(0, len(values), batch):
        items = [(start + i, ksrc.decode_log(v)) for i, v in enumerate(values[start:start + batch])]
        state.touched(state.feed_batch(items, out, scanner), 0.0)
    state.close_all(out)
    return time.process_time() - t0, len(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=300_000)
    ap.add_argument("--batch", type=int, default=10_000, help="messages per poll batch")
    ap.add_argument("--repeat", type=int, default=3, help="runs; the best is reported")
    args = ap.parse_args()
    values = [value for _key, value in corpus_records(args.lines)]
    scanner = partition.text_scanner()
    best, records = min(run(values, args.batch, scanner) for _ in range(args.repeat))
    print(f"{len(values):,} lines, {records:,} records: {best:.2f} CPU s, {len(values) / best:,.0f} lines/s "
          f"(scanner: {'hyperscan' if scanner is not None else 'none'})")


if __name__ == "__main__":
    main()
