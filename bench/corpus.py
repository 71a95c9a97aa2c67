"""Synthetic CRI corpora for the benchmarks, in kubelet's /var/log/pods layout.

Mixes:
- default: mostly ordinary lines, some step lines, a few percent multi-line tracebacks,
  stdout and stderr interleaved (the foundation issue's corpus);
- noise: almost only ordinary lines;
- steps: heavy step logging (every rank prints every step);
- crash: a crash storm (every rank prints the same traceback at once, many times).

The text of tracebacks and step lines follows the formats in fixtures/ (real torch output);
the values are synthetic. Deterministic for a given seed.

    python -m bench.corpus --lines 1000000 --mix default --out bench/.corpus/default
"""

from __future__ import annotations

import argparse
import random
import uuid
from pathlib import Path

# (weight, text): what a healthy training pod prints besides its step lines.
NOISE = [
    (30, "INFO 2024-05-01 12:00:00,123 data.py:88] loaded shard {n} of 1024 ({k} samples)"),
    (1, "[W socket.cpp:663] [c10d] The client socket has failed to connect to [localhost]:29500 (errno: 99)."),
    (10, "Downloading data: {p}% of shard {n}"),
    (10, "2024-05-01 12:00:00 | INFO | trainer | checkpoint manager idle, next save in {k} steps"),
    (2, "/opt/conda/lib/python3.11/site-packages/torch/utils/data/dataloader.py:557: UserWarning: This DataLoader will create 8 worker processes in total."),
    (2, "  warnings.warn(_create_warning_msg("),
    (20, "GPU {g} temperature {k}C power {p}W utilization {p}%"),
    (10, "node-1:12345:12401 [{g}] NCCL INFO Channel 00/24 :    0   1   2   3   4   5   6   7"),
    (15, "batch {n} tokens {k} padding {p}%"),
]
NOISE_TEXTS = [text for _w, text in NOISE]
NOISE_WEIGHTS = [w for w, _text in NOISE]
STEP_FORMATS = [
    "epoch {e}/3 step {s}/5000 loss {loss:.4f}",
    "{{'loss': {loss:.4f}, 'grad_norm': {gn:.4f}, 'learning_rate': {lr:.2e}, 'epoch': {ef:.2f}}}",
    "step={s} loss={loss:.4f} lr={lr:.2e}",
]
TRACE = [
    "Traceback (most recent call last):",
    '  File "/workspace/train.py", line {ln}, in <module>',
    "    main()",
    '  File "/workspace/train.py", line 88, in main',
    "    loss = model(batch).loss",
    '  File "/opt/conda/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1553, in _wrapped_call_impl',
    "    return self._call_impl(*args, **kwargs)",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU {g} has a total capacity of 79.15 GiB of which 1.2 GiB is free.",
]
MIXES = {
    # (share of step lines, share of traceback starts)
    "default": (0.05, 0.002),
    "noise": (0.001, 0.0001),
    "steps": (0.6, 0.0005),
    "crash": (0.02, 0.03),
}


def generate(out: Path, lines: int, mix: str = "default", pods: int = 16, seed: int = 7) -> int:
    """Write about `lines` CRI lines over `pods` pods; return the number of bytes written."""
    rng = random.Random(seed)
    step_share, trace_share = MIXES[mix]
    per_pod = max(1, lines // pods)
    written = 0
    for p in range(pods):
        pod = f"bench-train-worker-{p}"
        uid = uuid.uuid5(uuid.NAMESPACE_URL, f"bench/{pod}")
        d = out / "pods" / f"team-a_{pod}_{uid}" / "pytorch"
        d.mkdir(parents=True, exist_ok=True)
        ns = 1_714_564_800 * 10**9 + p * 1000
        step = 0
        chunks = []
        n = 0
        while n < per_pod:
            ns += rng.randint(50_000, 3_000_000)
            ts = _rfc3339(ns)
            r = rng.random()
            if r < trace_share:
                rank = p * 8 + rng.randint(0, 7)
                for t in TRACE:
                    ns += 1000
                    text = t.format(ln=rng.randint(10, 400), g=rank % 8)
                    chunks.append(f"{_rfc3339(ns)} stderr F [rank{rank}]: {text}\n")
                    n += 1
            elif r < trace_share + step_share:
                step += 1
                fmt = STEP_FORMATS[step % len(STEP_FORMATS)] if mix != "steps" else STEP_FORMATS[0]
                loss = 2.5 * (0.999**step) + rng.random() * 0.05
                text = fmt.format(e=1 + step // 5000, s=step, loss=loss, gn=rng.random(), lr=3e-4, ef=step / 5000)
                chunks.append(f"{ts} stdout F {text}\n")
                n += 1
            else:
                text = rng.choices(NOISE_TEXTS, NOISE_WEIGHTS)[0].format(n=rng.randint(0, 1023), k=rng.randint(1, 9999), p=rng.randint(0, 100), g=rng.randint(0, 7))
                stream = "stderr" if rng.random() < 0.3 else "stdout"
                chunks.append(f"{ts} {stream} F {text}\n")
                n += 1
            if len(chunks) >= 10000:
                written += _flush(d / "0.log", chunks)
        written += _flush(d / "0.log", chunks)
    return written


CACHE = Path(__file__).resolve().parent / ".corpus"  # git-ignored


def cached(mix: str = "default", lines: int = 1_000_000, pods: int | None = None) -> Path:
    """The corpus of that mix and size under bench/.corpus/, generated the first time it is asked for."""
    path = CACHE / (f"{mix}-{lines}" if pods is None else f"{mix}-{lines}-{pods}pods")
    if not path.exists():
        print(f"generating {path} ...", flush=True)
        generate(path, lines, mix, **({} if pods is None else {"pods": pods}))
    return path


def _flush(path: Path, chunks: list[str]) -> int:
    data = "".join(chunks).encode()
    with open(path, "ab") as fh:
        fh.write(data)
    chunks.clear()
    return len(data)


def _rfc3339(ns: int) -> str:
    import time as _t

    secs, frac = divmod(ns, 10**9)
    return _t.strftime("%Y-%m-%dT%H:%M:%S", _t.gmtime(secs)) + f".{frac:09d}Z"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--mix", choices=sorted(MIXES), default="default")
    ap.add_argument("--pods", type=int, default=16)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    if args.out.exists():
        raise SystemExit(f"{args.out} exists; remove it first")
    size = generate(args.out, args.lines, args.mix, args.pods, args.seed)
    print(f"wrote {size / 1e6:.1f} MB to {args.out}")


if __name__ == "__main__":
    main()
