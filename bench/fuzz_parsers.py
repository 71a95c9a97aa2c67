"""Coverage-guided fuzzing (atheris / libFuzzer) of what reads untrusted log bytes.

Targets: `envelopes` (the CRI / Docker / Fluent Bit / text decoders, format detection,
time helpers), `curator` (ContainerCurator / FluentBitCurator.feed_block on raw bytes cut
into two blocks; the reference path must give the same records either way), `traces`
(TraceParser over fuzzed lines and times, expire, close; parse_block), and also `events`
(the Kubernetes/Kueue event decoder) and `redact` (masking must be idempotent).

A finding is an exception out of a target (or a broken invariant), deduplicated by its
type and the innermost project frame; each one is written to `--findings` with its input
and traceback, and the run goes on. Seeds come from fixtures/; libFuzzer's dictionary
from the shapes the parsers look for.

    python -m bench.fuzz_parsers --seconds 60                  # every target, 60 s each
    python -m bench.fuzz_parsers --target traces --seconds 300
    python -m bench.fuzz_parsers --engine random --seconds 20  # no atheris: random mutations
    python -m bench.fuzz_parsers --seconds 2 --workdir /tmp/f --json /tmp/f/report.json  # CI's budget

The exit code is 1 when anything was found (or a fuzzer process failed), else 0.

Without atheris (or with --engine random) a plain random-mutation loop over the same
seeds and targets runs instead (no coverage guidance).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import subprocess
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "fuzz"
TARGETS = ("envelopes", "curator", "traces", "events", "redact")
PROJECT_DIRS = (str(ROOT / "parsers"), str(ROOT / "pipeline"))
# What atheris instruments for each target (coverage feedback from these modules only):
# instrumenting all of gangscope costs ~1.7 s per process, which a small CI budget feels.
INSTRUMENT = {
    "envelopes": ["gangscope.parsers.envelopes", "gangscope.pipeline.sources.files"],
    "curator": ["gangscope"],
    "traces": ["gangscope.parsers.traces", "gangscope.parsers.trace_blocks", "gangscope.parsers.trace_shapes",
               "gangscope.parsers.fingerprint", "gangscope.parsers.lines"],
    "events": ["gangscope.parsers.events"],
    "redact": ["gangscope.parsers.redact"],
}  # fmt: skip

# Shapes the parsers look for: libFuzzer splices them into inputs.
DICTIONARY = [
    "Traceback (most recent call last):", '  File "', '", line ', ", in ", "    ", "^^^^", "~~~",
    "The above exception was the direct cause of the following exception:",
    "During handling of the above exception, another exception occurred:",
    "Exception Group Traceback (most recent call last):", "  | ", "  +-+---------------- 1 ----------------",
    "  +------------------------------------", "ExceptionGroup: ", "sub-exception", "Fatal Python error: ",
    "Thread 0x", " (most recent call first):", "Current thread 0x", "Extension modules: ", "(total: ", "Timeout (",
    '"""', "RemoteTraceback", "ChildFailedError", "Root Cause (first observed failure):", "exitcode  : ", "rank      : ",
    "(local_rank: ", "error_file: ", "[rank", "]: ", "[default", "]:", "2024-05-01T12:00:00.", "Z", "+02:00",
    " stdout F ", " stderr F ", " stdout P ", '{"log":"', '\\n","stream":"stderr","time":"', '"kubernetes":{',
    '"@timestamp":', '"_p":"P"', "loss", "step", "epoch", "Epoch ", "%|", "it/s]", "\r", "\x1b[", "nan", "inf",
    "NCCL WARN", "Watchdog caught collective operation timeout", "CUDA out of memory.", "[Errno 28] ", "NVRM: Xid",
    '{"kind":"Event","apiVersion":"v1"', '"involvedObject":', '"firstTimestamp":"', '"count":', '"items":[',
    "Workload", "Pod", "HF_TOKEN=", "hf_", "Authorization: Bearer ", "-----BEGIN RSA PRIVATE KEY-----", "://u:p@h",
    # the families of issue 17: fields of the wrong type, numbers past a long, malformed times, markup
    '"pod_name":["a"]', '"namespace_name":7', '"labels":{"a":{"b":1}}', '"kubernetes":[]', '"fieldPath":5',
    '"conditions":"abc"', '"containerStatuses":5', '"podSets":7', "18446744073709551616", "9" * 40,
    "2026-13-45T99:99:99.0Z", "2026-02-30T10:00:00Z", ".Z", "[/INST]", "[bold red]",
]  # fmt: skip


# ----------------------------------------------------------------------------- targets


def _imports():
    """The modules under test (imported late, so that atheris can instrument them)."""
    import msgspec

    from gangscope.parsers import envelopes, events, redact, times, trace_blocks, traces
    from gangscope.parsers.lines import Line
    from gangscope.parsers.records import encode
    from gangscope.pipeline.curate.container import ContainerCurator
    from gangscope.pipeline.curate.fluentbit import FluentBitCurator
    from gangscope.pipeline.curate.stats import CurationStats
    from gangscope.pipeline.sources.files import PodIdentity, decode_block

    return dict(msgspec=msgspec, envelopes=envelopes, events=events, redact=redact, times=times,
                trace_blocks=trace_blocks, traces=traces, Line=Line, encode=encode, CurationStats=CurationStats,
                FluentBitCurator=FluentBitCurator, ContainerCurator=ContainerCurator, PodIdentity=PodIdentity,
                decode_block=decode_block)  # fmt: skip


class Broken(AssertionError):
    """An invariant that does not hold (not a crash, still a finding)."""


TIMES = ["2024-05-01T12:00:00Z", "2024-05-01T12:00:00.000001Z", "2024-05-01T12:00:09.5Z", "2024-05-01T12:00:00+02:00",
         "2024-05-01T12:01:00.25Z", None]  # fmt: skip
ODD_TIMES = TIMES + ["2024-05-01T12:00:00.x1Z", "2024-05-01T12:00:00.5+99:99", "", "garbage", "9999-99-99T99:99:99Z"]


def make_targets():
    m = _imports()
    envelopes, Line = m["envelopes"], m["Line"]
    CurationStats, FluentBitCurator, ContainerCurator = m["CurationStats"], m["FluentBitCurator"], m["ContainerCurator"]
    pod = m["PodIdentity"](namespace="team-a", pod="fuzz-worker-0", pod_uid="0c6d1111-2222-3333-4444-555566667777", container="c")

    def envelopes_target(data: bytes) -> None:
        lines, _invalid = m["decode_block"](data)
        for raw in lines:
            for decode in envelopes.DECODERS.values():
                decode(raw)
            head = raw.split(" ", 1)[0]
            m["times"].to_utc(head)
            m["times"].seconds(head)
        envelopes.detect_format(lines[:20])
        try:
            obj = m["msgspec"].json.decode(data)
        except (m["msgspec"].DecodeError, RecursionError):
            return
        if isinstance(obj, dict):
            envelopes.envelope_from_record(obj)

    def curate_once(fmt: str, blocks: list[bytes], block_scan: bool) -> list[bytes]:
        stats = CurationStats()
        if fmt == "fluentbit":
            cur = FluentBitCurator(stats, pod)
        else:
            cur = ContainerCurator(pod, fmt, stats, block_scan=block_scan)
        out = []
        for block in blocks:
            out.extend(cur.feed_block(block))
        out.extend(cur.close())
        return [m["encode"](r) for r in out]

    def curator_target(data: bytes) -> None:
        if not data:
            return
        control, body = data[0], data[1:]
        fmt = ("cri", "cri", "docker", "fluentbit", "text")[control % 5]
        block_scan = bool(control & 0x80)
        lines = body.split(b"\n")
        at = (control * 7) % len(lines) if len(lines) > 1 else 0
        blocks = [b"\n".join(lines[:at]), b"\n".join(lines[at:])] if at else [body]
        pieces = curate_once(fmt, blocks, block_scan)
        if not block_scan and at:
            whole = curate_once(fmt, [body], block_scan)
            if whole != pieces:
                raise Broken("reference path: records depend on where the blocks were cut")

    def traces_target(data: bytes) -> None:
        # odd times only for inputs with an odd first byte, so that a crash on a bad time
        # does not hide what comes after it in the others
        times = ODD_TIMES if data[:1] and data[0] & 1 else TIMES
        text = data.decode("utf-8", "replace")
        lines = text.split("\n")
        parser = m["traces"].TraceParser()
        for i, line in enumerate(lines):
            time_ = times[(len(line) + i) % len(times)] if i % 3 else times[0]
            parser.feed(Line(time_, i, line, i % 2 or None))
        parser.expire(times[len(lines) % len(times)] or "2024-05-01T13:00:00Z")
        parser.close()
        if parser.open:
            raise Broken("TraceParser still open after close()")
        if lines and lines[0]:
            m["trace_blocks"].parse_block(lines[:500])

    def events_target(data: bytes) -> None:
        text = data.decode("utf-8", "replace")
        for item in m["events"].decode_event_stream(text.split("\n")):
            if not isinstance(item, m["events"].Skip) and item.kind != "event":
                raise Broken(f"event decoder yielded {type(item).__name__}")

    redactor = m["redact"].Redactor()

    def redact_target(data: bytes) -> None:
        once = redactor.text(data.decode("utf-8", "replace"))
        if redactor.text(once) != once:
            raise Broken("redaction is not idempotent")

    return {"envelopes": envelopes_target, "curator": curator_target, "traces": traces_target,
            "events": events_target, "redact": redact_target}  # fmt: skip


# ----------------------------------------------------------------------------- seeds


def seeds(target: str) -> list[bytes]:
    fx = ROOT / "fixtures"
    if target == "traces":
        found = [p.read_bytes() for p in sorted((fx / "traces").glob("*.txt"))]
    elif target == "events":
        found = [p.read_bytes()[:8192] for p in sorted(fx.glob("gang/*/*.ndjson")) + sorted(fx.glob("gang/*/*.json"))]
        found += [HOSTILE_EVENTS]
    else:
        logs = sorted(fx.glob("*/*/pods/*/*/0.log"))
        found = [p.read_bytes()[:4096] for p in logs]
        found += [_as_docker(s) for s in found[:5]] + [_as_fluentbit(s) for s in found[:5]] + [HOSTILE_LOG]
        if target == "curator":
            found = [bytes([i * 37 % 256]) + s for i, s in enumerate(found)]
    if target == "redact":
        found = found[:10] + [s.encode() for s in DICTIONARY if "=" in s or "://" in s or "BEGIN" in s]
    return [s for s in found if s] or [b"x"]


# Seeds of the families of issue 17 (tests/test_hostile.py generates them all).
HOSTILE_LOG = "\n".join([
    json.dumps({"log": "step 1 loss 0.5\n", "stream": "stdout", "time": "2026-01-01T00:00:00Z",
                "kubernetes": {"pod_name": ["a"], "namespace_name": 7, "labels": {"x": {"y": 1}}}}),
    "junk banner line", "2026-13-45T99:99:99.0Z stdout F step 18446744073709551616 loss 0.5",
    "2026-01-01T00:00:00.000000000Z stdout F  50%|#   | 5/18446744073709551616 [00:01<00:01, 1.00it/s]",
    "2026-01-01T00:00:00.000000000Z stdout F {'loss': 0.5, 'epoch': 0.5}",
    "2026-01-01T00:00:00.000000000Z stdout F ValueError: [/INST] [bold red]x",
]).encode()
HOSTILE_EVENTS = "\n".join([
    '{"kind":"Event","involvedObject":{"kind":"Pod","name":"p","fieldPath":5},"reason":"x","lastTim',
    json.dumps({"kind": "Pod", "metadata": {"name": "p", "creationTimestamp": "2026-01-01T00:00:00Z"},
                "status": {"conditions": "abc", "containerStatuses": 5}}),
    json.dumps({"kind": "Workload", "metadata": {"name": "w"}, "spec": {"podSets": 7}, "status": {"conditions": []}}),
]).encode()


def _as_docker(cri: bytes) -> bytes:
    out = []
    for raw in cri.decode("utf-8", "replace").split("\n"):
        parts = raw.split(" ", 3)
        if len(parts) == 4:
            out.append(json.dumps({"log": parts[3] + "\n", "stream": parts[1], "time": parts[0]}))
    return "\n".join(out).encode()


def _as_fluentbit(cri: bytes) -> bytes:
    out = []
    for raw in cri.decode("utf-8", "replace").split("\n"):
        parts = raw.split(" ", 3)
        if len(parts) == 4:
            out.append(json.dumps({"log": parts[3], "stream": parts[1], "time": parts[0], "_p": parts[2][:1],
                                   "kubernetes": {"namespace_name": "team-a", "pod_name": "w-0", "container_name": "c"}}))
    return "\n".join(out).encode()


def _dictionary_file(path: Path) -> Path:
    def escape(s: str) -> str:
        return "".join(c if 32 <= ord(c) < 127 and c not in '"\\' else "".join(f"\\x{b:02x}" for b in c.encode()) for c in s)

    path.write_text("".join(f'kw{i}="{escape(s)}"\n' for i, s in enumerate(DICTIONARY)))
    return path


# ----------------------------------------------------------------------------- one target


class Tally:
    """Executions, unique findings and the slowest input of one target; saved as JSON often,
    because libFuzzer ends the process without running Python's exit handlers."""

    def __init__(self, target: str, findings: Path, summary: Path):
        self.target = target
        self.findings = findings
        self.summary = summary
        self.executions = 0
        self.found: dict[str, dict] = {}
        self.slowest = 0.0
        self.started = time.monotonic()
        self._saved = 0.0

    def run(self, fn, data: bytes) -> None:
        self.executions += 1
        start = time.perf_counter()
        try:
            fn(data)
        except Exception as exc:  # every exception out of a target is a finding
            self._finding(exc, data)
        spent = time.perf_counter() - start
        if spent > self.slowest:
            self.slowest = spent
            (self.findings / f"{self.target}-slowest.bin").write_bytes(data)
        now = time.monotonic()
        if now - self._saved > 1.0:
            self.save()

    def _finding(self, exc: Exception, data: bytes) -> None:
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(PROJECT_DIRS)]
        where = f"{os.path.relpath(frames[-1].filename, ROOT)}:{frames[-1].lineno}" if frames else "?"
        key = f"{type(exc).__name__} at {where}"
        if key in self.found:
            self.found[key]["count"] += 1
            return
        digest = hashlib.sha1(key.encode()).hexdigest()[:10]
        base = self.findings / f"{self.target}-{digest}"
        base.with_suffix(".bin").write_bytes(data)
        base.with_suffix(".txt").write_text(key + "\n\n" + "".join(traceback.format_exception(exc)))
        self.found[key] = {"count": 1, "input": str(base.with_suffix(".bin")), "message": str(exc)[:200]}
        self.save()

    def save(self) -> None:
        self._saved = time.monotonic()
        self.summary.write_text(json.dumps({
            "target": self.target, "executions": self.executions, "seconds": round(self._saved - self.started, 1),
            "findings": self.found, "slowest_s": round(self.slowest, 4),
        }, indent=2))  # fmt: skip


def run_atheris(target: str, seconds: int, tally: Tally, workdir: Path) -> None:
    import atheris

    with atheris.instrument_imports(include=INSTRUMENT[target]):
        fns = make_targets()
    fn = fns[target]
    corpus = workdir / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    for i, seed in enumerate(seeds(target)):
        (corpus / f"seed-{i:04d}").write_bytes(seed)
    args = [sys.argv[0], f"-max_total_time={seconds}", "-rss_limit_mb=4096", "-timeout=60", "-max_len=65536",
            f"-dict={_dictionary_file(workdir / 'dict.txt')}", "-print_final_stats=1",
            f"-artifact_prefix={tally.findings}/{target}-", str(corpus)]  # fmt: skip
    atheris.Setup(args, lambda data: tally.run(fn, data))
    atheris.Fuzz()


def run_random(target: str, seconds: int, tally: Tally, seed: int = 0) -> None:
    """No coverage guidance: mutations of the seeds (flips, inserts, dictionary splices, crossovers)."""
    fn = make_targets()[target]
    pool = seeds(target)
    rng = random.Random(seed)
    words = [w.encode() for w in DICTIONARY]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        data = bytearray(rng.choice(pool))
        for _ in range(rng.randint(1, 8)):
            op = rng.randrange(5)
            at = rng.randint(0, len(data))
            if op == 0 and data:
                data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
            elif op == 1:
                data[at:at] = rng.choice(words)
            elif op == 2:
                data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
            elif op == 3 and data:
                j = rng.randint(at, min(len(data), at + 256))
                data[at:at] = data[at:j] * rng.randint(1, 50)
            else:
                other = rng.choice(pool)
                data = data[:at] + other[rng.randint(0, len(other)) :]
        tally.run(fn, bytes(data))
    tally.save()


# ----------------------------------------------------------------------------- the run


def child(target: str, seconds: int, engine: str, findings: Path, root: Path) -> None:
    workdir = root / target
    workdir.mkdir(parents=True, exist_ok=True)
    findings.mkdir(parents=True, exist_ok=True)
    tally = Tally(target, findings, workdir / "summary.json")
    sys.setrecursionlimit(1000)  # what a default interpreter has: deep-nesting bugs must show here too
    if engine == "atheris":
        run_atheris(target, seconds, tally, workdir)
    else:
        run_random(target, seconds, tally)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--target", choices=(*TARGETS, "all"), default="all")
    ap.add_argument("--seconds", type=int, default=60, help="budget per target (default 60)")
    ap.add_argument("--engine", choices=("auto", "atheris", "random"), default="auto")
    ap.add_argument("--workdir", type=Path, default=CACHE, help=f"corpora, logs and summaries (default {CACHE})")
    ap.add_argument("--findings", type=Path, help="where crashing inputs are written (default WORKDIR/findings)")
    ap.add_argument("--json", type=Path, help="also write the summaries of all targets here")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args, _rest = ap.parse_known_args(argv)
    workdir = args.workdir.resolve()
    findings = (args.findings or workdir / "findings").resolve()
    engine = args.engine
    if engine == "auto":
        try:
            import atheris  # noqa: F401

            engine = "atheris"
        except ImportError:
            engine = "random"
    if args.child:
        child(args.target, args.seconds, engine, findings, workdir)
        return 0
    targets = TARGETS if args.target == "all" else (args.target,)
    print(f"engine: {engine}; {args.seconds} s per target; findings in {findings}")
    print(f"{'target':<10} {'executions':>11} {'exec/s':>8} {'slowest':>9}  findings")
    total_findings = 0
    summaries: dict[str, dict] = {}
    for target in targets:
        summary_path = workdir / target / "summary.json"
        summary_path.unlink(missing_ok=True)
        log = workdir / f"{target}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "w") as out:
            cmd = [sys.executable, "-m", "bench.fuzz_parsers", "--child", "--target", target,
                   "--seconds", str(args.seconds), "--engine", engine, "--findings", str(findings),
                   "--workdir", str(workdir)]  # fmt: skip
            proc = subprocess.run(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, timeout=args.seconds * 3 + 120)
        try:
            s = json.loads(summary_path.read_text())
        except (OSError, ValueError):
            print(f"{target:<10} the fuzzer process failed (exit {proc.returncode}); see {log}")
            summaries[target] = {"target": target, "executions": 0, "failed": proc.returncode, "log": str(log), "findings": {}}
            total_findings += 1
            continue
        summaries[target] = s
        _from_libfuzzer_log(log.read_text(errors="replace"), s)
        rate = s["executions"] / s["seconds"] if s["seconds"] else 0.0
        print(f"{target:<10} {s['executions']:>11,} {rate:>8,.0f} {s['slowest_s']:>8.3f}s  {len(s['findings'])}")
        for key, f in s["findings"].items():
            print(f"    {key} (x{f['count']}): {f['message'][:100]!r} -> {f['input']}")
        total_findings += len(s["findings"])
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"engine": engine, "seconds": args.seconds, "targets": summaries}, indent=2))
    return 1 if total_findings else 0


def _from_libfuzzer_log(text: str, summary: dict) -> None:
    """What only libFuzzer saw: its execution count, and a stop on out-of-memory, timeout or signal
    (the process ends there, so the tally could not note it)."""
    runs = re.findall(r"stat::number_of_executed_units: (\d+)", text) or re.findall(r"Done (\d+) runs", text)
    if runs:
        summary["executions"] = max(summary["executions"], int(runs[-1]))
    total = re.findall(r"Done \d+ runs in (\d+) second", text)
    if total:
        summary["seconds"] = max(summary["seconds"], float(total[-1]))
    stop = re.search(r"ERROR: libFuzzer: ([^\n]+)", text)
    if stop:
        unit = re.search(r"Test unit written to (\S+)", text)
        summary["findings"][f"libFuzzer {stop.group(1).strip()}"] = {
            "count": 1, "input": unit.group(1) if unit else "?", "message": "the run stopped here"}


if __name__ == "__main__":
    sys.exit(main())
