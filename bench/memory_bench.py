"""Peak memory of `gangscope replay` on hostile shapes of input.

Each scenario writes its input under .cache/memory_bench/, runs `gangscope replay` on it in a
child process and reads the child's peak RSS from the kernel (os.wait4), so the figure is
the whole command's: interpreter, curation, digest, sink and report.

- baseline: a 10-line log (the interpreter and the imports);
- ranks-N: one container whose log interleaves N `[rankK]:` streams, each with a traceback
  still open (N sub-streams, N open records at once);
- pods-N: Fluent Bit records of N pods, each with a traceback still open (the consumer's path:
  one curator per container);
- containers-N: Fluent Bit records of N distinct containers (default 100,000), each with a
  traceback still open, with the default cap on curators (--max-containers, the least recently
  fed closed first), with the cap above N, and with a small diagnosis digest (--digest-max-bytes);
- fat-ranks-N: N ranks, each with an open traceback of about 256 KiB (the per-trace bound,
  TraceParser.max_bytes), all open at once;
- line-100MB: one 100 MB line (the exception message of an open traceback), with the
  default --max-line-bytes and with the cap raised above the line's size;
- corpus: the 1M-line synthetic corpus of bench/corpus.py.

    python -m bench.memory_bench                      # everything
    python -m bench.memory_bench --only ranks pods    # some scenarios
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / ".cache" / "memory_bench"
GANGSCOPE = [sys.executable, "-m", "gangscope"]

TRACE_HEAD = [
    "Traceback (most recent call last):",
    '  File "/workspace/train.py", line 214, in <module>',
    "    main()",
    '  File "/workspace/train.py", line 188, in main',
    "    loss = model(batch).loss",
]


def _ts(ns: int) -> str:
    secs, frac = divmod(ns, 10**9)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(secs)) + f".{frac:09d}Z"


T0 = 1_714_564_800 * 10**9


def _pod_dir(root: Path, pod: str) -> Path:
    d = root / "pods" / f"team-a_{pod}_{uuid.uuid5(uuid.NAMESPACE_URL, pod)}" / "pytorch"
    d.mkdir(parents=True, exist_ok=True)
    return d


def make_baseline(root: Path) -> Path:
    d = _pod_dir(root, "tiny-worker-0")
    (d / "0.log").write_text("".join(f"{_ts(T0 + i * 1000)} stdout F epoch 1 step {i}/10 loss 2.0\n" for i in range(10)))
    return root


def make_ranks(root: Path, n: int, frame_lines: int = 0, head_lines: int = len(TRACE_HEAD)) -> Path:
    """N ranks in one container log, each leaving a traceback open. All lines fall within a
    fraction of a second, so no trace is over before the end of the log."""
    d = _pod_dir(root, "launcher-worker-0")
    ns = T0
    pad = "x" * 240
    with open(d / "0.log", "w") as fh:
        for rank in range(n):
            lines = TRACE_HEAD[:head_lines] + [f'  File "/workspace/layer{k}.py", line {k}, in forward_{pad}' for k in range(frame_lines)]
            for text in lines:
                ns += 10
                fh.write(f"{_ts(ns)} stderr F [rank{rank}]: {text}\n")
    return root


def make_pods(root: Path, n: int) -> Path:
    """Fluent Bit records (out_file / Kafka JSON) of N pods, each leaving a traceback open."""
    root.mkdir(parents=True, exist_ok=True)
    ns = T0
    with open(root / "fluentbit.ndjson", "w") as fh:
        for p in range(n):
            kube = {"namespace_name": "team-a", "pod_name": f"train-worker-{p}", "pod_id": str(uuid.uuid5(uuid.NAMESPACE_URL, str(p))),
                    "container_name": "pytorch", "host": f"node-{p % 64}"}  # fmt: skip
            for text in TRACE_HEAD:
                ns += 10
                fh.write(json.dumps({"log": text + "\n", "stream": "stderr", "time": _ts(ns), "kubernetes": kube}) + "\n")
    return root


def make_long_line(root: Path, mb: int) -> Path:
    """An open traceback whose exception message is one line of `mb` MB."""
    d = _pod_dir(root, "longline-worker-0")
    with open(d / "0.log", "w") as fh:
        for i, text in enumerate(TRACE_HEAD):
            fh.write(f"{_ts(T0 + i * 1000)} stderr F {text}\n")
        fh.write(f"{_ts(T0 + 10_000)} stderr F RuntimeError: ")
        chunk = "tensor([0.1234, 0.5678, 0.9012]) " * 32_768  # ~1 MiB
        for _ in range(mb):
            fh.write(chunk)
        fh.write("\n")
    return root


def make_corpus(root: Path, lines: int, mix: str) -> Path:
    from bench.corpus import generate

    if not root.exists():
        generate(root, lines, mix)
    return root


# ----------------------------------------------------------------------------- measuring


def replay_peak(inputs: Path, *extra: str) -> dict:
    """Run `gangscope replay` on `inputs`; its peak RSS (MB), wall time and summary."""
    out = WORK / "out"
    shutil.rmtree(out, ignore_errors=True)
    cmd = [*GANGSCOPE, "replay", str(inputs), "--out", str(out), "--no-progress", *extra]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    try:
        summary = json.loads((out / "summary.json").read_text())
    except (OSError, ValueError):
        summary = {}
    return {
        "rss_mb": usage.ru_maxrss / 1024,
        "wall_s": wall,
        "exit": os.waitstatus_to_exitcode(status),
        "summary": summary,
        "stderr": err.strip().splitlines()[-1:] if err.strip() else [],
    }


def input_mb(path: Path) -> float:
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files) / 1e6


def report(name: str, inputs: Path, result: dict, baseline: float | None) -> None:
    s = result["summary"]
    records = s.get("records", {})
    traces = records.get("trace", 0)
    extra = f"lines {s.get('lines', 0):,}, traces {traces:,}"
    if s.get("long_lines_cut"):
        extra += f", long lines cut {s['long_lines_cut']}"
    if s.get("open_records_flushed"):
        extra += f", open records flushed early {s['open_records_flushed']:,}"
    if s.get("containers_evicted"):
        extra += f", containers evicted {s['containers_evicted']:,}"
    if s.get("digest_records_dropped") or s.get("digest_records_summarized"):
        extra += f", digest dropped {s['digest_records_dropped']:,} summarized {s['digest_records_summarized']:,}"
    over = f"{result['rss_mb'] - baseline:+8.0f}" if baseline is not None else " " * 8
    print(f"{name:<30} {input_mb(inputs):>9.1f} {result['rss_mb']:>9.0f} {over} {result['wall_s']:>7.1f}  exit {result['exit']}  {extra}")
    if result["exit"] not in (0, 1):
        print(f"    stderr: {result['stderr']}")


SCENARIOS = ("baseline", "ranks", "pods", "containers", "fat", "line", "corpus")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="+", choices=SCENARIOS, default=list(SCENARIOS))
    ap.add_argument("--streams", type=int, nargs="+", default=[1_000, 2_000, 10_000], help="sub-streams / pods (default 1000 2000 10000)")
    ap.add_argument("--containers", type=int, default=100_000, help="distinct containers of the containers scenario")
    ap.add_argument("--fat-ranks", type=int, default=200, help="open fat traces (each line costs a pass over all open ones: keep it small)")
    ap.add_argument("--line-mb", type=int, default=100)
    ap.add_argument("--corpus-lines", type=int, default=1_000_000)
    ap.add_argument("--mix", default="default")
    args = ap.parse_args(argv)
    WORK.mkdir(parents=True, exist_ok=True)

    print(f"{'scenario':<30} {'input MB':>9} {'peak MB':>9} {'over base':>8} {'wall s':>7}")
    base = replay_peak(make_baseline(WORK / "baseline"))
    baseline = base["rss_mb"]
    if "baseline" in args.only:
        report("baseline", WORK / "baseline", base, None)
    for scenario in args.only:
        if scenario == "ranks":
            # Every line fed to an open record costs a pass over all open records (the idle
            # deadline, pipeline/curate.py _set_deadline), so N open ranks cost O(N^2): the
            # large N gets one header line per rank.
            for n in args.streams:
                root = WORK / f"ranks-{n}"
                shutil.rmtree(root, ignore_errors=True)
                heads = len(TRACE_HEAD) if n <= 2_000 else 1
                name = f"ranks-{n}" + ("" if heads > 1 else " (headers)")
                report(name, root, replay_peak(make_ranks(root, n, head_lines=heads)), baseline)
        elif scenario == "pods":
            for n in args.streams:
                root = WORK / f"pods-{n}"
                shutil.rmtree(root, ignore_errors=True)
                report(f"pods-{n}", root, replay_peak(make_pods(root, n)), baseline)
        elif scenario == "containers":
            n = args.containers
            root = WORK / f"containers-{n}"
            shutil.rmtree(root, ignore_errors=True)
            make_pods(root, n)
            report(f"containers-{n}", root, replay_peak(root), baseline)
            report(f"containers-{n} uncapped", root, replay_peak(root, "--max-containers", str(n + 1)), baseline)
            # a diagnosis digest well under the ~200 MB of JSON that these traces and their errors take
            report(f"containers-{n} digest 32M", root, replay_peak(root, "--digest-max-bytes", str(32 << 20)), baseline)
            shutil.rmtree(root, ignore_errors=True)
        elif scenario == "fat":
            n = args.fat_ranks
            root = WORK / f"fat-ranks-{n}"
            shutil.rmtree(root, ignore_errors=True)
            # 1,000 frame lines of ~300 bytes: past the 256 KiB a trace keeps (TraceParser.max_bytes)
            report(f"fat-ranks-{n}", root, replay_peak(make_ranks(root, n, frame_lines=1000)), baseline)
            shutil.rmtree(root, ignore_errors=True)
        elif scenario == "line":
            root = WORK / f"line-{args.line_mb}MB"
            shutil.rmtree(root, ignore_errors=True)
            make_long_line(root, args.line_mb)
            report(f"line-{args.line_mb}MB", root, replay_peak(root), baseline)
            cap = str((args.line_mb + 10) << 20)
            report(f"line-{args.line_mb}MB uncapped", root, replay_peak(root, "--max-line-bytes", cap), baseline)
            shutil.rmtree(root, ignore_errors=True)
        elif scenario == "corpus":
            root = ROOT / "bench" / ".corpus" / f"{args.mix}-{args.corpus_lines}"
            report(f"corpus {args.mix} {args.corpus_lines // 1000}k", root,
                   replay_peak(make_corpus(root, args.corpus_lines, args.mix)), baseline)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
