"""Drawn tracebacks behind a head on every line (helper h16y, issue 16): fixtures/renderers/matrix *_ts.log
(`kubectl logs --timestamps`: RFC 3339 with nanoseconds and a space) and *_log.log (Python logging's
`%(asctime)s %(levelname)s `), made from the renderers' own output (regenerate.py with_head). IPython's ultratb and
stackprinter's frames were read bare and behind `[rankN]:`, not behind such a head (no trace at 352b4f5); the head is
taken off as for CPython's header (trace_shapes.HEADED, traces._headed_start), only where it is a log line's head."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gangscope.parsers.records import TraceRecord
from gangscope.parsers.traces import TraceParser
from gangscope.pipeline.run import replay

from trace_feed import feed_traces as _feed

MATRIX = Path(__file__).resolve().parent.parent / "fixtures" / "renderers" / "matrix"
HEADED = sorted(p.name for p in MATRIX.glob("*.log") if p.name.endswith(("_ts.log", "_log.log")))
DRAWN = [n for n in HEADED if n.startswith(("ipython", "stackprinter"))]
WANTS = re.compile(TraceParser.PREFILTER).search


def _run(path: Path):
    records: list = []
    result = replay.run(replay.ReplayOptions(paths=[str(path)], fmt="text"), records.extend)
    assert result.failures.summary() == []
    return [r for r in records if isinstance(r, TraceRecord)], result


def test_the_headed_logs_are_there():
    plain = [p.name for p in MATRIX.glob("*_plain.log")]
    assert len(HEADED) == 2 * len(plain) and len(DRAWN) == 36


@pytest.mark.parametrize("name", DRAWN)
def test_a_drawn_traceback_behind_a_head_is_one_trace_with_its_chain(name):
    traces, result = _run(MATRIX / name)
    assert len(traces) == 1, [t.exception_type for t in traces]
    [t] = traces
    oom = "_oom_" in name
    assert (t.exception_type, t.message) == ("RuntimeError", "step 120 failed on rank 3")
    assert t.chain[0].exception_type.rsplit(".", 1)[-1] == ("OutOfMemoryError" if oom else "ValueError")
    assert t.chain[0].message.startswith("CUDA out of memory" if oom else "shard 1 has a negative size")
    assert [f.function for f in t.frames] == ["<module>", "train_step"]
    assert (t.frames[-1].file, t.frames[-1].line) == ("/srv/train/jobs/loader.py", 22)
    assert not t.truncated
    assert "2025-06-01" not in t.message and all("2025-06-01" not in (f.code or "") for f in t.frames)
    [d] = result.diagnoses
    assert d.category == ("cuda_oom" if oom else "python_exception")
    assert d.exception_type.rsplit(".", 1)[-1] == ("OutOfMemoryError" if oom else "ValueError")


@pytest.mark.parametrize("name", DRAWN)
def test_the_line_that_opens_it_passes_the_prefilter(name):
    lines = (MATRIX / name).read_text().splitlines()
    first = next(t for t in lines if "Traceback (most recent call last)" in t or 'File "' in t)
    assert WANTS(first)


@pytest.mark.parametrize("line", [
    'see the notes: File "/srv/a.py", line 3, in f was where it broke',  # a sentence, no log head
    'user said File "/srv/a.py", line 3, in f',
    '2025-06-01 10:00:07,001 ERROR   File "/srv/a.py", line 3, in f',  # CPython's indented frame line, not stackprinter's
    "our RuntimeError   Traceback (most recent call last)",  # no time or level first
])
def test_no_trace_from_words_without_a_log_head(line):
    assert _feed([line, "2025-06-01 10:00:07,002 INFO next step"]) == []


def test_a_head_that_stops_ends_the_trace():
    head = "2025-06-01T10:00:07.000942000Z "
    lines = [head + 'File "/srv/a.py", line 3, in f', head + "--> 3    g()", head, head + "ValueError: bad",
             "2025-06-01 10:00:08,000 INFO next step"]
    [t] = _feed(lines)
    assert (t.exception_type, t.message) == ("ValueError", "bad") and [f.function for f in t.frames] == ["f"]
