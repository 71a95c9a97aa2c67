"""Rules from batch h30f of issue 16 (fixtures/eval README, "Batch h30f"): a blind draw of multi-rank pastes, scored on
the first failing rank.

The draw's six logs were all right as they came (category 6/6, rank 2/2); one (dev 1219, huggingface/accelerate#1209)
was right with a wrong account of its ranks: rank 3's watchdog line, written by a sibling between a frame's indent and
its source line, was read as that frame's source line, and rank 1's watchdog line after the exception was read as the
exception's message. Two classes, both from the printing code:
- CPython's traceback printer (Python/traceback.c display_source_line, up to 3.12) writes a source line's indent, the
  line, then the newline in three writes; `python -u` workers (torchrun) share an unbuffered stderr, so a sibling's
  whole line can land behind the indent, the source line at the margin under it (trace_shapes.INTERLEAVED: c10's
  MessageLogger heads, glog's, NCCL's; traces.ASIDE);
- c10's MessageLogger head before torch 2.3 ("[E ProcessGroupNCCL.cpp:821] ", no time, c10/util/Logging.cpp) starts a
  log record of its own, so it ends an exception's message (trace_shapes.FOREIGN).
The lines below are rebuilt from the libraries' format strings with our values, not copied from the fixtures."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis
from trace_feed import feed_traces

from gangscope.parsers.lines import Line
from gangscope.parsers.traces import TraceParser

WATCHDOG = ("[Rank {r}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLGATHER, "
            "Timeout(ms)=1800000) ran for 18082{r}3 milliseconds before timing out.")  # fmt: skip
C10_OLD = "[E ProcessGroupNCCL.cpp:821] " + WATCHDOG  # torch <= 2.2's MessageLogger head
C10_NEW = "[rank{r}]:[E1206 18:44:16.994932383 ProcessGroupNCCL.cpp:632] " + WATCHDOG  # torch 2.4+: rank, time
GLOG = "E1206 18:44:16.994932 41207 ProcessGroupNCCL.cpp:632] " + WATCHDOG  # torch built with glog
NCCL = "trn-a07:41207:41355 [{r}] NCCL INFO comm 0x55d0c3f0 rank {r} nranks 4 cudaDev {r} busId 4f000 - Abort COMPLETE"

FRAMES = ['Traceback (most recent call last):',
          '  File "/srv/run/train.py", line 88, in <module>',
          '    main()',
          '  File "/srv/venv/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 1400, in broadcast']  # fmt: skip
SOURCE = "work = default_pg.broadcast([tensor], opts)"
EXCEPTION = ("RuntimeError: NCCL communicator was aborted on rank 2.  Original reason for failure was: "
             + WATCHDOG.format(r=2))  # fmt: skip


def _fed(lines: list[str]) -> tuple[list, list[str]]:
    """The traces of `lines` and the lines the trace parser left to the parsers after it."""
    parser, traces, left = TraceParser(), [], []
    for i, text in enumerate(lines):
        consumed, records = parser.feed(Line(None, i, text))
        traces.extend(records)
        if not consumed:
            left.append(text)
    traces.extend(parser.close())
    return traces, left


@pytest.mark.parametrize("sibling", [C10_OLD, C10_NEW, GLOG, NCCL])
def test_a_siblings_line_behind_a_frames_indent_is_not_the_frames_source(sibling):
    line = "    " + sibling.format(r=3)
    traces, left = _fed([*FRAMES, line, SOURCE, EXCEPTION])
    [t] = traces
    assert (t.exception_type, t.truncated) == ("RuntimeError", False)
    assert "Watchdog caught" in (t.message or "") and "Rank 3" not in t.text
    assert t.frames[-1].code == SOURCE  # the source line under the sibling's line is the frame's
    assert line in left  # the sibling's line goes to the line rules


@pytest.mark.parametrize(
    "line",
    [
        "    [E for E in edges]",  # a list comprehension
        "    epoch = 0",
        "    [E, F] = pair",
        "    [E.cpp for E in mods]",
        "    E1206 = 18",
    ],
)  # fmt: skip
def test_near_miss_source_lines_stay_the_frames(line):
    traces, left = _fed([*FRAMES, line, EXCEPTION])
    [t] = traces
    assert t.exception_type == "RuntimeError" and line not in left
    assert t.frames[-1].code == line.strip()


def test_the_sibling_line_between_frame_lines_keeps_the_next_frame():
    # the sibling's line came after a whole source line: the next line is a File line, read as before
    traces, left = _fed([*FRAMES[:3], "    " + C10_OLD.format(r=3), FRAMES[3], "    " + SOURCE, EXCEPTION])
    [t] = traces
    assert [f.code for f in t.frames] == ["main()", SOURCE] and len(left) == 1


@pytest.mark.parametrize(
    "after, ends",
    [
        (C10_OLD.format(r=1), True),  # torch <= 2.2's MessageLogger head starts a record of its own
        ("[E] the loss went up", False),  # near misses: no file:line in the head
        ("[E train.py:12] retrying", False),  # a Python file's name: no c10 head
        ("[W socket.cpp:601] [c10d] The client socket has failed to connect.", True),
    ],
)  # fmt: skip
def test_c10s_old_head_ends_an_exception_message(after, ends):
    traces = feed_traces(["Traceback (most recent call last):", '  File "/srv/run/train.py", line 88, in <module>',
                          "    main()", "RuntimeError: NCCL error", after])  # fmt: skip
    [t] = traces
    assert (after not in t.text) == ends


ACCELERATE = "\n".join([
    '  File "/srv/venv/lib/python3.8/site-packages/accelerate/utils/random.py", line 71, in synchronize_rng_state',
    "    torch.distributed.broadcast(rng_state, 0)",
    '  File "/srv/venv/lib/python3.8/site-packages/torch/distributed/distributed_c10d.py", line 1400, in broadcast',
    "    " + C10_OLD.format(r=3),
    SOURCE,
    EXCEPTION,
    C10_OLD.format(r=1),
    "[E ProcessGroupNCCL.cpp:456] Some NCCL operations have failed or timed out. Due to the asynchronous",
]) + "\n"  # fmt: skip


def test_every_rank_of_an_interleaved_paste_is_counted(tmp_path):
    d = the_diagnosis(tmp_path, ACCELERATE)
    assert (d.category, d.first_failure["rank"]) == ("nccl_timeout", 2), d.summary
    ranks = sorted({r for s in d.symptoms for r in s["ranks"]})
    assert ranks == [1, 3], d.summary  # before: rank 3's line was a source line, rank 1's the exception's message
