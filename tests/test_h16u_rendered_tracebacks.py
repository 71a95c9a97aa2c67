"""Tracebacks as other renderers print them, made by the real libraries (helper h16u, issue 16; fixtures/renderers:
regenerate.py and README.md, the versions). The same two failures under each renderer: a ValueError two frames deep,
and an exception named OutOfMemoryError with torch's CUDA message, the direct cause of a RuntimeError. gangscope names
the innermost real exception, never the renderer's or the runner's wrapper: an ExceptionGroup's sub-exceptions
(CPython 3.11+), nbclient's CellExecutionError (`jupyter nbconvert --execute`, papermill), IPython's coloured ultratb
(the ANSI codes around the words), a notebook's JSON error output (.ipynb)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gangscope.parsers.errors import detect
from diagnose_in_process import the_diagnosis

HERE = Path(__file__).resolve().parent.parent / "fixtures" / "renderers"
STEPS = "".join(f"epoch 1 step {i * 20} loss {2.1 - i / 40:.4f} lr 0.0003\n" for i in range(1, 7))

VALUE = ("python_exception", "ValueError")
OOM = ("cuda_oom", "shard.OutOfMemoryError")


@pytest.mark.parametrize("name, category, exception_type", [
    ("cpython_value", *VALUE), ("cpython_chained", *OOM),
    ("cpython_group", *OOM),  # the group's second sub-exception's cause, not "ExceptionGroup"
    ("better_exceptions_value", *VALUE), ("better_exceptions_chained", *OOM),
    ("loguru_value", *VALUE), ("loguru_chained", *OOM),
    ("rich_value", *VALUE), ("rich_chained", "cuda_oom", None),
    ("ipython_value", *VALUE), ("ipython_chained", "cuda_oom", None),
    ("ipython_color_value", *VALUE), ("ipython_color_chained", "cuda_oom", None),
    ("jupyter_cellerror_value", *VALUE), ("jupyter_cellerror_chained", "cuda_oom", None),  # not CellExecutionError
    ("jupyter_json_value", *VALUE), ("jupyter_json_chained", "cuda_oom", None),
    ("pretty_errors_value", *VALUE), ("pretty_errors_chained", "python_exception", "RuntimeError"),
])
def test_a_rendered_traceback_names_its_innermost_exception(tmp_path, name, category, exception_type):
    d = the_diagnosis(tmp_path, STEPS + (HERE / f"{name}.log").read_text(), name)
    assert d.category == category
    if exception_type is not None:
        assert d.exception_type == exception_type


GROUP = """\
  + Exception Group Traceback (most recent call last):
  |   File "/srv/train/jobs/train.py", line 8, in <module>
  |     raise ExceptionGroup("2 ranks failed", errors)
  | ExceptionGroup: 2 ranks failed (2 sub-exceptions)
  +-+---------------- 1 ----------------
    | Traceback (most recent call last):
    |   File "/srv/train/jobs/shard.py", line 7, in check
    |     raise ValueError(f"shard size must be positive, got {size}")
    | ValueError: shard size must be positive, got -1
    +---------------- 2 ----------------
    | KeyError: 'w'
    +------------------------------------
"""

NESTED = """\
  + Exception Group Traceback (most recent call last):
  |   File "/srv/train/jobs/train.py", line 9, in <module>
  |     raise ExceptionGroup("outer", [inner])
  | ExceptionGroup: outer (1 sub-exception)
  +-+---------------- 1 ----------------
    | ExceptionGroup: inner (1 sub-exception)
    +-+---------------- 1 ----------------
      | Traceback (most recent call last):
      |   File "/srv/train/jobs/ckpt.py", line 4, in save
      |     open(path, "wb").write(blob)
      | OSError: [Errno 28] No space left on device: '/ckpt/step_120.pt'
      +------------------------------------
"""


def test_a_group_of_generic_exceptions_names_its_first_sub_exception(tmp_path):
    d = the_diagnosis(tmp_path, STEPS + GROUP)
    assert (d.category, d.exception_type) == ("python_exception", "ValueError")


def test_a_nested_group_is_read_to_its_leaf(tmp_path):
    d = the_diagnosis(tmp_path, STEPS + NESTED)
    assert (d.category, d.exception_type) == ("storage_io", "OSError")


@pytest.mark.parametrize("line, rule, category", [
    ('   "\\u001b[31mValueError\\u001b[39m: shard size must be positive, got -1"', "jupyter_error_output", "python_exception"),
    ('   "\\u001b[0;31mKeyError\\u001b[0m: \'w\'",', "jupyter_error_output", "python_exception"),
    # a message a rule of its own reads (IPython < 8's colours): that rule, earlier in the table
    ('   "\\u001b[0;31mOutOfMemoryError\\u001b[0m: CUDA out of memory. Tried to allocate 2.00 GiB",', "cuda_oom", "cuda_oom"),
])
def test_a_notebooks_json_exception_line_is_read(line, rule, category):
    found = detect(line)
    assert found is not None and (found[0].name, found[1]) == (rule, category)


@pytest.mark.parametrize("line", [
    '   "\\u001b[31mValueError\\u001b[39m                                Traceback (most recent call last)",',
    '  "ename": "ValueError",',
    '   "\\u001b[36mFile \\u001b[39m\\u001b[32m/srv/train/jobs/shard.py:7\\u001b[39m, in \\u001b[36mcheck\\u001b[39m",',
])
def test_near_misses_are_not_a_notebooks_exception_line(line):
    found = detect(line)
    assert found is None or found[0].name != "jupyter_error_output"
