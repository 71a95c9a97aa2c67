"""Rules from batch h26b of issue 16 (fixtures/eval README, "Batch h26b"): a blind draw from forums and Q&A pages (the
`search` corpus "pages"), not GitHub issue threads.

One class of its misses shows its cause in the log: ProcessGroupNCCL's watchdog, on a timed-out work, logs the timeout,
"Some NCCL operations have failed or timed out. ..." and "To avoid data inconsistency, we are taking the entire process
down.", then rethrows the timeout on its thread: std::terminate, abort(), and faulthandler's dump for SIGABRT ("Fatal Python
error: Aborted" and the threads' stacks). That abort is the watchdog's own teardown, not a crash of its own: the timeout the
same process reported before it is the answer (pipeline/diagnose/rules.py WATCHDOG_TEARDOWN_ABORT, root_cause.py
_abort_of_its_own_watchdog). Not an abort printed before the timeout (the crash of a rank whose peers then timed out), not
another fatal signal, not an abort of another rank. The lines below are rebuilt from torch's, libstdc++'s and CPython's
format strings with our values, not copied from the fixtures."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis
from gangscope.pipeline.diagnose.rules import WATCHDOG_TEARDOWN_ABORT


def watchdog(rank: int = 0, form: str = "2.0") -> str:
    if form == "2.0":  # torch 1.10-2.1: glog's "[E file:line]" without the rank prefix
        return (f"[E ProcessGroupNCCL.cpp:828] [Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=77, "
                f"OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600412 milliseconds before timing out.")
    return (f"[rank{rank}]:[E1103 07:34:57.460801783 ProcessGroupNCCL.cpp:632] [Rank {rank}] Watchdog caught collective operation "
            f"timeout: WorkNCCL(SeqNum=5, OpType=ALLGATHER, NumelIn=1, NumelOut=2, Timeout(ms)=600000) ran for 600093 "
            f"milliseconds before timing out.")


TEARDOWN = ("[E ProcessGroupNCCL.cpp:455] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA "
            "kernels, subsequent GPU operations might run on corrupted/incomplete data.\n"
            "[E ProcessGroupNCCL.cpp:460] To avoid data inconsistency, we are taking the entire process down.\n")
TERMINATE = "terminate called after throwing an instance of 'std::runtime_error'\n"
STACK = ("\nThread 0x00007f3a1c7fe700 (most recent call first):\n"
         '  File "/opt/venv/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 1536 in all_reduce\n'
         '  File "/work/train.py", line 88 in step\n')


@pytest.mark.parametrize(
    "line, matches",
    [
        ("Fatal Python error: Aborted", True),
        # near misses: other fatal signals and Py_FatalError's own messages, the shell's word, prose quoting the line
        ("Fatal Python error: Segmentation fault", False),
        ("Fatal Python error: Bus error", False),
        ("Fatal Python error: _PyInterpreterState_Get: no current thread state", False),
        ("Aborted (core dumped)", False),
        ("it dies with Fatal Python error: Aborted after 30 minutes", False),
    ],
)  # fmt: skip
def test_the_abort_line_and_its_near_misses(line, matches):
    assert bool(WATCHDOG_TEARDOWN_ABORT.search(line)) is matches


@pytest.mark.parametrize(
    "text, category, rank",
    [
        # the watchdog's timeout, its teardown, terminate, then faulthandler's dump with no rank: the timeout
        (watchdog(0) + "\n" + TEARDOWN + TERMINATE + "Fatal Python error: Aborted\n" + STACK, "nccl_timeout", 0),
        (watchdog(1) + "\n" + watchdog(0) + "\n" + "Fatal Python error: Aborted\n" + STACK, "nccl_timeout", 1),
        (watchdog(0, "2.4") + "\n" + "Fatal Python error: Aborted\n" + STACK, "nccl_timeout", 0),
        # the same rank's prefix on both
        (watchdog(0, "2.4") + "\n[rank0]:Fatal Python error: Aborted\n[rank0]:\n", "nccl_timeout", 0),
        # near misses: the abort alone; an abort printed before the timeout (a crashed rank, its peer timing out after);
        # another fatal signal after the timeout; the abort of another rank than the one that timed out
        ("Fatal Python error: Aborted\n" + STACK, "unknown", None),
        ("Fatal Python error: Aborted\n" + STACK + watchdog(0) + "\n", "unknown", 0),
        (watchdog(0) + "\nFatal Python error: Segmentation fault\n" + STACK, "unknown", 0),
        (watchdog(0, "2.4") + "\n[rank1]:Fatal Python error: Aborted\n[rank1]:\n", "unknown", 1),
    ],
)  # fmt: skip
def test_the_logs_of_the_batch(tmp_path, text, category, rank):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary
    assert d.first_failure["rank"] == rank, d.summary
