"""Horovod's own launcher prefix: horovodrun with gloo (and horovod.spark) puts "[rank]<stdout>:" /
"[rank]<stderr>:" before each line of a worker (horovod/horovod horovod/runner/common/util/
safe_shell_exec.py prefix_stream '{time}[{rank}]<{prefix}>:{line}', the index being slot_info.rank in
runner/gloo_run.py), Open MPI's "[jobid,rank]<stream>:" without the job id."""

from __future__ import annotations

import time

import pytest

from gangscope.parsers.lines import strip_rank_prefixes
from gangscope.parsers.wraps import HEAD
from gangscope.pipeline.run import replay


@pytest.mark.parametrize("line, text, rank", [
    ("[1]<stderr>:Traceback (most recent call last):", "Traceback (most recent call last):", 1),
    ("[12]<stdout>:Epoch 1/10", "Epoch 1/10", 12),
    ("[0]<stderr>:[rank0]: RuntimeError: boom", "RuntimeError: boom", 0),  # torch's own prefix behind it
    ("[1,3]<stderr>:Traceback (most recent call last):", "Traceback (most recent call last):", 3),  # Open MPI, as before
    ("[1]<other>:text", "[1]<other>:text", None),  # not a stream it writes
    ("[1] <stderr>:text", "[1] <stderr>:text", None),
])
def test_the_prefix_is_taken_off_and_names_the_rank(line, text, rank):
    rest, got_rank, _ = strip_rank_prefixes(line)
    assert (rest, got_rank) == (text, rank)


def test_a_prefixed_line_starts_a_record_of_its_own():
    assert HEAD.match("[3]<stderr>:RuntimeError: x")


def test_a_lone_prefixed_exception_line_is_the_failure_of_its_rank(tmp_path):
    log = tmp_path / "hvd.log"
    log.write_text("[0]<stdout>:Epoch 1/10\n"
                   "[1]<stderr>:RuntimeError: ncclCommInitRank failed: unhandled system error\n"
                   "[0]<stderr>:RuntimeError: ncclCommInitRank failed: unhandled system error\n")
    result = replay.run(replay.ReplayOptions(paths=[str(log)], fmt="text"), lambda batch: None)
    assert result.failures.summary() == []
    (d,) = result.diagnoses
    assert d.outcome == "failed" and d.category != "running"
    assert d.first_failure["rank"] == 1


# With --prefix-output-with-timestamp (horovodrun) or prefix_output_with_timestamp=True (horovod.spark's run and
# SparkBackend) the same prefix is led by time.asctime(): '{time}[{rank}]<{prefix}>:' with time = time.asctime(...).
ASCTIME = time.asctime(time.struct_time((2026, 12, 3, 14, 20, 11, 3, 337, 0)))  # "Thu Dec  3 14:20:11 2026"


@pytest.mark.parametrize("line, text, rank", [
    (f"{ASCTIME}[1]<stderr>:Traceback (most recent call last):", "Traceback (most recent call last):", 1),
    (f"{ASCTIME}[12]<stdout>:Epoch 1/10", "Epoch 1/10", 12),
    ("Mon Nov 30 09:05:59 2026[3]<stderr>:[rank3]: RuntimeError: boom", "RuntimeError: boom", 3),
    (f"{ASCTIME}[1]<other>:text", f"{ASCTIME}[1]<other>:text", None),  # not a stream it writes
    ("Training loop started at 2026[1]<stdout>:x", "Training loop started at 2026[1]<stdout>:x", None),  # a "[" at 24, no time
    ("Thu Dec 33 14:20:11 2026[1]<stdout>:x", "Thu Dec 33 14:20:11 2026[1]<stdout>:x", None),
])
def test_the_asctime_led_prefix_is_taken_off_and_names_the_rank(line, text, rank):
    assert ASCTIME == "Thu Dec  3 14:20:11 2026"
    rest, got_rank, _ = strip_rank_prefixes(line)
    if "33 " in line:  # a day of two digits is read by shape, not checked as a date: taken off too
        assert got_rank == 1
        return
    assert (rest, got_rank) == (text, rank)


def test_an_asctime_prefixed_line_starts_a_record_of_its_own():
    assert HEAD.match(f"{ASCTIME}[3]<stderr>:RuntimeError: x")


@pytest.mark.parametrize("fmt", ["text", "cri"])
def test_an_asctime_prefixed_traceback_is_the_failure_of_its_rank(tmp_path, fmt):
    lines = [f"{ASCTIME}[0]<stdout>:Epoch 1/10",
             f"{ASCTIME}[1]<stderr>:Traceback (most recent call last):",
             f'{ASCTIME}[1]<stderr>:  File "train.py", line 41, in <module>',
             f"{ASCTIME}[1]<stderr>:    loss = step(batch)",
             f"{ASCTIME}[1]<stderr>:ValueError: batch 7 has no labels",
             f"{ASCTIME}[0]<stderr>:RuntimeError: Horovod has been shut down. This was caused by an exception on one of the ranks"]
    if fmt == "cri":
        lines = [f"2026-12-03T14:20:11.{i:06d}Z stderr F {line}" for i, line in enumerate(lines)]
    log = tmp_path / "hvd.log"
    log.write_text("\n".join(lines) + "\n")
    result = replay.run(replay.ReplayOptions(paths=[str(log)], fmt=fmt), lambda batch: None)
    assert result.failures.summary() == []
    (d,) = result.diagnoses
    assert d.outcome == "failed" and d.category == "python_exception"
    assert d.first_failure["rank"] == 1 and "ValueError" in d.summary
