"""Rules from batch h16o of issue 16 (fixtures/eval README): tracebacks printed by other renderers than CPython.

IPython's ultratb (Jupyter, `ipython script.py`) and rich's traceback box (Lightning, accelerate launch, typer
CLIs) print an exception's report in their own layout, its exception line last in CPython's form (which the
`exception_line` rule reads). Their header and frame lines are read as warnings (`ultratb_header`,
`ultratb_location`, `rich_traceback`, parsers/errors.py, with the sources that print them); a log whose last
record is one of them was cut inside the report: `unknown`, as a CPython traceback cut before its exception line
is (endings.cut_traceback_at_the_end), never `running`. The renders below were made with IPython 9.18 and rich 15
(the layouts of IPython 7 and 8.0-8.4 from fixtures/eval dev/heldout 420-428); values are ours."""

from __future__ import annotations

import pytest

from gangscope.parsers.errors import WARNING, detect, rule_role
from diagnose_in_process import the_diagnosis


def rule_of(line: str) -> str | None:
    found = detect(line)
    return found[0].name if found is not None else None


STEPS = "".join(f"epoch 1 step {i * 20} loss {2.1 - i / 40:.4f} lr 0.0003\n" for i in range(1, 7))

ULTRATB = """\
---------------------------------------------------------------------------
ValueError                                Traceback (most recent call last)
Cell In[3], line 1
----> 1 load_shard(1, [3,-1])

File /srv/work/pkg/mod.py:3, in load_shard(index, table)
      1 def load_shard(index, table):
      2     size = table[index]
----> 3     return check(size)

File /srv/work/pkg/mod.py:7, in check(size)
      5 def check(size):
      6     if size < 0:
----> 7         raise ValueError(f"shard size must be positive, got {size}")
      8     return size
"""
ULTRATB_END = "\nValueError: shard size must be positive, got -1\n"

RICH = """\
╭─────────────────────────────── Traceback (most recent call last) ────────────────────────────────╮
│ /srv/work/train.py:5 in main                                                                     │
│                                                                                                  │
│    2 from pkg.mod import load_shard                                                              │
│    3 def main():                                                                                 │
│    4 │   table = [3, -1]                                                                         │
│ ❱  5 │   return load_shard(1, table)                                                             │
│    6 if __name__ == "__main__":                                                                  │
│                                                                                                  │
│ /srv/work/pkg/mod.py:7 in check                                                                  │
│                                                                                                  │
│    6 │   if size < 0:                                                                            │
│ ❱  7 │   │   raise ValueError(f"shard size must be positive, got {size}")                         │
│    8 │   return size                                                                             │
╰──────────────────────────────────────────────────────────────────────────────────────────────────╯
"""
RICH_END = "ValueError: shard size must be positive, got -1\n"


@pytest.mark.parametrize(
    "line, rule",
    [
        ("ValueError                                Traceback (most recent call last)", "ultratb_header"),
        ("RayTaskError(ValueError)                  Traceback (most recent call last)", "ultratb_header"),
        ("torch.distributed.elastic.multiprocessing.errors.ChildFailedErrorTraceback (most recent call last)", "ultratb_header"),
        ("Cell In[41], line 1", "ultratb_location"),
        ("Input In [17], in <cell line: 1>()", "ultratb_location"),
        ("File ~/envs/c2l/lib/python3.9/site-packages/lightning/pytorch/loops/fit_loop.py:202, in _FitLoop.run(self)", "ultratb_location"),
        ("File /opt/conda3/lib/python3.9/site-packages/scvi/train/_trainrunner.py:74, in TrainRunner.__call__(self)", "ultratb_location"),
        ("File ~\\Work\\miniconda3\\Lib\\site-packages\\scvi\\train\\_trainer.py:210, in Trainer.fit(self, *args, **kwargs)",
         "ultratb_location"),
        ("File [~/.conda/envs/t2/lib/python3.8/site-packages/pytorch_lightning/trainer/call.py:38](https://vscode-remote.example/"
         "call.py:38), in _call_and_handle_interrupt(trainer, trainer_fn, *args, **kwargs)", "ultratb_location"),
        ("╭─────────────────── Traceback (most recent call last) ────────────────────╮", "rich_traceback"),
        ("│ ❱  531 │   │   call._call_and_handle_interrupt(                                                  │", "rich_traceback"),
        ("│ ❱ 7 │   sys.exit(main())                                                                         │", "rich_traceback"),
    ],
)
def test_a_renderers_traceback_line_is_read_as_a_warning(line, rule):
    assert rule_of(line) == rule
    assert rule_role(rule) == WARNING


@pytest.mark.parametrize(
    "line",
    [
        "Traceback (most recent call last):",  # CPython's own header: the trace parser's
        '  File "/srv/work/train.py", line 5, in main',  # CPython's frame
        'File "/srv/work/train.py", line 5, in main',  # ... with its indent stripped
        "│    531 │   │   call._call_and_handle_interrupt(                                              │",  # no ❱: context
        "File /data/shards/index.csv has 12 rows",
        "Input In the config: 3 datasets",
        "The error said: Traceback (most recent call last) was not printed",
    ],
)
def test_near_misses_are_not_rendered_traceback_lines(line):
    assert rule_of(line) not in ("ultratb_header", "ultratb_location", "rich_traceback")


@pytest.mark.parametrize("report", [ULTRATB, RICH], ids=["ultratb", "rich"])
def test_a_log_that_ends_inside_a_rendered_traceback_failed_for_a_reason_it_does_not_show(tmp_path, report):
    d = the_diagnosis(tmp_path, STEPS + report)
    assert (d.category, d.outcome) == ("unknown", "failed")
    assert "cut before its exception line" in d.summary


@pytest.mark.parametrize("cut", [2, 5, 9], ids=["header", "first-frame", "second-frame"])
def test_an_ultratb_cut_anywhere_is_unknown(tmp_path, cut):
    lines = ULTRATB.splitlines(keepends=True)[:cut]
    assert the_diagnosis(tmp_path, STEPS + "".join(lines)).category == "unknown"


def test_a_rich_box_cut_before_its_header_is_unknown(tmp_path):
    body = "".join(RICH.splitlines(keepends=True)[3:7])  # from a code line to the ❱ line: no title, no path
    assert the_diagnosis(tmp_path, STEPS + body).category == "unknown"


@pytest.mark.parametrize("report, end", [(ULTRATB, ULTRATB_END), (RICH, RICH_END)], ids=["ultratb", "rich"])
def test_a_whole_rendered_traceback_names_its_exception(tmp_path, report, end):
    d = the_diagnosis(tmp_path, STEPS + report + end)
    assert (d.category, d.exception_type) == ("python_exception", "ValueError")


@pytest.mark.parametrize("report", [ULTRATB, RICH], ids=["ultratb", "rich"])
def test_a_rendered_traceback_that_training_went_on_after_is_no_failure(tmp_path, report):
    # a handled exception shown with rich's console.print_exception() or IPython's showtraceback, then more steps
    later = "".join(f"epoch 2 step {i * 20} loss {1.8 - i / 40:.4f} lr 0.0003\n" for i in range(7, 10))
    assert the_diagnosis(tmp_path, STEPS + report + later).category == "running"


def test_a_cause_printed_before_a_cut_rendered_traceback_wins(tmp_path):
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB\n"
    assert the_diagnosis(tmp_path, STEPS + oom + RICH).category == "cuda_oom"


# pytest's report of a failed test (its layout from pytest 9.2's run of a failing test; _pytest/_code/code.py, terminal.py)
PYTEST = """\
=================================== FAILURES ===================================
__________________________________ test_shard __________________________________

    def test_shard():
>       assert load_shard(1, [3, -1]) == 3
               ^^^^^^^^^^^^^^^^^^^^^^

test_shard.py:4: 
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 

size = -1

    def check(size):
        if size < 0:
>           raise ValueError(f"shard size must be positive, got {size}")
E           ValueError: shard size must be positive, got -1

../pkg/mod.py:7: ValueError
=========================== short test summary info ============================
FAILED test_shard.py::test_shard - ValueError: shard size must be positive, g...
1 failed in 7.15s
"""


@pytest.mark.parametrize(
    "line, expected",
    [
        ("E           ValueError: shard size must be positive, got -1", ("pytest_exception", "python_exception")),
        ("E   ModuleNotFoundError: No module named 'flash_attn'", ("pytest_exception", "python_exception")),
        ("FAILED test_shard.py::test_shard - ValueError: shard size must be positive, g...", ("pytest_failed_summary", "python_exception")),
        ("E       RuntimeError: CUDA error: an illegal memory access was encountered", ("cuda_error", "cuda_error")),  # an earlier rule
        ("E       assert 3 == 4", None),
        ("E        +  where 3 = load_shard(1, [3, -1])", None),
        ("NAME   READY   STATUS    RESTARTS   AGE", None),
    ],
)
def test_pytests_exception_lines_are_read_as_the_bare_exception_line(line, expected):
    found = detect(line)
    assert (None if found is None else (found[0].name, found[1])) == expected


def test_a_failed_test_run_names_its_exception(tmp_path):
    d = the_diagnosis(tmp_path, STEPS + PYTEST)
    assert (d.category, d.exception_type) == ("python_exception", "ValueError")
