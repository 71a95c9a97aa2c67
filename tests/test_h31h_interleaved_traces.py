"""[h31h] Unprefixed tracebacks of two or more ranks of one pod interleaved line by line in one stream (issue 16).

Before torch 2.2 a rank's traceback has no `[rankN]:` prefix; under torchrun (`python -u`, the workers inherit the agent's
stderr) ranks that fail at the same moment write into one pipe. CPython 3.11's PyErr_Display (Python/pythonrun.c
print_exception, Python/traceback.c tb_displayline / display_source_line_with_margin) writes the header and each
`  File "...", line N, in f` line with one write each, a source line with three (indent, text, newline), a caret line one
character a write, the exception line with four (type, ": ", message, newline); `-u` makes each a write(2) of its own (strace
of 3.11.7, fixtures/eval/README.md "Interleaved unprefixed tracebacks (h31h)"). So another rank's lines land between any two
lines of a trace: a second header inside the first trace's frames, the first trace's frames after the other's exception line
(fixtures/runs/collective_timeout_torch2_1, sigterm_torch2_1), or a File line behind an open tqdm bar's '\\r' states
(hf_collator_ragged_torch2_1). The samples are CPython 3.11's own output (fixtures/traces/*.py311.txt, the runs' lines).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import msgspec
import pytest

from gangscope.parsers.lines import Line
from gangscope.parsers.records import TraceRecord
from gangscope.parsers import traces
from gangscope.parsers.traces import PREFILTER, TraceParser, TraceState

MAX_ASIDE = getattr(traces, "MAX_ASIDE", 8)  # (so that the file runs on f5960bb, to count what fails there)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
WANTS = re.compile(PREFILTER).search

PLAIN = (FIXTURES / "traces" / "plain.py311.txt").read_text().rstrip("\n").split("\n")  # KeyError, 3 frames
CHAINED = (FIXTURES / "traces" / "chained.py311.txt").read_text().rstrip("\n").split("\n")  # 3 links, a 3-line message
# rank 1 of fixtures/runs/sigterm_torch2_1 (torch 2.1, Python 3.11), its paths rebuilt
GLOO = [
    "Traceback (most recent call last):",
    '  File "/workspace/train.py", line 452, in <module>',
    "    main()",
    '  File "/venv/lib/python3.11/site-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 346, in wrapper',
    "    return f(*args, **kwargs)",
    "           ^^^^^^^^^^^^^^^^^^",
    '  File "/workspace/train.py", line 358, in main_impl',
    "    loss.backward()",
    '  File "/venv/lib/python3.11/site-packages/torch/autograd/__init__.py", line 251, in backward',
    "    Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass",
    "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer [127.0.0.1]:29330",
]
OOM = [
    "Traceback (most recent call last):",
    '  File "/workspace/train.py", line 91, in <module>',
    "    step(model, batch)",
    '  File "/workspace/train.py", line 40, in step',
    "    out = model(batch)",
    "          ^^^^^^^^^^^^",
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
]
AGENT = "[2026-12-05 09:24:51,395] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: 1) local_rank: 0 (pid: 25263) of binary: /venv/bin/python3.11"


def feed(rows: list[str], parser: TraceParser | None = None, step_ms: int = 0) -> list[TraceRecord]:
    """Feed like the pipeline: lines that cannot start a trace only while one is open."""
    parser = parser or TraceParser()
    out: list[TraceRecord] = []
    for i, text in enumerate(rows):
        line = Line(f"2026-12-05T09:25:01.{100000 + i * step_ms * 1000:06d}Z", i, text)
        if parser.open or WANTS(text):
            out.extend(parser.feed(line)[1])
    return out + parser.close()


def key(r: TraceRecord) -> tuple:
    return (tuple(link.exception_type for link in r.chain), tuple(f.function for f in r.frames), r.message, r.truncated)


def alone(*traces: list[str]) -> Counter:
    return Counter(key(r) for t in traces for r in feed(t))


def frame_offsets(rows: list[str]) -> list[int]:
    """Where another trace can come in with this one still reading frames and its next line indented: after its header or
    one of its frame lines, before a line of its frames (a File, source or caret line)."""
    out, in_frames = [], False
    for k in range(1, len(rows)):
        prev = rows[k - 1]
        in_frames = prev.startswith("Traceback (most recent call last):") or (in_frames and prev.startswith(" "))
        if in_frames and rows[k].startswith(" "):
            out.append(k)
    return out


def test_each_sample_alone_is_one_whole_trace():
    for rows, n in ((PLAIN, 1), (CHAINED, 1), (GLOO, 1), (OOM, 1)):
        records = feed(rows)
        assert len(records) == n and not records[0].truncated
        assert records[0].text.split("\n") == rows


@pytest.mark.parametrize("a,b", [(PLAIN, GLOO), (GLOO, OOM), (OOM, PLAIN), (CHAINED, GLOO), (GLOO, CHAINED)],
                         ids=["plain+gloo", "gloo+oom", "oom+plain", "chained+gloo", "gloo+chained"])
def test_a_whole_trace_inside_another_s_frames_at_every_offset_gives_both(a, b):
    offsets = frame_offsets(a)
    if b is CHAINED:
        # b's message goes on over lines of its own ("see above", "  indented detail"): a source line of a's after it is
        # as much the message's next line (the limit: only a File line, or a line right after the exception line, goes back)
        offsets = [k for k in offsets if a[k].startswith('  File "')]
    assert len(offsets) >= 4
    for k in offsets:
        got = Counter(key(r) for r in feed(a[:k] + b + a[k:]))
        assert got == alone(a, b), k


def test_two_headers_then_each_trace_s_lines_after_the_other_s_exception_line():
    """sigterm_torch2_1's shape: both headers first, then one trace's frames and exception, then the other's frames."""
    rows = [GLOO[0], OOM[0]] + GLOO[1:] + OOM[1:]
    assert Counter(key(r) for r in feed(rows)) == alone(GLOO, OOM)


def test_the_last_source_lines_and_exception_lines_alternate():
    """collective_timeout_torch2_1's shape: each trace to its last File line, then source, exception, source, exception."""
    other = [t.replace("pair.cc:534] Connection closed by peer [127.0.0.1]:29330", "unbound_buffer.cc:133] Timed out") for t in GLOO]
    rows = GLOO[:9] + other[:9] + [other[9], other[10], GLOO[9], GLOO[10]]
    assert Counter(key(r) for r in feed(rows)) == alone(GLOO, other)


def test_three_ranks_nested_and_side_by_side():
    nested = PLAIN[:3] + GLOO[:4] + OOM + GLOO[4:] + PLAIN[3:]
    side = PLAIN[:2] + GLOO + PLAIN[2:5] + OOM + PLAIN[5:]
    for rows in (nested, side):
        assert Counter(key(r) for r in feed(rows)) == alone(PLAIN, GLOO, OOM)


def test_a_bar_glued_before_the_first_file_line_comes_off_and_the_line_stays_for_the_others():
    """tqdm writes '\\r' + the bar with no newline (tqdm/std.py status_printer); the other rank's File line lands behind."""
    bar = "\r" + " " * 40 + "\r\r  8%|▊         | 1/12 [00:00<00:00, 37.46it/s]"
    rows = [GLOO[0], bar + GLOO[1]] + GLOO[2:]
    assert Counter(key(r) for r in feed(rows)) == alone(GLOO)
    parser = TraceParser()
    parser.feed(Line(None, 0, GLOO[0]))
    consumed, _ = parser.feed(Line(None, 1, bar + GLOO[1]))
    assert not consumed  # the bar is the progress parser's
    [record] = feed(rows)
    assert record.text.split("\n") == GLOO


def test_a_trace_cut_by_another_rank_s_log_line_ends_as_before_and_so_does_one_set_aside():
    [cut] = feed(PLAIN[:4] + [AGENT])
    assert cut.truncated and cut.exception_type in (None, "")
    got = feed(PLAIN[:4] + GLOO[:5] + [AGENT] + OOM)
    assert sorted(r.truncated for r in got) == [False, True, True]
    assert [key(r) for r in got if not r.truncated] == [key(feed(OOM)[0])]


def test_an_open_interleaving_survives_a_snapshot_at_every_line():
    rows = PLAIN[:3] + GLOO[:4] + OOM + GLOO[4:] + PLAIN[3:] + [AGENT]
    want = [key(r) for r in feed(rows)]
    enc, dec = msgspec.msgpack.Encoder(), msgspec.msgpack.Decoder(TraceState)
    for cut in range(1, len(rows)):
        parser, out = TraceParser(), []
        for i, text in enumerate(rows[:cut]):
            if parser.open or WANTS(text):
                out += parser.feed(Line(None, i, text))[1]
        state = parser.snapshot()
        parser = TraceParser()
        if state is not None:
            parser.restore(dec.decode(enc.encode(state)))
        for i, text in enumerate(rows[cut:], cut):
            if parser.open or WANTS(text):
                out += parser.feed(Line(None, i, text))[1]
        assert [key(r) for r in out + parser.close()] == want, cut


def test_expire_and_close_give_the_traces_set_aside_too():
    parser = TraceParser()
    for i, text in enumerate(PLAIN[:3] + GLOO[:4]):
        parser.feed(Line(f"2026-12-05T09:25:01.{i:06d}Z", i, text))
    got = parser.expire("2026-12-05T09:25:30.000000Z")
    assert len(got) == 2 and not parser.open
    parser = TraceParser()
    for i, text in enumerate(PLAIN[:3] + GLOO[:4]):
        parser.feed(Line(None, i, text))
    assert len(parser.close()) == 2 and not parser.open


def test_a_trace_idle_past_its_bound_is_not_taken_up_again():
    """A trace set aside is taken up only within `idle_s` of its own last line (a trace cut by its process's death, then
    another one long after, ends as before)."""
    rows = PLAIN[:4] + OOM + ["    x = 1"]
    got = feed(rows, TraceParser(idle_s=5.0), step_ms=2000)
    assert Counter(r.truncated for r in got)[True] >= 1
    assert key(feed(OOM)[0]) in {key(r) for r in got}


def test_more_headers_than_the_bound_lose_nothing_and_raise_nothing():
    rows = [PLAIN[0], PLAIN[1]] * (MAX_ASIDE + 3) + PLAIN[2:]
    got = feed(rows)
    assert len(got) == MAX_ASIDE + 3 and sum(not r.truncated for r in got) == 1
