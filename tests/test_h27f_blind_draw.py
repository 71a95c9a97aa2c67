"""Rules from batch h27f of issue 16 (fixtures/eval README, "Batch h27f"): a blind draw of threads that show recent
framework versions (torch 2.5+'s `[rankN]:` lines, TRL GRPO, Unsloth notebooks, ...).

Two classes of its misses show their cause in the log:
- CPython's report of an exception it could not raise, "Exception ignored in: <object>" and the traceback under it
  (sys.unraisablehook's default; parsers/errors.py unraisable_exception, a warning): the interpreter swallowed it and
  the run went on, so the traceback is no failure (pipeline/diagnose/root_cause.without_handled,
  rules.UNRAISABLE_REPORTS);
- IPython's traceback head for an exception whose class starts with "T" (TypeError, TimeoutError, TabError) was taken for
  CPython's header and never read as IPython's (parsers/trace_blocks._rendered): the whole trace was lost.
The lines below are rebuilt from the libraries' format strings with our values, not copied from the fixtures."""

from __future__ import annotations

import re

import pytest

from diagnose_in_process import the_diagnosis
from rule_reference import category_of, found

from gangscope.parsers import errors
from gangscope.parsers.trace_blocks import parse_block

PREFILTER = re.compile(errors.PREFILTER)


@pytest.mark.parametrize(
    "line",
    [
        # the default hook: err_msg None -> "Exception ignored in", then ": " and the object's repr
        "Exception ignored in: <finalize object at 0x7f2c41d09b80; dead>",
        "Exception ignored in: <function _ConnectionBase.__del__ at 0x7f0e0e4c2160>",
        "Exception ignored in: <module 'threading' from '/usr/lib/python3.10/threading.py'>",
        # _PyErr_WriteUnraisableMsg's own words after "Exception ignored "
        "Exception ignored on calling ctypes callback function: <function cb at 0x7f3a2b1c0d30>",
        "Exception ignored in thread started by: <function worker at 0x7f3a2b1c0e50>",
        "Exception ignored while finalizing file <_io.TextIOWrapper name='/runs/gs/out.log' mode='w' encoding='UTF-8'>:",
        # the object is None: no ": <repr>"
        "Exception ignored in:",
    ],
)  # fmt: skip
def test_the_report_line_is_a_warning(line):
    assert found(line) == ("unraisable_exception", "python_exception")
    assert errors.rule_role("unraisable_exception") == errors.WARNING
    assert PREFILTER.search(line) is not None


@pytest.mark.parametrize(
    "line, category",
    [
        # prose about it
        ("why do I get 'exception ignored' at shutdown?", None),
        ("The exception ignored by the hook is logged", None),
    ],
)  # fmt: skip
def test_near_misses(line, category):
    assert category_of(line) == category


def test_an_exception_line_of_class_exception_is_not_the_report():
    line = "Exception: Installed CUDA version 12.4 does not match the version torch was compiled with 12.1"
    assert (found(line) or ("",))[0] != "unraisable_exception"


WATCHDOG = ("[rank1]:[E1103 02:41:09.118406217 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum=5120, OpType=_ALLGATHER_BASE, NumelIn=96, NumelOut=192, Timeout(ms)=1800000) ran for 1800042 "
            "milliseconds before timing out.\n"
            "[rank0]:[E1103 02:41:09.119220731 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum=5120, OpType=_ALLGATHER_BASE, NumelIn=96, NumelOut=192, Timeout(ms)=1800000) ran for 1800011 "
            "milliseconds before timing out.\n")  # fmt: skip
UNRAISABLE = ("Exception ignored in: <finalize object at 0x7f2c41d09b80; dead>\n"
              "Traceback (most recent call last):\n"
              '  File "/opt/envs/rl/lib/python3.12/weakref.py", line 590, in __call__\n'
              "    return info.func(*info.args, **(info.kwargs or {}))\n"
              '  File "/opt/envs/rl/lib/python3.12/site-packages/math_verify/utils.py", line 43, in handler\n'
              '    raise TimeoutError("Operation timed out!")\n'
              "TimeoutError: Operation timed out!\n")  # fmt: skip
STEPS = "".join(f"{{'loss': 0.{31 + i}, 'grad_norm': 0.8, 'learning_rate': 1e-06, 'epoch': 0.0{i}}}\n" for i in range(1, 4))


@pytest.mark.parametrize(
    "text, category",
    [
        # the swallowed exception, then the run's own failure: the failure is the answer
        (UNRAISABLE + WATCHDOG, "nccl_timeout"),
        # the swallowed exception, then the run went on: no failure
        (UNRAISABLE + STEPS, "running"),
        # a copy that put a blank line between two frames (two traces one after the other, as dev 940): still the report's
        (UNRAISABLE.replace("(info.kwargs or {}))\n", "(info.kwargs or {}))\n\n") + WATCHDOG, "nccl_timeout"),
        # near misses: the same traceback with no report line is raised and a failure (the watchdogs its symptoms) ...
        (UNRAISABLE.split("\n", 1)[1] + WATCHDOG, "python_exception"),
        # ... a traceback after the report's own is raised ...
        (UNRAISABLE + "Traceback (most recent call last):\n  File \"train.py\", line 88, in <module>\n    main()\n"
         "ValueError: num_generations must divide the batch\n" + WATCHDOG, "python_exception"),
        # ... and so is one that comes lines after the report
        (UNRAISABLE.split("\n", 1)[0] + "\n" + STEPS + UNRAISABLE.split("\n", 1)[1] + WATCHDOG, "python_exception"),
    ],
)  # fmt: skip
def test_a_swallowed_exception_is_no_failure(tmp_path, text, category):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary


def ipython(kind: str, message: str) -> str:
    """IPython 8's traceback (ultratb.py VerboseTB: a rule, the type and "Traceback (most recent call last)" right-aligned,
    the cell, a frame located by tbtools.py _format_filename, the exception line)."""
    return ("-" * 75 + "\n"
            + f"{kind:<42}Traceback (most recent call last)\n"
            "Cell In[6], line 14\n"
            "     13 )\n"
            "---> 14 trainer.train()\n\n"
            "File ~/venvs/nb/lib/python3.11/site-packages/transformers/trainer.py:2245, in Trainer.train(self, resume_from_checkpoint)\n"
            "   2244 else:\n"
            "-> 2245     return inner_training_loop(\n"
            "   2246         args=args,\n\n"
            f"{kind}: {message}\n")  # fmt: skip


@pytest.mark.parametrize(
    "kind, message",
    [
        ("TypeError", "_get_batch_samples() takes 3 positional arguments but 4 were given"),
        ("TimeoutError", "[Errno 110] Connection timed out"),
        # other first letters, as before
        ("KeyError", "'input_ids'"),
        ("RuntimeError", "Expected all tensors to be on the same device"),
    ],
)  # fmt: skip
def test_ipython_heads_of_any_first_letter(tmp_path, kind, message):
    lines = ipython(kind, message).splitlines()
    record = parse_block(lines[1:])  # the block as the parser starts it: at the head
    assert record is not None and (record.exception_type, record.message) == (kind, message)
    assert [f.function for f in record.frames] == ["<module>", "Trainer.train"]
    d = the_diagnosis(tmp_path, ipython(kind, message))
    assert (d.category, d.exception_type) == ("python_exception", kind), d.summary


def test_cpythons_own_header_is_as_before():
    # "Traceback (most recent call last):" starts with "T" too: CPython's (or loguru's, with a blank line) as before
    plain = ["Traceback (most recent call last):", '  File "train.py", line 9, in <module>', "    main()", "TypeError: bad operand"]
    record = parse_block(plain)
    assert (record.exception_type, record.message) == ("TypeError", "bad operand")
    assert [f.function for f in record.frames] == ["<module>"]
