"""Every speed figure the README quotes, from one command, on the realistic corpus (issue 19).

    set -a; . /tmp/work/servers.env; set +a      # or: eval "$(services/up)"
    python -m bench.honest                       # 300k lines; --lines, --skip-servers
    python -m bench.honest --skip-servers --at 882b787   # the replay of a commit, not the working tree

Prints, in one run:
- replay: lines per CPU-second of `replay` (local sink, one process, imports excluded) on the
  realistic mix (bench/corpus.py: 64 pods x 8 ranks of mixed frameworks, ~15 % step lines, NCCL
  noise, long JSON lines, CRI partials, 512 tracebacks), and its ratio to the per-line floor
  (split the CRI envelope + one regex) measured in the same run, also in CPU time: `--rounds`
  pairs of floor and replay in turns, the best of each;
- consume: one `gangscope consume` process against the real Kafka and OpenSearch of the
  environment: lines/s from its first line read to the last one indexed, and lines per
  CPU-second of that process (bench/kafka_consume.throughput);
- produce -> searchable p50/p99 at 2,000 and 10,000 lines/s (bench/kafka_consume.delay: from the time
  each probe was due on the producer's schedule; how far behind it the producer was is printed);
- `gangscope --help` start time (wall, best and median of 7).
Then the targets of issue 19 beside each figure. The machine's size is printed first.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

from bench import kafka_consume
from bench.ab_replay import base_package, measure
from bench.corpus import cached
from bench.replay_bench import floor

TARGETS = {"replay_ratio": 0.37, "consume": 50_000, "p99_10k": 2.0, "help": 0.3}


def machine() -> str:
    mem = next((line.split()[1] for line in Path("/proc/meminfo").read_text().splitlines() if line.startswith("MemTotal")), "0")
    load = os.getloadavg()
    return f"{os.cpu_count()} cores, {int(mem) / 2**20:.0f} GiB; load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}"


def floor_cpu(root: Path, rounds: int = 3) -> tuple[int, float]:
    """The floor loop's lines and its best CPU time."""
    best = None
    for _ in range(rounds):
        start = time.process_time()
        lines, _wall = floor(root)
        took = time.process_time() - start
        best = took if best is None else min(best, took)
    return lines, best


def help_start(runs: int = 7) -> tuple[float, float, float]:
    """(best wall, median wall, median CPU) seconds of `gangscope --help`."""
    exe = shutil.which("gangscope") or str(Path(sys.executable).with_name("gangscope"))
    times, cpu = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([exe, "--help"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return min(times), statistics.median(times), statistics.median(cpu)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=300_000)
    ap.add_argument("--mix", default="realistic")
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--seconds", type=int, default=15, help="length of each delay run")
    ap.add_argument("--skip-servers", action="store_true", help="replay and --help only")
    ap.add_argument("--rounds", type=int, default=3, help="floor/replay pairs, in turns (the best of each counts)")
    ap.add_argument("--at", metavar="COMMIT",
                    help="the replay of this commit (checked out in a temporary worktree), not of the working tree")
    ap.add_argument("--consume-only", action="store_true", help="the consume figures only (no replay, no --help)")
    ap.add_argument("--kafka-client", choices=("kafka-python", "confluent"),
                    help="the consumer's backend (consume --kafka-client; default: the service's)")
    args = ap.parse_args()
    print(f"machine: {machine()}; python {sys.version.split()[0]}", flush=True)

    if args.kafka_client:
        os.environ["GANGSCOPE_KAFKA_CLIENT"] = args.kafka_client  # the consumer process reads it
    print(f"kafka client: {os.environ.get('GANGSCOPE_KAFKA_CLIENT', 'default')}", flush=True)
    if not args.consume_only:
        offline(args)
    if args.skip_servers:
        return
    servers(args)


def offline(args) -> None:
    corpus = cached(args.mix, args.lines)
    # In turns, the best of each: on a shared machine the load moves both figures; the floor
    # and the replay measured in the same minutes keep their ratio. Each replay in a fresh
    # process: a second replay in the same one finds its line shapes cached.
    floor_s = replay_s = None
    work = Path(tempfile.mkdtemp(prefix="gangscope-honest-"))
    try:
        path = str(base_package(args.at, work)) if args.at else None
        for _ in range(args.rounds):
            lines, f = floor_cpu(corpus, rounds=1)
            r, replayed = measure(corpus, 1, path)
            floor_s = f if floor_s is None else min(floor_s, f)
            replay_s = r if replay_s is None else min(replay_s, r)
    finally:
        if args.at:
            subprocess.run(["git", "-C", str(Path(__file__).resolve().parents[1]), "worktree", "remove", "--force",
                            str(work / "tree")], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    if args.at:
        print(f"replay at {args.at}", flush=True)
    ratio = floor_s / replay_s
    print(f"replay:  {replayed / replay_s:>10,.0f} lines per CPU-second ({replayed:,} lines, mix {args.mix}); "
          f"floor {lines / floor_s:,.0f} lines per CPU-second; ratio {ratio:.3f} (target >= {TARGETS['replay_ratio']})", flush=True)

    best, median, cpu = help_start()
    print(f"--help:  {best:.3f} s best, {median:.3f} s median of 7 wall, {cpu:.3f} s CPU (target < {TARGETS['help']} s)", flush=True)



def servers(args) -> None:
    bootstrap, url = os.environ.get("GANGSCOPE_KAFKA_BOOTSTRAP"), os.environ.get("GANGSCOPE_OPENSEARCH_URL")
    if not bootstrap or not url:
        raise SystemExit("set GANGSCOPE_KAFKA_BOOTSTRAP and GANGSCOPE_OPENSEARCH_URL (or pass --skip-servers)")
    url = url.rstrip("/")
    run = SimpleNamespace(bootstrap=bootstrap, lines=args.lines, partitions=args.partitions, mix=args.mix, seconds=args.seconds)
    got = kafka_consume.throughput(run, url)
    print(f"consume: {got['lines'] / got['seconds']:>10,.0f} lines/s, {got['lines'] / got['cpu']:,.0f} lines per CPU-second "
          f"of the consumer (target >= {TARGETS['consume']:,} lines/s per process)"
          + (f"; OpenSearch {got['opensearch_cpu']:.1f} s CPU beside it ({got['opensearch_cpu'] / max(got['records'], 1) * 1e6:,.0f} us "
             f"per record), tail {got['tail']:.2f} s" if got.get("opensearch_cpu") is not None else ""), flush=True)
    for rate in (2_000, 10_000):
        run.rate = rate
        d = kafka_consume.delay(run, url)
        if d is None:
            print(f"delay at {rate:,} lines/s: too few probes searchable", flush=True)
            continue
        target = f" (target p99 < {TARGETS['p99_10k']} s)" if rate == 10_000 else ""
        print(f"delay at {rate:,} lines/s (sent {d['rate']:,.0f}/s, p99 {d['behind_p99']:.2f} s behind schedule): "
              f"produce->searchable p50 {d['p50']:.2f} s, p99 {d['p99']:.2f} s{target}"
              + (f"; due after the first 5 s (new indices): p50 {d['settled_p50']:.2f} s, p99 {d['settled_p99']:.2f} s"
                 if d.get("settled_p99") is not None else ""), flush=True)


if __name__ == "__main__":
    main()
