"""The CRI block scan reads a wanted line's header in bytes and works out its seq with one search
where it can (ContainerCurator._seq_before: no line since the skipped ones starts with the line's
time, and its stream's last time is another, so its seq is 0 without a look back). These tests hold
its records to the line-by-line reference path's (block_scan=False), on blocks where times repeat
in and across streams, near and far apart, where a time shows in a text, where lines are partial,
carry other tags or bytes that are not UTF-8, and where a block ends anywhere between lines.
"""

from __future__ import annotations

from blocks import curate_blocks, cut
from hypothesis import HealthCheck, given, settings, strategies as st

from gangscope.pipeline.curate.container import ContainerCurator
from gangscope.pipeline.curate.stats import CurationStats
from gangscope.pipeline.sources.files import PodIdentity

POD = PodIdentity(namespace="team-a", pod="llama-train-worker-1", pod_uid="0c6d1111-2222-3333-4444-555566667777",
                  container="pytorch")
SETTINGS = settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))

# a few times, so that one comes back after others (ASCII, trimmed fractions, one not UTF-8, one empty)
TIMES = [b"2024-05-01T12:00:00.000000001Z", b"2024-05-01T12:00:00.000000002Z", b"2024-05-01T12:00:00.5Z",
         b"2024-05-01T12:00:01Z", b"2024-05-01T12:00:01\xffZ", b"2024-05-01T12:00:01\xfeZ", b""]
# wanted (steps, errors, traces) and unwanted texts, rank-prefixed or not; one holds a time of TIMES
TEXTS = [b"noise line", b"[rank0]:noise", b"[rank1]: NCCL INFO ring", b"epoch 1/3 step 7/50 loss 2.31",
         b"[rank0]:step=4 loss=1.5 lr=3e-4", b"[rank1]:{'loss': 2.5, 'grad_norm': 1.3, 'learning_rate': 3e-04, 'epoch': 0.01}",
         b"Traceback (most recent call last):", b'  File "a.py", line 3, in f', b"ValueError: bad value",
         b"[rank1]: Traceback (most recent call last):", b"[rank1]: ValueError: x", b"RuntimeError: NCCL error",
         b"[W socket.cpp:663] [c10d] The client socket has failed to connect", b"2024-05-01T12:00:00.5Z stdout F x",
         b"caf\xc3\xa9 step 3 loss 1.0", b"", b" 10%|#         | 5/50 [00:01<00:09,  4.9it/s]"]


def curated(blocks: list[bytes], block_scan: bool) -> list[bytes]:
    stats = CurationStats()
    cur = ContainerCurator(POD, "cri", stats, block_scan=block_scan)
    return curate_blocks(cur, stats, blocks)[0]


@SETTINGS
@given(
    lines=st.lists(st.tuples(st.sampled_from(TIMES), st.sampled_from([b"stdout", b"stderr", b"stdin"]),
                             st.sampled_from([b"F", b"F", b"F", b"F", b"P", b"Fx"]), st.sampled_from(TEXTS)),
                   min_size=1, max_size=60),
    points=st.lists(st.integers(0, 6000), max_size=5),
)
def test_the_block_scan_gives_the_records_of_the_line_by_line_path(lines, points):
    raw = [b" ".join(parts) for parts in lines]
    assert curated(cut(b"\n".join(raw), points), True) == curated([b"\n".join(raw)], False)


@SETTINGS
@given(order=st.lists(st.tuples(st.integers(0, 3), st.booleans(), st.booleans()), min_size=2, max_size=80))
def test_a_time_seen_before_the_skipped_lines_keeps_counting_the_run(order):
    # mostly distinct times, some equal to one a few lines back (the look back must be taken then)
    raw, t = [], 0
    for back, wanted, stderr in order:
        t += 1
        time = f"2024-05-01T12:00:00.{max(t - back, 0):09d}Z".encode()
        text = b"[rank0]:step=%d loss=1.5" % t if wanted else b"[rank0]:noise"
        raw.append(b"%s %s F %s" % (time, b"stderr" if stderr else b"stdout", text))
    assert curated(cut(b"\n".join(raw), [len(raw) // 2]), True) == curated([b"\n".join(raw)], False)


def test_times_of_other_bytes_that_read_as_one_text_make_one_run_on_both_paths():
    # \xff and \xfe both read as U+FFFD: the line-by-line path counts the three lines as one run of
    # one time (seq 0, 1, 2); the look back compared the bytes and said 1
    raw = [b"2024-05-01T12:00:01\xffZ stdout F noise line", b"2024-05-01T12:00:01\xfeZ stdout F noise line",
           b"2024-05-01T12:00:01\xffZ stdout F epoch 1/3 step 7/50 loss 2.31"]
    scanned = curated([b"\n".join(raw)], True)
    assert scanned == curated([b"\n".join(raw)], False)
    assert [b'"seq":2' in record for record in scanned] == [True]


# gaps between lines around the trace parser's quiet times (message_gap_s 0.05, idle_s 5): an open
# trace is closed by the time of a line of any stream, which the block scan reads in bytes. Complete
# lines only: a joined partial that a relaxed prefilter hits and its parser does not want makes its
# sub-stream early on the block path, and the records left open at the end then come out in another
# order (the same records; seen on a3fbfb6 too, left to its own fix)
GAPS = [0, 0, 1, 20, 30, 80, 2_000, 6_000]  # hundredths of a second
TRACE_TEXTS = [b"Traceback (most recent call last):", b'  File "a.py", line 3, in f', b"    x = f()",
               b"ValueError: bad value", b"during handling", b"[rank1]: Traceback (most recent call last):",
               b'[rank1]:   File "b.py", line 9, in g', b"[rank1]:     x = f()", b"[rank1]: RuntimeError: boom", b"[rank1]: noise",
               b"[rank0]:step=4 loss=1.5 lr=3e-4", b"RuntimeError: NCCL error", b"noise line", b"x" * 30]


@SETTINGS
@given(lines=st.lists(st.tuples(st.sampled_from(GAPS), st.sampled_from([b"stdout", b"stderr"]),
                                st.just(b"F"), st.sampled_from(TRACE_TEXTS)),
                      min_size=2, max_size=80),
       points=st.lists(st.integers(0, 6000), max_size=5))
def test_open_records_expire_at_the_same_line_on_both_paths(lines, points):
    raw, t = [], 0
    for gap, stream, tag, text in lines:
        t += gap
        time = b"2024-05-01T12:%02d:%02d.%02dZ" % (t // 6000 % 60, t // 100 % 60, t % 100)
        raw.append(b" ".join((time, stream, tag, text)))
    assert curated(cut(b"\n".join(raw), points), True) == curated([b"\n".join(raw)], False)


def test_the_unwanted_lines_of_an_open_rank_prefixed_trace_reach_it_on_both_paths():
    # no prefilter hits "[rank1]: noise" or a frame's code line: the block scan reads them because
    # the trace of their stream and rank is open (block_lines.may_continue)
    head = b"2024-05-01T12:00:00.1Z stderr F [rank1]: Traceback (most recent call last):"
    frame = b'2024-05-01T12:00:00.2Z stderr F [rank1]:   File "b.py", line 9, in g'
    other = b"2024-05-01T12:00:00.25Z stderr F [rank2]:     y = g()"
    end = b"2024-05-01T12:00:00.4Z stderr F [rank1]: RuntimeError: boom"
    for middle in ([b"2024-05-01T12:00:00.15Z stderr F [rank1]: noise", frame],
                   [frame, other, b"2024-05-01T12:00:00.3Z stderr F [rank1]:     x = f()"]):
        raw = b"\n".join([head, *middle, end])
        assert curated([raw], True) == curated([raw], False)
