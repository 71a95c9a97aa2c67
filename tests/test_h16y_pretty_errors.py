"""pretty_errors' tracebacks read as traces (helper h16y, issue 16). fixtures/renderers/matrix pretty_errors-* (mono())
and pretty_errors_default-* (`import pretty_errors` alone), 1.2.24 and 1.2.25, made by running the library
(regenerate.py --matrix --only NAME): per frame "file.py N function" (or "N function file.py") and its line, then
"Type:" with the message on the line below; an exception's __context__ printed first, from its own rule of dashes
(pretty_errors/__init__.py ExceptionWriter, excepthook). At 352b4f5 none gave a trace (the type was read by the error
rules, the message lost)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gangscope.parsers.records import TraceRecord
from gangscope.parsers.trace_blocks import depretty
from gangscope.pipeline.run import replay

from trace_feed import feed_traces as _feed

MATRIX = Path(__file__).resolve().parent.parent / "fixtures" / "renderers" / "matrix"
PRETTY = sorted(p.name for p in MATRIX.glob("pretty_errors*.log"))
WHOLE = [n for n in PRETTY if n.endswith(("_plain.log", "_rank.log"))]  # behind a head on every line: not read (see HEADED)


def _run(path: Path):
    records: list = []
    result = replay.run(replay.ReplayOptions(paths=[str(path)], fmt="text"), records.extend)
    assert result.failures.summary() == []
    return [r for r in records if isinstance(r, TraceRecord)], result


def test_both_configs_at_two_versions_with_three_failures_and_five_variants():
    assert len(PRETTY) == 2 * 2 * 3 * 5


@pytest.mark.parametrize("name", WHOLE)
def test_a_whole_pretty_traceback_is_one_trace(name):
    traces, result = _run(MATRIX / name)
    assert len(traces) == 1, [t.exception_type for t in traces]
    [t] = traces
    assert (t.exception_type, t.message) == ("RuntimeError", "step 120 failed on rank 3")
    assert [f.function for f in t.frames] == ["<module>", "train_step_ctx" if "_ctx_" in name else "train_step"]
    assert t.frames[-1].file == "loader.py" and "raise RuntimeError" in (t.frames[-1].code or "")
    assert not t.truncated
    [d] = result.diagnoses
    if "_ctx_" in name:  # the OOM printed first, the RuntimeError raised while handling it
        assert [(lk.exception_type, lk.connector) for lk in t.chain] == [("torch.OutOfMemoryError", "context"), ("RuntimeError", None)]
        assert t.chain[0].message.startswith("CUDA out of memory")
        assert (d.category, d.exception_type) == ("cuda_oom", "torch.OutOfMemoryError")
    else:  # `raise ... from e`: pretty_errors shows no cause
        assert len(t.chain) == 1
        assert (d.category, d.exception_type) == ("python_exception", "RuntimeError")
    assert d.rank == (3 if name.endswith("_rank.log") else None)


@pytest.mark.parametrize("name", [n for n in PRETTY if n.endswith("_cut.log")])
def test_a_cut_pretty_traceback_never_loses_the_run(name):
    traces, result = _run(MATRIX / name)
    [d] = result.diagnoses
    assert d.category in ("cuda_oom", "python_exception", "unknown", "running")
    assert all(t.exception_type or t.chain for t in traces)  # no trace without an exception line


def test_the_message_below_its_type_is_the_message():
    lines = depretty(["12 allocate loader.py", "> raise X()", "", "ValueError:", "bad shard", "second arg"])
    assert lines[-2:] == ["ValueError: bad shard", "second arg"]


@pytest.mark.parametrize("lines", [
    ["train.py 12 main", "2025-06-01 10:00:00,001 INFO next step"],  # a location-like line alone
    ["train.py 12 main", "x = 1", "", "epoch 1 step 20 loss 2.0"],  # and a line, no exception
    ["setup.py 3 install", "running install", "to"],  # a word is no exception line
])
def test_location_like_lines_without_an_exception_give_no_trace(lines):
    assert _feed(lines) == []


def test_a_rule_after_the_message_that_no_location_follows_ends_it_whole():
    lines = ["9 <module> train.py", "> main()", "", "KeyError:", "'lr'", "", "-" * 40, "| table |"]
    [t] = _feed(lines)
    assert (t.exception_type, t.message, t.truncated) == ("KeyError", "'lr'", False)
