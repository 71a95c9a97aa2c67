"""An error line whose text was seen is answered with a copy of the record its text made then
(pipeline/curate/repeats.py). These tests hold its records and stats to the same curator with no
table (nothing remembered) and to the line-by-line reference (block_scan=False), on blocks mixing
repeated warnings with and without rank prefixes on both streams, lines other parsers want too,
tracebacks (a sub-stream with an open record), ANSI codes, partial lines and repeated times; and
they hold the table to its bound."""

from __future__ import annotations

from blocks import curate_blocks, cut
from hypothesis import HealthCheck, given, settings, strategies as st

from gangscope.pipeline.curate import container as container_module
from gangscope.pipeline.curate.container import ContainerCurator
from gangscope.pipeline.curate.repeats import RepeatedErrors
from gangscope.pipeline.curate.stats import CurationStats
from gangscope.pipeline.sources.files import PodIdentity

POD = PodIdentity(namespace="team-b", pod="gpt-pretrain-worker-3", pod_uid="5e0f2222-3333-4444-5555-666677778888",
                  container="trainer")
SETTINGS = settings(max_examples=250, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))

TIMES = [b"2024-06-02T08:10:00.000000001Z", b"2024-06-02T08:10:00.000000002Z", b"2024-06-02T08:10:00.5Z",
         b"2024-06-02T08:10:01Z", b"2024-06-02T08:10:00+02:00"]
PREFIXES = [b"", b"", b"[rank0]:", b"[rank1]:", b"[default0]:", b"3: ", b"[rank1]:2: "]
ERRORS = [
    b"[W socket.cpp:663] [c10d] The client socket has failed to connect to [localhost]:29500 (errno: 99).",
    b"node-1:12345:12401 [0] NCCL WARN Net : Connection closed by remote peer",
    b"torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
    b"RuntimeError: CUDA error: an illegal memory access was encountered",
    b"\x1b[31mRuntimeError: CUDA error: an illegal memory access was encountered\x1b[0m",
    b"ValueError: step=3 loss=nan",  # an error the step parser's prefilter wants too
    b"[2024-06-02 08:10:00,117] [INFO] [logging.py:96:log_dist] [Rank 0] step=7, skipped=3, lr=[0.0001], mom=[(0.9, 0.95)]",
    b"[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=8, "
    b"OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600010 milliseconds before timing out.",
]
OTHER = [b"noise line", b"NCCL INFO ring 0 : 0 -> 1", b"Traceback (most recent call last):",
         b'  File "train.py", line 41, in main', b"    main()", b"", b"step=4 loss=2.41 lr=1e-4",
         b" 12%|#2        | 6/50 [00:03<00:21,  2.01it/s]"]


def curated(blocks: list[bytes], table: RepeatedErrors | None, monkeypatch, block_scan: bool = True):
    monkeypatch.setattr(container_module, "REPEATED_ERRORS", table if table is not None else RepeatedErrors(max_entries=0))
    stats = CurationStats()
    cur = ContainerCurator(POD, "cri", stats, block_scan=block_scan)
    return curate_blocks(cur, stats, blocks)


line = st.tuples(
    st.sampled_from(TIMES), st.sampled_from([b"stdout", b"stdout", b"stderr"]),
    st.sampled_from([b"F"] * 8 + [b"P"]), st.sampled_from(PREFIXES),
    st.one_of(st.sampled_from(ERRORS), st.sampled_from(ERRORS), st.sampled_from(OTHER)),
)


@SETTINGS
@given(lines=st.lists(line, min_size=1, max_size=60), points=st.lists(st.integers(0, 6000), max_size=4),
       repeat=st.integers(1, 3))
def test_repeated_error_lines_give_the_records_of_the_general_path(lines, points, repeat):
    # (pytest's monkeypatch is function-scoped: one per example, by hand)
    from _pytest.monkeypatch import MonkeyPatch
    with MonkeyPatch.context() as mp:
        raw = b"\n".join(b"%s %s %s %s%s" % parts for parts in lines * repeat)
        blocks = cut(raw, points)
        table = RepeatedErrors()
        fast = curated(blocks, table, mp)
        assert fast == curated(blocks, None, mp)
        assert fast[0] == curated([raw], None, mp, block_scan=False)[0]


def test_every_rank_repeating_a_warning_takes_the_table_and_matches(monkeypatch):
    raw = b"\n".join(b"2024-06-02T08:10:%02d.%09dZ %s F [rank%d]:%s" % (n // 1000, n, b"stderr" if n % 5 else b"stdout", n % 4,
                                                                         ERRORS[n % 3]) for n in range(1, 1200))
    table = RepeatedErrors()
    hits = []
    real = RepeatedErrors.record
    monkeypatch.setattr(RepeatedErrors, "record", staticmethod(lambda entry, time, seq: hits.append(1) or real(entry, time, seq)))
    fast = curated(cut(raw, [1000, 30000]), table, monkeypatch)
    # one entry per stream, rank prefix and text (24 pairs): every later line of them is a copy
    assert len(table.entries) == 24 and len(hits) == 1199 - 24
    assert fast == curated(cut(raw, [1000, 30000]), None, monkeypatch)
    assert fast[0] == curated([raw], None, monkeypatch, block_scan=False)[0]


def test_lines_another_parser_wants_are_not_remembered(monkeypatch):
    for text in (ERRORS[5], ERRORS[6]):  # the step parser's prefilter holds on both
        raw = b"\n".join(b"2024-06-02T08:10:00.%09dZ stdout F [rank0]:%s" % (n, text) for n in range(1, 50))
        table = RepeatedErrors()
        fast = curated([raw], table, monkeypatch)
        assert not table.entries, text
        assert fast == curated([raw], None, monkeypatch)


def test_the_table_keeps_its_bound_and_counts_what_it_drops(monkeypatch):
    raw = b"\n".join(b"2024-06-02T08:10:00.%09dZ stdout F [rank%d]:%s" % (n, n, ERRORS[0]) for n in range(1, 51))
    table = RepeatedErrors(max_entries=8)
    fast = curated([raw, raw.replace(b"08:10:00", b"08:10:01")], table, monkeypatch)
    assert len(table.entries) == 8 and table.evicted == 100 - 8
    assert fast == curated([raw, raw.replace(b"08:10:00", b"08:10:01")], None, monkeypatch)
    long = b"2024-06-02T08:10:02Z stdout F [rank0]:" + ERRORS[0] + b" " + b"x" * 2000
    table = RepeatedErrors()
    curated([long, long.replace(b"02Z", b"03Z")], table, monkeypatch)
    assert not table.entries  # past MAX_TEXT: not kept
