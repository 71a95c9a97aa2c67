"""Synthetic CRI corpora for the benchmarks, in kubelet's /var/log/pods layout.

Mixes:
- default: mostly ordinary lines, some step lines, a few percent multi-line tracebacks,
  stdout and stderr interleaved (the foundation issue's corpus);
- noise: almost only ordinary lines;
- steps: heavy step logging (every rank prints every step);
- crash: a crash storm (every rank prints the same traceback at once, many times);
- realistic: what a 512-GPU job of several frameworks writes (see `generate_realistic`).

The text of tracebacks and step lines follows the formats in fixtures/ (real torch output);
the values are synthetic. Deterministic for a given seed.

    python -m bench.corpus --lines 1000000 --mix default --out bench/.corpus/default
"""

from __future__ import annotations

import argparse
import json
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
    "realistic": None,  # generate_realistic: its own layout (64 pods of 8 ranks, several frameworks)
}


def generate(out: Path, lines: int, mix: str = "default", pods: int = 16, seed: int = 7) -> int:
    """Write about `lines` CRI lines over `pods` pods; return the number of bytes written."""
    if mix == "realistic":
        return generate_realistic(out, lines, seed=seed)
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


# --- the realistic mix (issue 19): 64 pods x 8 ranks, a framework per pod, what such jobs print.
# Step line formats as the frameworks print them (fixtures/dialects/ holds real runs of each).
REAL_STEPS = {
    "hf_trainer": lambda r, s, loss: f"{{'loss': {loss:.4f}, 'grad_norm': {r.random() * 3:.4f}, 'learning_rate': {3e-4 * (1 - s / 20000):.4e}, 'epoch': {s / 5000:.2f}}}",
    "tqdm": lambda r, s, loss: f"{100 * s // 20000:3d}%|{'█' * (s * 10 // 20000):<10}| {s}/20000 [{s // 240:02d}:{s // 4 % 60:02d}<{(20000 - s) // 240:02d}:{(20000 - s) // 4 % 60:02d},  {3 + r.random():.2f}it/s]",
    "deepspeed": lambda r, s, loss: f"[2024-05-01 12:00:00,{r.randint(100, 999)}] [INFO] [logging.py:96:log_dist] [Rank 0] step={s}, skipped=0, lr=[{3e-4 * (1 - s / 20000)}], mom=[(0.9, 0.999)]",
    "megatron": lambda r, s, loss: (f" iteration {s:8d}/   20000 | consumed samples: {s * 512:12d} | elapsed time per iteration (ms): {900 + r.random() * 200:.1f} | "
                                    f"learning rate: {3e-4:.6E} | global batch size:   512 | lm loss: {loss:.6E} | loss scale: 65536.0 | grad norm: {r.random() * 2:.3f} | "
                                    "number of skipped iterations:   0 | number of nan iterations:   0 |"),
    "torchtitan": lambda r, s, loss: f"[titan] 2024-05-01 12:00:00,{r.randint(100, 999)} - root - INFO - step: {s:2d}  loss: {loss:8.5f}  memory: 61.34GiB(77.41%)  tps: {r.randint(3000, 4000):,}  mfu: 41.2%",
    "plain": lambda r, s, loss: f"step={s} loss={loss:.4f} lr={3e-4:.2e}",
}
REAL_FRAMEWORKS = list(REAL_STEPS)
NCCL_NOISE = [
    "{host}:{pid}:{tid} [{g}] NCCL INFO Channel {c:02d}/32 :    0   1   2   3   4   5   6   7",
    "{host}:{pid}:{tid} [{g}] NCCL INFO Channel {c:02d}/0 : {g}[{g}] -> {n}[{n}] via P2P/IPC/read",
    "{host}:{pid}:{tid} [{g}] NCCL INFO Connected all rings",
    "{host}:{pid}:{tid} [{g}] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB eth0:10.0.{n}.{g}<0>",
    "{host}:{pid}:{tid} [{g}] NCCL INFO comm 0x{pid:x}{tid:x} rank {rank} nranks 512 cudaDev {g} nvmlDev {g} busId {g}0000 commId 0x{tid:x}{pid:x} - Init COMPLETE",
]
PLAIN_NOISE = [
    "INFO 2024-05-01 12:00:00,123 data.py:88] loaded shard {n} of 1024 ({k} samples)",
    "2024-05-01 12:00:00 | INFO | trainer | checkpoint manager idle, next save in {k} steps",
    "/opt/conda/lib/python3.11/site-packages/torch/utils/data/dataloader.py:557: UserWarning: This DataLoader will create 8 worker processes in total.",
    "  warnings.warn(_create_warning_msg(",
    "[W socket.cpp:663] [c10d] The client socket has failed to connect to [localhost]:29500 (errno: 99).",
    "GPU {g} temperature {k}C power {p}W utilization {p}%",
    "wandb: Waiting for W&B process to finish... (success). {k} files uploaded",
]
REAL_TRACE = [
    "Traceback (most recent call last):",
    '  File "/workspace/train.py", line {ln}, in <module>',
    "    main()",
    '  File "/workspace/train.py", line 212, in main',
    "    loss.backward()",
    '  File "/opt/conda/lib/python3.11/site-packages/torch/_tensor.py", line 581, in backward',
    "    torch.autograd.backward(",
    '  File "/opt/conda/lib/python3.11/site-packages/torch/autograd/__init__.py", line 347, in backward',
    "    _engine_run_backward(",
    '  File "/opt/conda/lib/python3.11/site-packages/torch/autograd/graph.py", line 825, in _engine_run_backward',
    "    return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass",
    "torch.distributed.DistBackendError: [{rank}] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: Connection reset by peer",
]
WATCHDOG = ("[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum={s}, "
            "OpType=ALLREDUCE, NumelIn={k}, NumelOut={k}, Timeout(ms)=600000) ran for 600{p:03d} milliseconds before timing out.")
CRI_MAX = 16384  # kubelet splits longer lines into partial (P) chunks of this size


def generate_realistic(out: Path, lines: int, pods: int = 64, seed: int = 7) -> int:
    """A 512-rank job (64 pods x 8 ranks, torchrun --tee: `[rankN]:` prefixes) of mixed frameworks, a
    framework per pod. Per pod, in time order: ~15 % step lines of its framework (rank 0 of the pod
    prints them), ~30 % NCCL INFO lines, ~3 % long JSON log lines (1-6 KB), ~0.2 % lines past 16 KiB
    that kubelet splits into CRI partials, ordinary lines for the rest; at the end every rank prints
    an NCCL watchdog line and a traceback (512 tracebacks), ranks interleaved line by line."""
    rng = random.Random(seed)
    per_pod = max(100, lines // pods)
    written = 0
    for p in range(pods):
        framework = REAL_FRAMEWORKS[p % len(REAL_FRAMEWORKS)]
        step_line = REAL_STEPS[framework]
        pod = f"llm-train-worker-{p}"
        uid = uuid.uuid5(uuid.NAMESPACE_URL, f"bench/{pod}")
        d = out / "pods" / f"team-a_{pod}_{uid}" / "pytorch"
        d.mkdir(parents=True, exist_ok=True)
        host, pid = f"node-{p:03d}", 4000 + p
        ns = 1_714_564_800 * 10**9 + p * 1000
        step = 0
        chunks: list[str] = []
        tail = [[f"{WATCHDOG}"] + REAL_TRACE for _ in range(8)]
        n_tail = sum(len(t) for t in tail)
        n = 0
        while n < per_pod - n_tail:
            ns += rng.randint(20_000, 2_000_000)
            ts = _rfc3339(ns)
            r = rng.random()
            g = rng.randint(0, 7)
            rank = p * 8 + g
            if r < 0.15:
                step += 1
                loss = 2.5 * (0.9995**step) + rng.random() * 0.05
                chunks.append(f"{ts} stdout F [rank{p * 8}]:{step_line(rng, step, loss)}\n")
            elif r < 0.45:
                text = rng.choice(NCCL_NOISE).format(host=host, pid=pid + g, tid=rng.randint(1000, 9999), g=g, c=rng.randint(0, 31),
                                                     n=(g + 1) % 8, rank=rank)
                chunks.append(f"{ts} stdout F [rank{rank}]:{text}\n")
            elif r < 0.48:
                extra = {f"k{i}": "x" * rng.randint(10, 200) for i in range(rng.randint(5, 30))}
                text = json.dumps({"level": "info", "ts": ns / 1e9, "logger": "data.loader", "msg": "batch stats",
                                   "rank": rank, "step": step, "extra": extra})
                chunks.append(f"{ts} stdout F [rank{rank}]:{text}\n")
            elif r < 0.482:
                text = f"[rank{rank}]:config dump " + json.dumps({f"layer{i}": [round(rng.random(), 6) for _ in range(40)] for i in range(rng.randint(60, 120))})
                parts = [text[i : i + CRI_MAX] for i in range(0, len(text), CRI_MAX)]
                for i, part in enumerate(parts):
                    chunks.append(f"{ts} stdout {'F' if i == len(parts) - 1 else 'P'} {part}\n")
            else:
                text = rng.choice(PLAIN_NOISE).format(n=rng.randint(0, 1023), k=rng.randint(1, 9999), p=rng.randint(0, 100), g=g)
                chunks.append(f"{ts} {'stderr' if rng.random() < 0.4 else 'stdout'} F [rank{rank}]:{text}\n")
            n += 1
            if len(chunks) >= 10000:
                written += _flush(d / "0.log", chunks)
        # the end: every rank's watchdog line and traceback, interleaved as they reach the pipe
        pos = [0] * 8
        while any(pos[g] < len(tail[g]) for g in range(8)):
            g = rng.choice([g for g in range(8) if pos[g] < len(tail[g])])
            ns += rng.randint(1_000, 50_000)
            rank = p * 8 + g
            text = tail[g][pos[g]].format(rank=rank, s=step * 8, k=rng.randint(1, 10**8), p=rng.randint(0, 999), ln=212 + g)
            pos[g] += 1
            chunks.append(f"{_rfc3339(ns)} stderr F [rank{rank}]:{text}\n")
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
