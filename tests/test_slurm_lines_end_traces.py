"""SLURM's own programs write their log lines to the job's stderr beside the tasks' output, as
"<argv0>: <level prefix><message>" (SchedMD/slurm src/common/log.c _log_msg: "%s: %s%s\\n", log->argv0,
pfx, buf): such a line is never a part of a Python traceback, nor an exception line of its own. A
traceback cut by the kill of its task and followed by srun's verdict is diagnosed by that verdict,
not as an exception named `srun`. Values are ours."""

from __future__ import annotations

import pytest

from gangscope.parsers.lines import Line
from gangscope.parsers.records import TraceRecord
from gangscope.parsers.traces import TraceParser
from diagnose_in_process import the_diagnosis

STEPS = "".join(f"epoch 1 step {i * 20} loss {2.1 - i / 40:.4f} lr 0.0003\n" for i in range(1, 7))
FRAMES = """\
Traceback (most recent call last):
  File "/home/ml/run/train.py", line 52, in <module>
    main()
  File "/home/ml/run/train.py", line 47, in main
    loss = step(model, batch)
"""


def _traces(text: str) -> list[TraceRecord]:
    p = TraceParser()
    out: list = []
    for i, t in enumerate(text.splitlines()):
        out.extend(p.feed(Line(None, i, t))[1])
    out.extend(p.close())
    return [r for r in out if isinstance(r, TraceRecord)]


@pytest.mark.parametrize("line", [
    "srun: error: gpu021: task 0: Out Of Memory",
    "srun: error: gpu021: tasks 0-3: Exited with exit code 1",
    "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.",
    "slurmstepd: error: Detected 1 oom_kill event in StepId=5512.0. Some of the step tasks have been OOM Killed.",
    "slurmstepd-gpu021: error: *** STEP 5512.0 ON gpu021 CANCELLED AT 2026-04-02T10:11:12 ***",
])
def test_a_slurm_line_is_no_exception_line(line):
    traces = _traces(FRAMES + line + "\n")
    assert all((t.exception_type or "") != line.split(":")[0] for t in traces)
    assert all(line not in (t.message or "") for t in traces)


def test_it_ends_an_exception_message():
    traces = _traces(FRAMES + "RuntimeError: shapes do not match\nsrun: error: gpu021: task 0: Exited with exit code 1\n")
    assert [(t.exception_type, t.message) for t in traces] == [("RuntimeError", "shapes do not match")]


def test_a_trace_cut_by_an_oom_kill_is_host_oom(tmp_path):
    d = the_diagnosis(tmp_path, STEPS + FRAMES + "srun: error: gpu021: task 0: Out Of Memory\n")
    assert d.category == "host_oom"


def test_an_exception_before_srun_exit_still_names_the_exception(tmp_path):
    text = STEPS + FRAMES + "KeyError: 'optimizer'\nsrun: error: gpu021: task 0: Exited with exit code 1\n"
    d = the_diagnosis(tmp_path, text)
    assert (d.category, d.exception_type) == ("python_exception", "KeyError")
