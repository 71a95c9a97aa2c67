"""Rules from batch h29d of issue 16 (fixtures/eval README, "Batch h29d"): a blind draw of the judged set's commonest
categories, each query the exact line a library prints for such a failure (fixtures/eval/h29d_queries.md).

The draw came right 20/24; its four misses are shapes of one copy each (a rich traceback box pasted from its middle with
a frame's location wrapped over two rows, a failure line broken by blanks inside a word, frames whose paths hold a
terminal's padding, a Ctrl-C stack labeled a hang). Probing gangscope with the 26 query lines themselves (each as the
library prints it, after a training bar) showed one class it read wrong: CPython's faulthandler watchdog dump
(Modules/faulthandler.c dump_traceback_later: "Timeout (H:MM:SS)!" then every thread's stack, then _exit(1) if asked)
was answered as a crash of no category, "Fatal Python error: Timeout", words the dump never prints. It is a report that
the program did not finish in time, no error of its own: `hang` (parsers/errors.py FATAL_ERROR_CAUSES, classify_trace).
The lines below are rebuilt from the libraries' format strings with our values, not copied from the fixtures."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis

BAR = "Epoch 3:  41%|████      | 410/1000 [05:12<07:29,  1.31it/s, loss=2.31]\n"

# faulthandler_thread: format_timeout, then _Py_DumpTracebackThreads (write_thread_id: "Thread 0x%lx" / "Current thread
# 0x%lx", " (most recent call first):"; dump_frame: '  File "%s", line %d in %s'; a blank line between threads)
DUMP = ("Timeout (0:30:00)!\n"
        "Thread 0x00007f3c8e5fe640 (most recent call first):\n"
        '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 3439 in barrier\n'
        '  File "/workspace/train.py", line 88 in main\n'
        '  File "/workspace/train.py", line 131 in <module>\n'
        "\n"
        "Current thread 0x00007f3c9d2c4740 (most recent call first):\n"
        '  File "/opt/conda/lib/python3.10/threading.py", line 320 in wait\n')  # fmt: skip


@pytest.mark.parametrize(
    "text",
    [
        BAR + DUMP,  # after training progress
        DUMP,  # the dump alone
        BAR + DUMP.replace("Timeout (0:30:00)!", "Timeout (0:00:05.500000)!"),  # format_timeout with microseconds
        BAR + DUMP.replace("Timeout (0:30:00)!", "Timeout (12:00:00)!"),  # hours above 9
        BAR + DUMP + "train.sh: line 4: 48213 Exit 1                  python train.py\n",  # exit=True: _exit(1), the shell's word
    ],
)
def test_a_watchdog_dump_is_a_hang(tmp_path, text):
    d = the_diagnosis(tmp_path, text)
    assert d.category == "hang", d.summary
    assert "Timeout (" in d.summary and "Fatal Python error" not in d.summary


@pytest.mark.parametrize(
    "text, category",
    [
        # faulthandler's dumps for a fatal signal stay crashes of no category of their own
        (BAR + DUMP.replace("Timeout (0:30:00)!", "Fatal Python error: Segmentation fault\n"), "unknown"),
        (BAR + DUMP.replace("Timeout (0:30:00)!", "Fatal Python error: Aborted\n"), "unknown"),
        # Py_FatalError of the recursion guard (h28c): the program's unbounded recursion
        (BAR + "Fatal Python error: _Py_CheckRecursiveCall: Cannot recover from stack overflow.\n"
         "Python runtime state: initialized\n\n" + DUMP.split("\n", 1)[1], "python_exception"),
        # the words elsewhere on a line, or another form, are no dump's head
        (BAR + "[watchdog] Timeout (0:30:00)! no heartbeat from rank 3\n" + BAR, "running"),
        (BAR + "Timeout (30s)! retrying the download\n" + BAR, "running"),
    ],
)
def test_near_misses_of_the_watchdog_dump(tmp_path, text, category):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary
