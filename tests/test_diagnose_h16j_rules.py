"""Rules from batch h16j of issue 16 (fixtures/eval README): a log that ends inside a Python traceback
cut before its exception line, and a native library's fatal-signal dump.

CPython prints "Traceback (most recent call last):" and the `File "...", line N, in f` frames only while
it reports an exception, the exception line last: a text whose last record is such a trace with no
exception line was cut inside a failure (unknown, on the rank that printed it). A trace cut by other
output of its pod and followed by more of it is no end. glog / absl dump the signal that is killing their
process ("*** SIGSEGV (@0x0) received by PID N ..."): a death with no cause of its own, SIGTERM from
another process a stop from outside. Values in the texts are ours."""

from __future__ import annotations

import pytest

from gangscope.parsers.errors import detect
from diagnose_in_process import the_diagnosis


def rule_and_category(line: str) -> tuple[str, str] | None:
    found = detect(line)
    return (found[0].name, found[1]) if found is not None else None


@pytest.mark.parametrize(
    "line, expected",
    [
        ("*** SIGSEGV (@0x0) received by PID 4411 (TID 0x7f2a91c4e740) from PID 0; stack trace: ***", ("native_signal_dump", "unknown")),
        ("W0619 11:40:05.296490 30872 init.cc:205] *** SIGSEGV (@0x8) received by PID 30872 (TID 0x7f2a91c4e740) from PID 8; stack trace: ***",
         ("native_signal_dump", "unknown")),
        ("*** SIGABRT (@0x3e80000085b) received by PID 2139 (TID 0x7fea12549740) from PID 2139; stack trace: ***", ("native_signal_dump", "unknown")),
        ("*** SIGTERM (@0x3a1c) received by PID 7156 (TID 0x7f81d5a2b700) from PID 14876; stack trace: ***", ("native_signal_dump", "preempted")),
        ("*** SIGSEGV (@(nil)), see gl__________41#s15 received by PID 1125 (TID 21309) on cpu 42; stack trace: ***", ("native_signal_dump", "unknown")),
        ("*** SIGSEGV (@0x1817c45e8) received by PID 4540 (TID 0x1ee24a1c0) stack trace: ***", ("native_signal_dump", "unknown")),
        ("*** SIGSEGV received at time=1716200000 on cpu 3 ***", ("native_signal_dump", "unknown")),
        # not these: glog's time line before the dump, a program's own sentence about a signal
        ('*** Aborted at 1592566805 (unix time) try "date -d @1592566805" if you are using GNU date ***', None),
        ("worker 3: SIGTERM received by PID 1, forwarding to the trainer", None),
    ],
)
def test_the_lines(line, expected):
    assert rule_and_category(line) == expected


STEPS = "".join(f"epoch 0 step {i} loss {2.5 - i / 10:.4f}\n" for i in range(3))
CUT = ("Traceback (most recent call last):\n"
       '  File "/srv/train/run.py", line 88, in <module>\n'
       "    trainer.fit()\n"
       '  File "/srv/train/trainer.py", line 412, in fit\n')


def test_a_log_that_ends_inside_a_traceback_failed_with_no_cause(tmp_path):
    d = the_diagnosis(tmp_path, STEPS + CUT)
    assert (d.outcome, d.category) == ("failed", "unknown")
    assert "traceback cut before its exception line" in d.summary


def test_the_cut_traceback_names_the_rank_that_printed_it(tmp_path):
    text = "".join(f"[rank5]: {line}\n" for line in CUT.splitlines())
    d = the_diagnosis(tmp_path, text)
    assert d.category == "unknown"
    assert d.first_failure["rank"] == 5


def test_frames_without_their_header_at_the_end_are_a_cut_traceback_too(tmp_path):
    text = STEPS + '  File "/srv/train/trainer.py", line 412, in fit\n    self.step(batch)\n  File "/srv/train/trainer.py", line 97, in step\n'
    assert the_diagnosis(tmp_path, text).category == "unknown"


def test_a_cut_traceback_with_training_after_it_is_no_end(tmp_path):
    text = CUT + "epoch 0 step 9 loss 2.1000\n" + STEPS
    assert the_diagnosis(tmp_path, text).category == "running"


def test_a_whole_traceback_keeps_its_exception(tmp_path):
    text = STEPS + CUT + "    raise ValueError(batch)\nValueError: bad batch 7\n"
    assert the_diagnosis(tmp_path, text).category == "python_exception"


def test_a_cause_before_the_cut_traceback_wins(tmp_path):
    text = STEPS + ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
                    "79.15 GiB of which 1.02 GiB is free.\n") + CUT
    assert the_diagnosis(tmp_path, text).category == "cuda_oom"


def test_a_segfault_dump_ends_the_run_with_no_cause(tmp_path):
    text = STEPS + ('*** Aborted at 1592566805 (unix time) try "date -d @1592566805" if you are using GNU date ***\n'
                    "PC: @                0x0 (unknown)\n"
                    "*** SIGSEGV (@0x0) received by PID 4411 (TID 0x7f2a91c4e740) from PID 0; stack trace: ***\n"
                    "    @     0x7f2a9182c5d0 (unknown)\n")
    d = the_diagnosis(tmp_path, text)
    assert (d.outcome, d.category) == ("failed", "unknown")


def test_a_sigterm_from_another_process_is_a_stop_from_outside(tmp_path):
    text = STEPS + "*** SIGTERM (@0x3a1c) received by PID 7156 (TID 0x7f81d5a2b700) from PID 14876; stack trace: ***\n"
    assert the_diagnosis(tmp_path, text).category == "preempted"


def test_a_cause_before_the_signal_dump_wins(tmp_path):
    text = STEPS + ("RuntimeError: CUDA error: an illegal memory access was encountered\n"
                    "*** SIGABRT (@0x3e80000085b) received by PID 2139 (TID 0x7fea12549740) from PID 2139; stack trace: ***\n")
    assert the_diagnosis(tmp_path, text).category == "cuda_error"
