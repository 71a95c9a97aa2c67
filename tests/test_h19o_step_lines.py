"""A step line that only the step parser reads goes to it straight from the CRI block scan
(pipeline/curate/step_lines.py: no `_logical`, no `SubStream.feed`, no `StepParser.feed` tests).
These tests hold its records, stats and state to the path every other line takes (the same curator
with `step_only = -1`) and to the line-by-line reference (block_scan=False), on blocks mixing step
lines of each family with and without rank prefixes, bars, the Trainer's dicts, launcher heads,
ANSI codes, errors, tracebacks (a sub-stream with an open record), partial lines and repeated times.
"""

from __future__ import annotations

import re

from blocks import curate_blocks, cut
from hypothesis import HealthCheck, given, settings, strategies as st

from gangscope.parsers.steps import StepParser
from gangscope.pipeline.curate import container as container_module
from gangscope.pipeline.curate.container import ContainerCurator
from gangscope.pipeline.curate.stats import CurationStats
from gangscope.pipeline.curate.substream import LINE_PARSERS
from gangscope.pipeline.sources.files import PodIdentity

POD = PodIdentity(namespace="team-b", pod="gpt-pretrain-worker-3", pod_uid="5e0f2222-3333-4444-5555-666677778888",
                  container="trainer")
SETTINGS = settings(max_examples=250, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))

TIMES = [b"2024-06-02T08:10:00.000000001Z", b"2024-06-02T08:10:00.000000002Z", b"2024-06-02T08:10:00.5Z",
         b"2024-06-02T08:10:01Z"]
PREFIXES = [b"", b"", b"[rank0]:", b"[rank1]:", b"[default0]:", b"3: ", b"[rank1]:2: ", b"[default0]:[1,1]<stdout>:"]
# step lines of the families (%d: the step), in the layouts their frameworks print
STEPS = [
    b"step=%d loss=2.4133 lr=1.00e-04",
    b" iteration %8d/   50000 | consumed samples:         2048 | elapsed time per iteration (ms): 812.4 | "
    b"learning rate: 1.000000E-04 | global batch size:   256 | lm loss: 2.413307E+00 | loss scale: 32768.0 | "
    b"grad norm: 0.214 | number of skipped iterations:   0 | number of nan iterations:   0 |",
    b"[2024-06-02 08:10:00,117] [INFO] [logging.py:96:log_dist] [Rank 0] step=%d, skipped=0, lr=[0.0001], mom=[(0.9, 0.95)]",
    b"[titan] 2024-06-02 08:10:00,117 - root - INFO - step: %d  loss:  2.41330  memory: 38.12GiB(48.20%%)  tps: 4,812  mfu: 38.4%%",
    b"{'loss': 2.4133, 'grad_norm': 0.93, 'learning_rate': 9.5e-05, 'epoch': 0.%d}",
    b"{'loss': nan, 'grad_norm': nan, 'learning_rate': 9.5e-05, 'epoch': 0.%d}",
    b" 12%%|#2        | %d/50 [00:03<00:21,  2.01it/s]",
    b"Epoch 1/3 step %d/50 loss 2.41",
    b"\x1b[32mstep: %d\x1b[0m loss: 2.4",
    b"[1,0]<stdout>:step=%d loss=2.4133",
    b"step=%d loss=2.4133 lr=1.00e-04\rstep=7 loss=2.4",
    b"step %d of the warmup is slow, see the docs",
    b"[epoch=1][batch=%d/20]:",
    b"Training: %d/50 [00:03<00:21,  2.01it/s, loss=2.41]",
]
OTHER = [b"noise line", b"NCCL INFO ring 0 : 0 -> 1", b"Traceback (most recent call last):",
         b'  File "train.py", line 41, in main', b"RuntimeError: CUDA error: an illegal memory access was encountered",
         b"", b"   ", b"ValueError: step=3 loss=nan", b"Epoch 2/5", b"epoch 3 step 4/10 loss 2.0",
         b"\t Train loss/train/total: 2.3338", b"\t Train time/batch: 12"]


def curated(blocks: list[bytes], fast: bool = True, block_scan: bool = True) -> tuple[list[bytes], dict]:
    stats = CurationStats()
    cur = ContainerCurator(POD, "cri", stats, block_scan=block_scan)
    if not fast:
        cur.step_only = -1
    return curate_blocks(cur, stats, blocks)


line = st.tuples(
    st.sampled_from(TIMES), st.sampled_from([b"stdout", b"stdout", b"stderr"]),
    st.sampled_from([b"F"] * 8 + [b"P"]), st.sampled_from(PREFIXES),
    st.one_of(st.tuples(st.sampled_from(STEPS), st.integers(0, 40)).map(lambda t: t[0] % t[1] if b"%d" in t[0] else t[0]),
              st.sampled_from(OTHER)),
)


@SETTINGS
@given(lines=st.lists(line, min_size=1, max_size=60), points=st.lists(st.integers(0, 6000), max_size=4))
def test_step_lines_straight_to_their_parser_give_the_records_of_every_other_path(lines, points):
    raw = b"\n".join(b"%s %s %s %s%s" % parts for parts in lines)
    blocks = cut(raw, points)
    fast = curated(blocks)
    assert fast == curated(blocks, fast=False)
    assert fast[0] == curated([raw], block_scan=False)[0]


def test_runs_of_each_family_take_the_straight_path_and_match(monkeypatch):
    taken = []
    real = container_module.feed_step_line

    def counted(*args):
        done = real(*args)
        taken.append(done)
        return done

    monkeypatch.setattr(container_module, "feed_step_line", counted)
    for template in STEPS[:6]:
        # a line another parser's prefilter wants too (DeepSpeed's '[Rank ', a nan loss) goes the whole way
        text = (template % 7).decode()
        straight = not any(re.search(cls.PREFILTER, text) for cls in LINE_PARSERS if cls is not StepParser)
        raw = b"\n".join(b"2024-06-02T08:10:%02d.%09dZ stdout F [rank%d]:%s" % (n // 1000, n, n % 2, template % (n // 2))
                         for n in range(1, 400))
        taken.clear()
        fast = curated(cut(raw, [1000, 30000]))
        # the first line of each sub-stream makes it: every later one goes straight
        if straight:
            assert taken.count(True) >= len(taken) - 2 > 300, template
        else:
            assert not taken, template
        assert fast == curated(cut(raw, [1000, 30000]), fast=False)
        assert fast[0] == curated([raw], block_scan=False)[0]
