"""block_lines.newlines counts a block's lines for the CRI block scan (`_scan_cri_block`'s line count,
`_line_no`'s count of the lines before the one being read) with bytes.replace in place of bytes.count
(CPython's count of one byte walks the bytes one by one). These tests hold it to bytes.count, and the
curator's line counts and records to the line-by-line reference (block_scan=False) on random blocks:
partial chunks, lines of several ranks, step lines, Trainer dicts and bars whose wait is bounded in lines."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings, strategies as st

from gangscope.parsers.records import encode
from gangscope.pipeline.curate.block_lines import newlines
from gangscope.pipeline.curate.container import ContainerCurator
from gangscope.pipeline.curate.stats import CurationStats
from gangscope.pipeline.sources.files import PodIdentity

SETTINGS = settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
POD = PodIdentity(namespace="team-b", pod="gpt-pretrain-worker-3", pod_uid="5e0f2222-3333-4444-5555-666677778888",
                  container="trainer")


@SETTINGS
@given(st.binary(max_size=300).map(lambda b: b.replace(b"a", b"\n")), st.integers(-5, 320),
       st.one_of(st.none(), st.integers(-5, 320)))
def test_newlines_is_bytes_count(block, start, end):
    assert newlines(block, start, end) == block.count(b"\n", start, end)
    assert newlines(block) == block.count(b"\n")


TIMES = [b"2024-06-02T08:10:00.000000001Z", b"2024-06-02T08:10:00.5Z", b"2024-06-02T08:10:01Z"]
TEXTS = [b"[rank0]:node-001:4001:1009 [0] NCCL INFO Connected all rings", b"[rank1]:wandb: Waiting for W&B process to finish...",
         b"[rank0]:{'loss': 2.4133, 'grad_norm': 0.93, 'learning_rate': 9.5e-05, 'epoch': 0.1}",
         b"[rank0]: 12%|#2        | 6/50 [00:03<00:21,  2.01it/s]", b"[rank0]:{'train_runtime': 12.5, 'train_loss': 2.1, 'epoch': 1.0}",
         b"step=3 loss=2.4133 lr=1.00e-04", b"[rank1]:Traceback (most recent call last):",
         b'[rank1]:  File "/workspace/train.py", line 212, in main', b"[rank1]:RuntimeError: CUDA error: out of memory",
         b"  warnings.warn(_create_warning_msg(", b""]
# without the Trainer's dicts, the bars are held and go on at the line bound (`_line_no` tells when, and the
# order of the records shows it); without tracebacks, the two paths give their records in the same order
BARS = [t for t in TEXTS if b"'loss'" not in t and b"train_runtime" not in t and b"rank1]:" not in t]


def lines_of(texts: list[bytes]):
    return st.builds(lambda t, s, tag, text: t + b" " + s + b" " + tag + b" " + text, st.sampled_from(TIMES),
                     st.sampled_from([b"stdout", b"stderr"]), st.sampled_from([b"F", b"F", b"F", b"P"]), st.sampled_from(texts))


def curated(blocks: list[bytes], block_scan: bool, in_order: bool = True) -> tuple[list[bytes], int, int, int]:
    stats = CurationStats()
    cur = ContainerCurator(POD, "cri", stats, block_scan=block_scan)
    cur.trainer_logs.bar_wait_lines = 3  # bars held without their dicts go on after 3 lines: `_line_no` decides when
    records = []
    for block in blocks:
        records += cur.feed_block(block) if block_scan else cur.feed_lines(block.decode().split("\n"))
    lines_read = cur.lines_read
    records += cur.close()
    encoded = [encode(r) for r in records]
    # (not in_order: the two paths may give a step record and a trace closed at the end in either order, as at 0eb4585)
    return encoded if in_order else sorted(encoded), stats.lines, lines_read, stats.bar_steps_released_at_bound


@SETTINGS
@given(st.lists(st.lists(lines_of(TEXTS), min_size=1, max_size=40), min_size=1, max_size=4))
def test_block_scan_counts_lines_as_the_line_reader(blocks):
    raw = [b"\n".join(lines) for lines in blocks]
    assert curated(raw, True, in_order=False) == curated(raw, False, in_order=False)


@SETTINGS
@given(st.lists(st.lists(lines_of(BARS), min_size=1, max_size=40), min_size=1, max_size=4))
def test_bars_go_on_at_the_line_bound_as_on_the_line_reader(blocks):
    raw = [b"\n".join(lines) for lines in blocks]
    assert curated(raw, True) == curated(raw, False)
