"""Horovod's own launcher prefix: horovodrun with gloo (and horovod.spark) puts "[rank]<stdout>:" /
"[rank]<stderr>:" before each line of a worker (horovod/horovod horovod/runner/common/util/
safe_shell_exec.py prefix_stream '{time}[{rank}]<{prefix}>:{line}', the index being slot_info.rank in
runner/gloo_run.py), Open MPI's "[jobid,rank]<stream>:" without the job id."""

from __future__ import annotations

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
