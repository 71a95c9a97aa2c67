"""The curation router: partial joining, stream separation, rank demultiplexing, stamping, ids.

These tests use a small line-recording parser so that they test the router, not a parser.
"""

import json

from gangscope.parsers.records import ErrorRecord
from gangscope.pipeline.curate.container import ContainerCurator
from gangscope.pipeline.curate.fluentbit import FluentBitCurator
from gangscope.pipeline.curate.stats import CurationLimits, CurationStats
from gangscope.pipeline.sources.files import PodIdentity

UID = "0c6d1111-2222-3333-4444-555566667777"
POD = PodIdentity(namespace="team-a", pod="llama-train-worker-1", pod_uid=UID, container="pytorch")


class Recorder:
    """Emits one record per line it is fed; holds a record open while lines end with '\\'."""

    PREFILTER = r"WANT"

    def __init__(self):
        self.open = False

    def feed(self, line):
        self.open = line.text.endswith("\\")
        return True, [ErrorRecord(message=line.text, time=line.time, seq=line.seq, rank=line.rank, local_rank=line.local_rank)]

    def close(self):
        return []


def curate(lines, fmt="cri", identity=POD):
    stats = CurationStats()
    cur = ContainerCurator(identity, fmt, stats, parser_classes=(Recorder,))
    out = cur.feed_lines(lines) + cur.close()
    return out, stats


def test_partial_chunks_join_with_their_final_chunk_per_stream():
    out, _ = curate(
        [
            "2024-01-01T00:00:00.1Z stdout P WANT one ",
            "2024-01-01T00:00:00.2Z stderr F WANT other stream",
            "2024-01-01T00:00:00.3Z stdout F two",
        ]
    )
    texts = sorted(r.message for r in out)
    assert texts == ["WANT one two", "WANT other stream"]
    joined = next(r for r in out if r.message == "WANT one two")
    assert joined.time == "2024-01-01T00:00:00.1Z" and joined.stream == "stdout"


def test_a_partial_without_final_chunk_is_flushed_at_the_end_and_counted():
    out, stats = curate(["2024-01-01T00:00:00.1Z stdout P WANT dangling"])
    assert [r.message for r in out] == ["WANT dangling"]
    assert stats.dangling_partials == 1


def test_lines_nobody_wants_produce_nothing():
    out, stats = curate(["2024-01-01T00:00:00.1Z stdout F ordinary line"] * 3)
    assert out == [] and stats.lines == 3


def test_open_record_sees_every_next_line_of_its_stream_only():
    out, _ = curate(
        [
            "2024-01-01T00:00:00.1Z stderr F WANT start \\",
            "2024-01-01T00:00:00.2Z stdout F not for it",
            "2024-01-01T00:00:00.3Z stderr F continuation",
        ]
    )
    assert [r.message for r in out] == ["WANT start \\", "continuation"]


def test_rank_prefixes_are_removed_and_become_ranks():
    out, _ = curate(
        [
            "2024-01-01T00:00:00.1Z stderr F [rank3]: WANT a",
            "2024-01-01T00:00:00.2Z stderr F [default1]:WANT b",
        ]
    )
    assert [(r.message, r.rank, r.local_rank) for r in out] == [("WANT a", 3, None), ("WANT b", None, 1)]


def test_interleaved_ranks_are_separate_substreams():
    out, _ = curate(
        [
            "2024-01-01T00:00:00.1Z stderr F [rank0]: WANT zero \\",
            "2024-01-01T00:00:00.1Z stderr F [rank1]: WANT one \\",
            "2024-01-01T00:00:00.2Z stderr F [rank0]: zero continued",
            "2024-01-01T00:00:00.2Z stderr F [rank1]: one continued",
        ]
    )
    by_rank = {}
    for r in out:
        by_rank.setdefault(r.rank, []).append(r.message)
    assert by_rank == {0: ["WANT zero \\", "zero continued"], 1: ["WANT one \\", "one continued"]}


def test_records_carry_the_pod_identity_job_and_utc_time():
    out, _ = curate(["2024-01-01T02:00:00.5+02:00 stdout F WANT x"])
    r = out[0]
    assert (r.namespace, r.pod, r.container, r.job) == ("team-a", "llama-train-worker-1", "pytorch", "team-a/llama-train")
    assert r.time == "2024-01-01T00:00:00.5Z"
    assert r.source == "cri"


def test_lines_with_equal_times_get_increasing_seq_and_distinct_ids():
    out, _ = curate(["2024-01-01T00:00:00.1Z stdout F WANT a", "2024-01-01T00:00:00.1Z stdout F WANT b"])
    assert [r.seq for r in out] == [0, 1]
    assert out[0].id != out[1].id


def test_ids_are_the_same_for_the_same_line_from_a_file_or_fluent_bit():
    cri_out, _ = curate(["2024-01-01T00:00:00.1Z stderr F WANT boom"])
    stats = CurationStats()
    fb = FluentBitCurator(stats, POD, parser_classes=(Recorder,))
    fb_out = fb.feed_lines(
        [
            '{"time":"2024-01-01T00:00:00.1Z","stream":"stderr","_p":"F","log":"WANT boom",'
            '"kubernetes":{"pod_name":"llama-train-worker-1","namespace_name":"team-a","pod_id":"%s",'
            '"container_name":"pytorch","host":"ip-10-1-2-3"}}' % UID
        ]
    )
    assert fb_out[0].id == cri_out[0].id
    assert fb_out[0].node == "ip-10-1-2-3"


def test_unreadable_envelope_lines_are_counted_not_fatal():
    out, stats = curate(["\x00\x01 binary junk", "2024-01-01T00:00:00.1Z stdout F WANT ok"])
    assert stats.unreadable_lines == 1
    assert [r.message for r in out] == ["WANT ok"]


def test_plain_text_lines_are_numbered_in_order():
    ident = PodIdentity(namespace=None, pod="train")
    out, _ = curate(["WANT a", "x", "WANT b"], fmt="text", identity=ident)
    assert [(r.message, r.seq, r.time) for r in out] == [("WANT a", 1, None), ("WANT b", 3, None)]
    assert out[0].job == "default/train"


def test_block_scan_gives_the_same_records_as_reading_every_line():
    from pathlib import Path

    from gangscope.parsers.records import encode
    from gangscope.pipeline.run import replay

    fixtures = [str(p) for p in (Path(__file__).parent.parent / "fixtures").iterdir() if p.is_dir()]

    def records(block_scan):
        out = []
        replay.run(replay.ReplayOptions(paths=fixtures, block_scan=block_scan), out.extend)
        return sorted(encode(r) for r in out)

    fast, reference = records(True), records(False)
    assert len(fast) > 100
    assert fast == reference


def test_open_records_remember_the_position_of_their_first_line():
    stats = CurationStats()
    cur = ContainerCurator(POD, "cri", stats, parser_classes=(Recorder,))
    out = []
    for offset, line in enumerate(
        [
            "2024-01-01T00:00:00.1Z stderr F WANT start \\",
            "2024-01-01T00:00:00.2Z stdout P partial chunk",
            "2024-01-01T00:00:00.3Z stderr F still open \\",
        ],
        start=100,
    ):
        cur.position = offset
        out.extend(cur.feed_lines([line]))
    assert sorted(cur.open_positions()) == [101, 102]
    cur.position = 103
    cur.feed_lines(["2024-01-01T00:00:00.4Z stderr F done", "2024-01-01T00:00:00.5Z stdout F end of partial"])
    assert cur.open_positions() == []


def test_trainer_dicts_without_a_bar_still_become_step_records():
    from gangscope.pipeline.curate.substream import LINE_PARSERS

    stats = CurationStats()
    cur = ContainerCurator(POD, "cri", stats, parser_classes=LINE_PARSERS)
    lines = [
        f"2024-01-01T00:00:0{i}.1Z stdout F {{'loss': {2.5 - i / 10}, 'grad_norm': 0.5, 'learning_rate': 3e-05, 'epoch': {i / 10}}}"
        for i in range(1, 4)
    ]
    out = cur.feed_lines(lines) + cur.close()
    steps = [r for r in out if r.kind == "step"]
    assert [(s.loss, s.dialect) for s in steps] == [(2.4, "hf_trainer"), (2.3, "hf_trainer"), (2.2, "hf_trainer")]
    assert len({s.id for s in steps}) == 3


def _trainer_dict(i: int) -> str:
    return f"2024-01-01T00:00:{i:02d}.1Z stdout F {{'loss': {2.5 - i / 10}, 'grad_norm': 0.5, 'learning_rate': 3e-05, 'epoch': {i / 10}}}"


def test_trainer_dicts_without_a_bar_or_plan_go_on_line_by_line():
    """PrinterCallback to a log file (no bar, no plan printed): each dict is a step record as soon as
    its line is read, step null (nothing tells it), not held until the container's log ends."""
    from gangscope.pipeline.curate.substream import LINE_PARSERS

    cur = ContainerCurator(POD, "cri", CurationStats(), parser_classes=LINE_PARSERS)
    for i in range(1, 4):
        steps = [r for r in cur.feed_lines([_trainer_dict(i)]) if r.kind == "step"]
        assert [(s.loss, s.step, s.epoch) for s in steps] == [(2.5 - i / 10, None, i / 10)]
    assert [r for r in cur.close() if r.kind == "step"] == []


def test_trainer_dicts_wait_while_a_bar_is_being_written_in_pieces_and_take_its_steps():
    """A bar with no newline yet reaches the log as partial (P) chunks: the dicts wait for it."""
    from gangscope.pipeline.curate.substream import LINE_PARSERS

    cur = ContainerCurator(POD, "cri", CurationStats(), parser_classes=LINE_PARSERS)
    bar = [f"{n * 10}%|{'█' * n}{' ' * (10 - n)}| {n}/10 [00:0{n}<00:01,  1.50it/s]" for n in range(1, 5)]
    lines = ["2024-01-01T00:00:00.5Z stderr P \r" + "\r".join(bar[:2])]
    lines += [_trainer_dict(i) for i in (1, 2)]
    assert [r for r in cur.feed_lines(lines) if r.kind == "step"] == []
    out = cur.feed_lines(["2024-01-01T00:00:05.0Z stderr F \r" + "\r".join(bar[2:])]) + cur.close()
    steps = [r for r in out if r.kind == "step"]
    assert [(s.dialect, s.step, s.total_steps, s.loss) for s in steps] == [
        ("hf_trainer", 1, 10, 2.4), ("hf_trainer", 2, 10, 2.3)]


def test_custom_torchrun_prefix_templates_give_rank_and_local_rank():
    from gangscope.parsers.lines import strip_rank_prefixes

    assert strip_rank_prefixes("[default1|rank3]: [rank3]: Traceback (most recent call last):") == (
        "Traceback (most recent call last):",
        3,
        1,
    )
    assert strip_rank_prefixes("[default0]:  indented") == ("  indented", None, 0)


def _fluentbit_line(pod: int, text: str, t: str = "2024-01-01T00:00:00.1Z") -> str:
    return json.dumps({"time": t, "stream": "stderr", "_p": "F", "log": text,
                       "kubernetes": {"pod_name": f"train-worker-{pod}", "namespace_name": "team-a",
                                      "pod_id": f"uid-{pod}", "container_name": "pytorch"}})  # fmt: skip


def test_fluent_bit_curators_are_capped_and_the_least_recently_fed_go_first():
    stats = CurationStats()
    fb = FluentBitCurator(stats, POD, parser_classes=(Recorder,), limits=CurationLimits(max_containers=64))
    busy = None
    for pod in range(1, 2_001):
        fb.feed_lines([_fluentbit_line(0, "WANT busy"), _fluentbit_line(pod, "WANT x")])
        busy = busy or fb.curators[("team-a", "uid-0", "pytorch")]
        assert len(fb.curators) <= 64
    assert fb.curators[("team-a", "uid-0", "pytorch")] is busy  # fed all along: never evicted
    assert stats.containers_evicted == 2_001 - len(fb.curators)


def test_an_evicted_containers_open_record_is_flushed_not_lost():
    stats = CurationStats()
    fb = FluentBitCurator(stats, POD, limits=CurationLimits(max_containers=50))
    out = []
    for pod in range(1_000):
        out += fb.feed_lines([_fluentbit_line(pod, "Traceback (most recent call last):"),
                              _fluentbit_line(pod, '  File "/workspace/train.py", line 9, in <module>')])  # fmt: skip
    out += fb.close()
    traces = [r for r in out if r.kind == "trace"]
    assert sorted(t.pod for t in traces) == sorted(f"train-worker-{p}" for p in range(1_000))
    assert stats.open_records_flushed >= 1_000 - 50


def _cut_inside_a_character(tail_first: bool = False) -> tuple[bytes, str]:
    # containerd cuts a long line into 16 KiB P chunks by bytes (internal/cri/io/logger.go), so a
    # chunk may end inside a multi-byte character (a tqdm bar's '█' is 3 bytes) and the next begin
    # with its rest
    text = "WANT Epoch 1: " + "█" * 6000 + " 100/100"
    raw = text.encode()
    cut = 16384 - 40
    while not 0x80 <= raw[cut] < 0xC0:
        cut += 1
    lines = [b"2024-01-01T00:00:00.1Z stdout P " + raw[:cut], b"2024-01-01T00:00:00.2Z stderr F WANT other stream",
             b"2024-01-01T00:00:00.3Z stdout F " + raw[cut:]]
    return b"\n".join(lines), text


def _curate_blocks(blocks, block_scan):
    stats = CurationStats()
    cur = ContainerCurator(POD, "cri", stats, parser_classes=(Recorder,), block_scan=block_scan)
    out = []
    for block in blocks:
        out += cur.feed_block(block)
    return out + cur.close(), stats


def test_a_character_the_runtime_cut_between_two_chunks_is_joined_whole_and_not_counted_invalid():
    data, text = _cut_inside_a_character()
    first_line_end = data.index(b"\n")
    for block_scan in (True, False):
        for blocks in ([data], [data[:first_line_end], data[first_line_end + 1 :]]):
            out, stats = _curate_blocks(blocks, block_scan)
            assert sorted(r.message for r in out) == sorted([text, "WANT other stream"]), (block_scan, len(blocks))
            assert stats.invalid_utf8_lines == 0 and stats.dangling_partials == 0


def test_bytes_that_are_not_utf8_are_still_counted_around_a_cut():
    data, _text = _cut_inside_a_character()
    bad = data + b"\n2024-01-01T00:00:00.4Z stdout F WANT \xff junk"
    # a P chunk ending inside a character whose next chunk does not hold its rest
    dangling = b"2024-01-01T00:00:00.1Z stdout P WANT bar \xe2\x96\n2024-01-01T00:00:00.2Z stdout F plain rest"
    for block_scan in (True, False):
        out, stats = _curate_blocks([bad], block_scan)
        assert stats.invalid_utf8_lines == 1 and any(r.message == "WANT \ufffd junk" for r in out)
        out, stats = _curate_blocks([dangling], block_scan)
        assert stats.invalid_utf8_lines == 1 and [r.message for r in out] == ["WANT bar \ufffdplain rest"]
