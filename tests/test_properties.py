"""Properties of the parsers and the curator under hostile input (hypothesis).

Invariants: no exception escapes a decoder, parser or curator, whatever the bytes; an
open record is always released by close(); memory a record keeps is bounded; and for
valid input the records do not depend on how the input was cut into blocks or how the
lines of two ranks were interleaved. Examples are derandomized so that CI is
reproducible; `bench/fuzz_parsers.py` explores further. The regression tests at the end
are inputs the fuzzer found.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from blocks import cut

from gangscope.parsers import envelopes
from gangscope.parsers import times as rfc3339
from gangscope.parsers.errors import ErrorDetector, classify_trace, detect
from gangscope.parsers.events import Skip, decode_event_stream, decode_object
from gangscope.parsers.lines import Line, strip_rank_prefixes
from gangscope.parsers.records import ChainLink, ErrorRecord, Frame, StepRecord, TraceRecord, encode
from gangscope.parsers.redact import Redactor
from gangscope.parsers.steps import StepParser
from gangscope.parsers.trace_blocks import parse_block
from gangscope.parsers.traces import TraceParser
from gangscope.pipeline.curate.container import ContainerCurator
from gangscope.pipeline.curate.fluentbit import FluentBitCurator
from gangscope.pipeline.curate.stats import CurationStats
from gangscope.pipeline.sources.files import PodIdentity, decode_block

ROOT = Path(__file__).resolve().parent.parent
UID = "0c6d1111-2222-3333-4444-555566667777"
POD = PodIdentity(namespace="team-a", pod="llama-train-worker-1", pod_uid=UID, container="pytorch")

PROPS = settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
FEW = settings(PROPS, max_examples=25)

TRACE_FILES = sorted((ROOT / "fixtures" / "traces").glob("*.txt"))
POD_LOGS = sorted(
    p for group in ("runs", "public", "dialects") for p in (ROOT / "fixtures" / group).glob("*/pods/*/*/0.log")
)

# Pieces of the lines the parsers look for, so that random text reaches their deeper states.
TOKENS = [
    "Traceback (most recent call last):", '  File "/w/train.py", line 12, in main', "    main()", "           ^^^^^",
    "KeyError: 'lr'", "ValueError: bad\nvalue", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
    "", " ", "The above exception was the direct cause of the following exception:",
    "During handling of the above exception, another exception occurred:",
    "  + Exception Group Traceback (most recent call last):", "  | ValueError: x", "  +-+---------------- 1 ----------------",
    "    +---------------- 2 ----------------", "  +------------------------------------", "  | ExceptionGroup: g (2 sub-exceptions)",
    "Fatal Python error: Segmentation fault", "Thread 0x00007f3a (most recent call first):", "  File \"a.py\", line 3 in f",
    "Current thread 0x00007f3a (most recent call first):", "Extension modules: numpy (total: 1)", "Timeout (0:00:00.200000)!",
    '"""', "multiprocessing.pool.RemoteTraceback: ", "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
    "============================================================", "Root Cause (first observed failure):", "[0]:",
    "  rank      : 3 (local_rank: 3)", "  exitcode  : -9 (pid: 4242)", "[rank0]: ", "[rank1]:", "[default0]:", "[rank 2]: ",
    "loss", "step", "Step", "epoch", "Epoch 1/3", "1/10", "=", ": ", "|", "nan", "inf", "-1e999", "0.5", "12", "%|", "it/s]",
    "\r", "\b", "\x1b[31m", "\x1b[0m", "{'loss': 0.5, 'learning_rate': 1e-05, 'epoch': 0.1}", "[R3]",
    "NCCL WARN", "NCCL error", "Watchdog caught collective operation timeout", "[Errno 28] No space left on device",
    "CUDA error: an illegal memory access was encountered", "NVRM: Xid (PCI:0000:3b:00): 79", "exitcode: -9",
    "HF_TOKEN=", "hf_", "Authorization: Bearer ", "-----BEGIN RSA PRIVATE KEY-----", "://u:p@h", "password=",
    "\x00", "\ufffd", "\u2028", "日本", "\U0001f600",
]  # fmt: skip

token_text = st.lists(st.one_of(st.sampled_from(TOKENS), st.text(max_size=12)), max_size=12).map("".join)
log_text = st.one_of(token_text, st.text(max_size=200))
times = st.one_of(
    st.builds("2024-05-01T12:{:02d}:{:02d}.{}Z".format, st.integers(0, 59), st.integers(0, 59),
              st.text("0123456789", min_size=1, max_size=9)),
    st.builds("2024-05-01T12:00:00{}".format, st.sampled_from(["Z", ".Z", ".x1Z", "+02:00", ".5+05:30", "+99:99", ""])),
    st.text(max_size=30),
)  # fmt: skip


def cri_line(time: str, stream: str, tag: str, text: str) -> str:
    return f"{time} {stream} {tag} {text}"


cri_lines = st.lists(
    st.builds(cri_line, times, st.sampled_from(["stdout", "stderr", "stdin"]), st.sampled_from(["F", "P", "F:x", "X"]), log_text),
    max_size=40,
)


def curate_blocks(blocks: list[bytes], fmt: str = "cri", block_scan: bool = True):
    stats = CurationStats()
    if fmt == "fluentbit":
        cur = FluentBitCurator(stats, POD)
    else:
        cur = ContainerCurator(POD, fmt, stats, block_scan=block_scan)
    out = []
    for block in blocks:
        out.extend(cur.feed_block(block))
    out.extend(cur.close())
    return out, stats


def encoded(records) -> list[bytes]:
    return [encode(r) for r in records]


# ----------------------------------------------------------------------------- envelopes


@PROPS
@given(log_text)
@example('{"log":' * 20000)
@example("[" * 50000)
@example("2024-05-01T12:00:00.abcZ stdout F x")
def test_envelope_decoders_never_raise_on_any_text(raw):
    for decode in envelopes.DECODERS.values():
        env = decode(raw)
        assert env is None or isinstance(env, envelopes.Envelope)
    assert envelopes.detect_format([raw, raw]) in envelopes.FORMATS


@PROPS
@given(st.binary(max_size=3000))
def test_envelope_decoders_never_raise_on_any_bytes(data):
    lines, invalid = decode_block(data)
    assert invalid <= len(lines)
    for raw in lines:
        for decode in envelopes.DECODERS.values():
            decode(raw)


@PROPS
@given(times)
def test_time_helpers_never_raise(ts):
    utc = rfc3339.to_utc(ts)
    assert utc is None or utc.endswith("Z")
    seconds = rfc3339.seconds(ts)
    assert seconds is None or isinstance(seconds, float)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@PROPS
@given(st.dictionaries(st.sampled_from(["log", "message", "time", "@timestamp", "date", "stream", "_p", "kubernetes"]),
                       json_values, max_size=8))  # fmt: skip
def test_shipper_records_with_wrong_types_never_raise(record):
    env = envelopes.envelope_from_record(record)
    assert env is None or isinstance(env.text, str)
    raw = json.dumps(record)
    envelopes.decode_docker(raw)
    envelopes.decode_fluentbit(raw)


@PROPS
@given(st.lists(log_text, max_size=20))
def test_rank_prefixes_never_raise_and_only_shorten(texts):
    for text in texts:
        rest, rank, local_rank = strip_rank_prefixes(text)
        assert text.endswith(rest)
        assert rank is None or rank >= 0


# ----------------------------------------------------------------------------- the curator


def assert_read_without_failure(stats: CurationStats, data: bytes) -> None:
    """Nothing raised inside the curator, not even where isolation would catch it and go on
    (a parser or record that raises is counted in stats.failures), and every line was read."""
    assert stats.failures.summary() == []
    assert stats.lines == data.count(b"\n") + 1
    assert stats.unreadable_lines <= stats.lines and stats.invalid_utf8_lines <= stats.lines


@PROPS
@given(st.sampled_from(["cri", "docker", "fluentbit", "text"]), st.binary(max_size=3000), st.booleans())
def test_curator_never_raises_on_arbitrary_bytes(fmt, data, block_scan):
    _out, stats = curate_blocks([data], fmt, block_scan)
    assert_read_without_failure(stats, data)


@PROPS
@given(cri_lines, st.lists(st.integers(0, 100), max_size=6))
def test_curator_never_raises_on_cri_shaped_lines_in_any_blocks(lines, points):
    data = "\n".join(lines).encode("utf-8", "surrogatepass")
    for block_scan in (True, False):
        _out, stats = curate_blocks(cut(data, points), block_scan=block_scan)
        assert_read_without_failure(stats, data)


BOTH_PATHS = pytest.mark.parametrize("block_scan", [False, True], ids=["lines", "scan"])


@BOTH_PATHS
@FEW
@given(path=st.sampled_from(POD_LOGS), points=st.lists(st.integers(0, 10_000), min_size=1, max_size=8))
def test_records_of_a_real_log_do_not_depend_on_its_blocks(path, points, block_scan):
    data = path.read_bytes().rstrip(b"\n")
    whole, _ = curate_blocks([data], block_scan=block_scan)
    pieces, _ = curate_blocks(cut(data, points), block_scan=block_scan)
    assert encoded(pieces) == encoded(whole)


partial_chunks = st.lists(
    st.tuples(st.sampled_from(["stdout", "stderr"]), st.sampled_from(["P", "F"]), token_text), min_size=1, max_size=25
)


@BOTH_PATHS
@PROPS
@given(chunks=partial_chunks, points=st.lists(st.integers(0, 100), max_size=5))
def test_partials_without_their_final_chunk_are_flushed_and_counted(chunks, points, block_scan):
    lines = [cri_line(f"2024-05-01T12:00:00.{i:09d}Z", s, tag, text) for i, (s, tag, text) in enumerate(chunks)]
    data = "\n".join(lines).encode("utf-8", "surrogatepass")
    whole, stats = curate_blocks([data], block_scan=block_scan)
    pieces, _ = curate_blocks(cut(data, points), block_scan=block_scan)
    assert encoded(pieces) == encoded(whole)
    last_tag = {}
    for stream, tag, _text in chunks:
        last_tag[stream] = tag
    assert stats.dangling_partials == sum(1 for tag in last_tag.values() if tag == "P")


def _rank_lines(path: Path, rank: int) -> list[str]:
    # `[rankN]:` streams lose their blank lines (torch's excepthook prefixes every line it prints)
    return [f"[rank{rank}]: {line}" for line in path.read_text().splitlines() if line.strip()]


def _traces_of(lines: list[str]):
    stamped = [cri_line(f"2024-05-01T12:00:00.{i:09d}Z", "stderr", "F", text) for i, text in enumerate(lines)]
    out, _ = curate_blocks(["\n".join(stamped).encode()])
    return sorted((r.rank, r.exception_type, r.message, r.text, r.fingerprint) for r in out if r.kind == "trace")


INTERLEAVED = [("plain.py311.txt", "chained.py311.txt"), ("notes.py312.txt", "plain.py313.txt"), ("pool.py311.txt", "dataloader.py311.txt")]


@FEW
@given(st.sampled_from(INTERLEAVED), st.lists(st.booleans(), max_size=200))
def test_two_ranks_interleaved_give_the_traces_of_each_rank_alone(pair, picks):
    a, b = (_rank_lines(ROOT / "fixtures" / "traces" / name, rank) for rank, name in enumerate(pair))
    merged, i, j = [], 0, 0
    for pick in picks:
        if pick and i < len(a):
            merged.append(a[i])
            i += 1
        elif j < len(b):
            merged.append(b[j])
            j += 1
    merged += a[i:] + b[j:]
    alone = _traces_of(a) + _traces_of(b)
    assert len(alone) >= 2
    assert _traces_of(merged) == sorted(alone)


# ----------------------------------------------------------------------------- traces


def feed_all(parser, lines, time="2024-05-01T12:00:00.000000000Z"):
    out = []
    for i, text in enumerate(lines):
        _consumed, records = parser.feed(Line(time, i, text))
        out.extend(records)
    return out


@pytest.mark.parametrize("path", TRACE_FILES, ids=lambda p: p.name)
def test_a_real_traceback_cut_after_every_line_is_released_by_close(path):
    lines = path.read_text().splitlines()
    for k in range(len(lines) + 1):
        parser = TraceParser()
        out = feed_all(parser, lines[:k])
        out += parser.close()
        assert not parser.open
        assert all(isinstance(r, TraceRecord) for r in out)
        assert parser.close() == []


@PROPS
@given(st.sampled_from(TRACE_FILES), st.integers(0, 100_000))
def test_a_real_traceback_cut_at_any_character_never_raises(path, at):
    text = path.read_text()
    lines = text[: at % (len(text) + 1)].split("\n")
    parser = TraceParser()
    feed_all(parser, lines)
    parser.close()
    assert not parser.open
    if lines and lines[0]:
        parse_block(lines)


@PROPS
@given(st.lists(st.tuples(times, log_text), max_size=30), times)
def test_trace_parser_never_raises_on_arbitrary_lines_and_times(lines, later):
    parser = TraceParser()
    for i, (time, text) in enumerate(lines):
        parser.feed(Line(time, i, text))
    parser.expire(later)
    parser.close()
    assert not parser.open


def test_an_endless_traceback_keeps_bounded_text():
    parser = TraceParser(max_lines=200, max_bytes=16 * 1024)
    lines = ["Traceback (most recent call last):"]
    lines += [f'  File "/w/m{i}.py", line {i}, in f{i}\n' + "    x = " + "y" * 500 for i in range(20_000)]
    out = feed_all(parser, lines) + parser.close()
    (trace,) = out
    assert trace.truncated
    assert len(trace.text) <= 16 * 1024 + 200  # the bound, plus the "[... N lines not kept ...]" marker


# ----------------------------------------------------------------------------- steps and errors


@PROPS
@given(st.lists(st.tuples(st.one_of(st.none(), st.integers(0, 7)), log_text), max_size=30))
@example([  # the checks below on records of three dialects, whatever the random examples give
    (None, "{'loss': nan, 'learning_rate': 1e-05, 'epoch': 0.1}"),
    (3, " iteration        3/     100 | consumed samples:          384 | lm loss: 5.000000E+00 |"),
    (None, "[R5] step 5/10 loss=inf lr=0.1"),
])
def test_step_parser_never_raises_and_gives_step_records_of_the_lines_fed(lines):
    parser = StepParser()
    times = [f"2024-05-01T12:00:{i:02d}Z" for i in range(len(lines))]
    out = []
    for i, (rank, text) in enumerate(lines):
        out += parser.feed(Line(times[i], i, text, rank))[1]
    out += parser.close()
    for r in out:
        # step records, and the nan_loss error record of a run of NaN/Inf losses (issue 18)
        assert isinstance(r, StepRecord) or isinstance(r, ErrorRecord) and r.category == "nan_loss"
        assert 0 <= r.seq < len(lines) and r.time == times[r.seq]  # stamped with a line it was fed
        assert lines[r.seq][0] is None or r.rank == lines[r.seq][0]
        json.loads(encode(r))
    assert parser.close() == []  # close released everything


@PROPS
@given(st.lists(log_text, max_size=20))
def test_error_detector_never_raises(texts):
    detector = ErrorDetector()
    for i, text in enumerate(texts):
        detect(text)
        consumed, records = detector.feed(Line(None, i, text))
        assert not consumed and len(records) <= 1


@PROPS
@given(st.lists(st.tuples(st.text(max_size=30), token_text), min_size=1, max_size=4), token_text)
def test_trace_classification_never_raises(links, text):
    chain = [ChainLink(exception_type=t, message=m, frames=[Frame(file="a.py", line=1, function="f", code=m)]) for t, m in links]
    trace = TraceRecord(exception_type=links[-1][0], message=links[-1][1], chain=chain, text=text, frames=chain[-1].frames)
    verdict = classify_trace(trace)
    assert verdict is None or len(verdict) == 2


# ----------------------------------------------------------------------------- events

EVENT = {
    "apiVersion": "v1", "kind": "Event",
    "metadata": {"name": "llama-ft.1", "namespace": "team-a", "uid": "u1"},
    "involvedObject": {"kind": "Pod", "namespace": "team-a", "name": "llama-ft-worker-0"},
    "reason": "Failed", "type": "Warning", "message": "Back-off pulling image",
    "firstTimestamp": "2024-05-01T12:00:00Z", "lastTimestamp": "2024-05-01T12:00:05Z", "count": 2,
}  # fmt: skip


def _decoded(lines):
    items = list(decode_event_stream(lines))
    assert all(isinstance(item, Skip) or item.kind == "event" for item in items)
    return items


@PROPS
@given(st.lists(log_text, max_size=10))
def test_event_decoder_never_raises_on_arbitrary_text(lines):
    _decoded(lines)


@PROPS
@given(st.dictionaries(st.sampled_from(sorted(EVENT) + ["series", "eventTime", "items", "object", "event", "verb"]),
                       json_values, max_size=6))  # fmt: skip
def test_events_with_wrong_types_are_skipped_not_raised(overrides):
    obj = {**EVENT, **overrides}
    items = _decoded([json.dumps(obj)])
    assert items  # a record or a counted skip, never nothing
    list(decode_object(obj))


def test_an_event_with_a_huge_message_is_decoded():
    items = _decoded([json.dumps({**EVENT, "message": "x" * 10_000_000})])
    assert [i.kind for i in items if not isinstance(i, Skip)] == ["event", "event"]


# ----------------------------------------------------------------------------- redaction


@PROPS
@given(log_text)
def test_redaction_never_raises_and_is_idempotent(text):
    r = Redactor()
    once = r.text(text)
    assert r.text(once) == once


# ----------------------------------------------------------------------------- found by fuzzing
# Each was a crash (an exception out of the curator) before its fix.


def test_a_cri_time_with_a_non_numeric_fraction_is_not_a_crash():
    assert rfc3339.seconds("2024-05-01T12:00:00.abcZ") is None
    curate_blocks([b"2024-05-01T12:00:00.abcZ stdout F Traceback (most recent call last):"])


def test_a_docker_line_nested_beyond_the_recursion_limit_is_unreadable_not_a_crash():
    assert envelopes.decode_docker('{"log":' * 100_000) is None
    _out, stats = curate_blocks([b'{"log":' * 100_000], fmt="docker")
    assert stats.unreadable_lines == 1


def test_a_rank_prefix_of_thousands_of_digits_is_text_not_a_crash():
    assert strip_rank_prefixes("[rank" + "1" * 5000 + "]: x")[1] is None


def test_an_events_file_nested_beyond_the_recursion_limit_is_a_counted_skip():
    items = _decoded(["[" * 100_000 + "]" * 100_000])
    assert items and all(isinstance(i, Skip) for i in items)


def test_a_trace_line_with_a_non_numeric_time_fraction_is_not_a_crash():
    parser = TraceParser()
    parser.feed(Line("2024-05-01T12:00:00Z", 0, "Traceback (most recent call last):"))
    parser.feed(Line("2024-05-01T12:00:00.x1Z", 1, '  File "a.py", line 1, in f'))
    assert parser.close()


def test_a_frame_line_number_of_thousands_of_digits_is_not_a_crash():
    lines = ["Traceback (most recent call last):", '  File "a.py", line ' + "9" * 5000 + ", in f", "KeyError: 'x'"]
    assert parse_block(lines) is not None


def test_a_block_that_starts_inside_an_open_traceback_keeps_its_first_line():
    lines = [
        "2024-05-01T12:00:00.000000001Z stderr F Traceback (most recent call last):",
        '2024-05-01T12:00:00.000000002Z stderr F   File "/w/train.py", line 3, in <module>',
        "2024-05-01T12:00:00.000000003Z stderr F     main()",
        "2024-05-01T12:00:00.000000004Z stderr F KeyError: 'lr'",
    ]
    whole, _ = curate_blocks(["\n".join(lines).encode()])
    split, _ = curate_blocks(["\n".join(lines[:2]).encode(), "\n".join(lines[2:]).encode()])
    assert [t.text for t in split if t.kind == "trace"] == [t.text for t in whole if t.kind == "trace"]


def test_an_exception_group_header_indented_like_no_box_ends_the_trace():
    # parse_block looped forever (and grew without bound) on this header before its fix; a
    # subprocess keeps a regression from hanging the suite
    import subprocess
    import sys

    code = (
        "from gangscope.parsers.traces import TraceParser\n"
        "from gangscope.parsers.lines import Line\n"
        "p = TraceParser()\n"
        "for i, t in enumerate([' + Exception Group Traceback (most recent call last):', '  | ValueError: x']):\n"
        "    p.feed(Line('2024-05-01T12:00:00Z', i, t))\n"
        "p.close()\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_a_cri_line_with_an_empty_tag_is_not_a_crash():
    env = envelopes.decode_cri("2024-05-01T12:00:00.000000001Z stdout  text")
    assert env is not None and not env.partial


def curated_both_ways(data: bytes):
    """The records and stats of the block scan, after checking that the line-by-line path gives
    the same records and that neither path raised anything, caught or not."""
    scanned, stats = curate_blocks([data], block_scan=True)
    by_line, line_stats = curate_blocks([data], block_scan=False)
    assert_read_without_failure(stats, data)
    assert_read_without_failure(line_stats, data)
    assert encoded(scanned) == encoded(by_line)
    return scanned, stats


def test_a_skipped_line_with_invalid_utf8_in_its_time_is_not_a_crash_when_seq_is_synced():
    # the scan skips "hello" (no parser wants it) and works out the traceback's seq past it
    data = b"2024-05-01T12:00:00\xffZ stdout F hello\n2024-05-01T12:00:01Z stdout F Traceback (most recent call last):"
    out, stats = curated_both_ways(data)
    assert stats.invalid_utf8_lines == 1
    assert [(r.kind, r.time) for r in out] == [("trace", "2024-05-01T12:00:01Z")]


def test_a_line_with_invalid_utf8_in_its_time_is_not_a_crash_when_an_open_record_expires():
    # the last line's time (nine minutes on) expires the open traceback: it is released whole
    out, stats = curated_both_ways(
        b"2024-05-01T12:00:00Z stdout F Traceback (most recent call last):\n"
        b'2024-05-01T12:00:00Z stdout F   File "a.py", line 1, in f\n'
        b"2024-05-01T12:00:00Z stdout F KeyError: 'x'\n"
        b"2024-05-01T12:09:00\xff stdout F more"
    )  # fmt: skip
    assert stats.invalid_utf8_lines == 1
    (trace,) = [r for r in out if r.kind == "trace"]
    assert trace.exception_type == "KeyError" and trace.text.endswith("KeyError: 'x'")


# Printed by CPython 3.11.7 when a multiprocessing.Pool worker raises an ExceptionGroup
# (Lib/multiprocessing/pool.py wraps it in RemoteTraceback; run here, paths shortened).
POOL_EXCEPTION_GROUP = [
    'multiprocessing.pool.RemoteTraceback: ',
    '"""',
    '  + Exception Group Traceback (most recent call last):',
    '  |   File "/usr/lib/python3.11/multiprocessing/pool.py", line 125, in worker',
    '  |     result = (True, func(*args, **kwds))',
    '  |                     ^^^^^^^^^^^^^^^^^^^',
    '  |   File "/usr/lib/python3.11/multiprocessing/pool.py", line 48, in mapstar',
    '  |     return list(map(*args))',
    '  |            ^^^^^^^^^^^^^^^^',
    '  |   File "/workspace/pool_eg.py", line 3, in f',
    '  |     raise ExceptionGroup("eg", [ValueError(x)])',
    '  | ExceptionGroup: eg (1 sub-exception)',
    '  +-+---------------- 1 ----------------',
    '    | ValueError: 1',
    '    +------------------------------------',
    '"""',
    '',
    'The above exception was the direct cause of the following exception:',
    '',
    '  + Exception Group Traceback (most recent call last):',
    '  |   File "/workspace/pool_eg.py", line 6, in <module>',
    '  |     p.map(f, [1])',
    '  |   File "/usr/lib/python3.11/multiprocessing/pool.py", line 367, in map',
    '  |     return self._map_async(func, iterable, mapstar, chunksize).get()',
    '  |            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^',
    '  |   File "/usr/lib/python3.11/multiprocessing/pool.py", line 774, in get',
    '  |     raise self._value',
    '  | ExceptionGroup: eg (1 sub-exception)',
    '  +-+---------------- 1 ----------------',
    '    | ValueError: 1',
    '    +------------------------------------',
]


def test_a_pool_worker_exception_group_is_one_trace_not_a_crash():
    parser = TraceParser()
    out = feed_all(parser, POOL_EXCEPTION_GROUP) + parser.close()
    (trace,) = out
    assert trace.exception_type == "ExceptionGroup"
    assert [c.exception_type for c in trace.chain][0] == "multiprocessing.pool.RemoteTraceback"


def test_open_records_past_the_limit_are_flushed_early_and_counted():
    from gangscope.pipeline.curate.stats import CurationLimits

    lines = [cri_line(f"2024-05-01T12:00:00.{r:09d}Z", "stderr", "F", f"[rank{r}]: Traceback (most recent call last):") for r in range(5)]
    stats = CurationStats()
    cur = ContainerCurator(POD, "cri", stats, limits=CurationLimits(max_open_records=3))
    early = cur.feed_block("\n".join(lines).encode())
    assert len(cur.open_keys) == 3
    assert stats.open_records_flushed == 2
    assert sorted(t.rank for t in early if t.kind == "trace") == [0, 1]  # the quietest streams went first
    rest = cur.close()
    assert sorted(t.rank for t in rest if t.kind == "trace") == [2, 3, 4]


SHARED_TIME_TEXTS = [
    "noise line", "epoch 1/3 step 7/50 loss 2.31", "Traceback (most recent call last):", '  File "a.py", line 3, in f',
    "    x()", "ValueError: bad value", "[rank1]: Traceback (most recent call last):", "[rank1]: ValueError: x",
    "RuntimeError: NCCL error", "other text",
]


@PROPS
@given(
    lines=st.lists(st.tuples(st.booleans(), st.sampled_from(["stdout", "stderr"]), st.sampled_from(["F", "F", "F", "P"]),
                             st.sampled_from(SHARED_TIME_TEXTS)), min_size=1, max_size=80),
    points=st.lists(st.integers(0, 6000), max_size=6),
)
def test_lines_sharing_their_time_get_the_same_seq_on_both_paths(lines, points):
    """seq counts a stream's lines of equal time: the block scan skips lines and looks back
    for them; it must count each line once, whatever was skipped or read before (a line read
    earlier in the block was once counted twice)."""
    t, raw = 0, []
    for advance, stream, tag, text in lines:
        t += advance
        raw.append(cri_line(f"2024-05-01T12:00:00.{t:09d}Z", stream, tag, text))
    data = "\n".join(raw).encode()
    scanned, _ = curate_blocks(cut(data, points), block_scan=True)
    read, _ = curate_blocks([data], block_scan=False)
    assert encoded(scanned) == encoded(read)


def test_a_line_read_before_a_skipped_line_is_not_counted_again():
    raw = [
        cri_line("2024-05-01T12:00:00.010000000Z", "stdout", "F", "[rank1]: Traceback (most recent call last):"),
        cri_line("2024-05-01T12:00:00.010000000Z", "stderr", "F", "ValueError: bad 1"),
        cri_line("2024-05-01T12:00:00.010000000Z", "stdout", "F", "Traceback (most recent call last):"),
    ]
    data = "\n".join(raw).encode()
    scanned, _ = curate_blocks([data], block_scan=True)
    read, _ = curate_blocks([data], block_scan=False)
    assert encoded(scanned) == encoded(read)
