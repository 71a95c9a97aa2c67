"""Rule from batch h28g of issue 16 (fixtures/eval README, "Batch h28g"): a blind draw of whole log files committed
to public repositories.

One class of its misses shows its cause in the log: two ranks of one torchrun pod raised the same exception (the same
line, word for word) and neither line carries a time. gangscope took the one printed first, but the order two ranks'
tracebacks appear in is the order their streams were merged. torchrun's box says more: the agent stopped the other
ranks when it saw the first failed exit ("Sending process N closing signal SIGTERM"), and lists each of them with
`exitcode : -15` (or -9, SIGKILL past the timeout); its root cause is the failure recorded first
(ChildFailedError.get_first_failure). A rank the box lists as stopped by the agent had not exited on its exception when
the root-cause rank had: the root-cause rank is the first failure (pipeline/diagnose/root_cause.first_exit_of_same_error,
rules.AGENT_CLOSING_EXITCODES). The lines below are rebuilt from torch's format strings with our values, not copied from
the fixtures."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis

FRAMES = ['  File "/workspace/speechkit/train_distill.py", line 412, in <module>',
          "    main()",
          '  File "/workspace/speechkit/train_distill.py", line 371, in train',
          "    accelerator.backward(loss)",
          '  File "/opt/conda/lib/python3.11/site-packages/torch/autograd/graph.py", line 825, in _engine_run_backward',
          "    return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass"]  # fmt: skip
SAME = "RuntimeError: Found dtype Half but expected Float"


def traceback(rank: int, exception: str = SAME) -> str:
    lines = ["Traceback (most recent call last):", *FRAMES, exception]
    return "".join(f"[rank{rank}]: {line}\n" for line in lines)


def box(first: int, other: int, other_exit: int, first_exit: int = 1) -> str:
    """torch 2.x's ChildFailedError box (errors/__init__.py _MSG_FORMAT_TEMPLATE / _format_failure): the other failures,
    then the root cause."""
    def entry(index: int, rank: int, code: int, pid: int) -> str:
        why = (f"Signal {-code} ({ {15: 'SIGTERM', 9: 'SIGKILL'}[-code] }) received by PID {pid}" if code < 0
               else "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html")
        return (f"[{index}]:\n  time      : 2026-11-02_08:14:51\n  host      : gpu-node-07\n"
                f"  rank      : {rank} (local_rank: {rank})\n  exitcode  : {code} (pid: {pid})\n"
                f"  error_file: <N/A>\n  traceback : {why}\n")
    return ("E1102 08:14:51.602000 61207 torch/distributed/elastic/multiprocessing/api.py:874] failed (exitcode: "
            f"{first_exit}) local_rank: {first} (pid: {61230 + first}) of binary: /opt/conda/bin/python3\n"
            "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
            + "=" * 60 + "\ntrain_distill.py FAILED\n" + "-" * 60 + "\nFailures:\n"
            + entry(1, other, other_exit, 61230 + other)
            + "-" * 60 + "\nRoot Cause (first observed failure):\n"
            + entry(0, first, first_exit, 61230 + first) + "=" * 60 + "\n")  # fmt: skip


SIGTERM_LINE = ("W1102 08:14:51.331000 61207 torch/distributed/elastic/multiprocessing/api.py:900] "
                "Sending process 61230 closing signal SIGTERM\n")  # fmt: skip


@pytest.mark.parametrize(
    "text, rank",
    [
        # dev 980's shape: rank 0 printed first, the agent SIGTERMed it, rank 1 is the box's root cause
        (traceback(0) + traceback(1) + SIGTERM_LINE + box(first=1, other=0, other_exit=-15), 1),
        # SIGKILL past the close timeout: the same
        (traceback(0) + traceback(1) + SIGTERM_LINE + box(first=1, other=0, other_exit=-9), 1),
        # the root-cause rank printed first: as before
        (traceback(1) + traceback(0) + SIGTERM_LINE + box(first=1, other=0, other_exit=-15), 1),
    ],
)  # fmt: skip
def test_the_rank_that_exited_on_the_same_error_first(tmp_path, text, rank):
    d = the_diagnosis(tmp_path, text)
    assert (d.category, d.exception_type, d.first_failure["rank"]) == ("python_exception", "RuntimeError", rank), d.summary


@pytest.mark.parametrize(
    "text, rank",
    [
        # both exited on their own (exit code 1 each): the box orders them by seconds, the text by the merge: as before
        (traceback(0) + traceback(1) + box(first=1, other=0, other_exit=1), 0),
        # rank 0 raised another exception: its own failure, printed first, stays the answer
        (traceback(0, "ValueError: the batch holds no speaker embeddings") + traceback(1) + SIGTERM_LINE
         + box(first=1, other=0, other_exit=-15), 0),
        # the same words with another class
        (traceback(0, "TypeError: Found dtype Half but expected Float") + traceback(1) + SIGTERM_LINE
         + box(first=1, other=0, other_exit=-15), 0),
        # no box: the order of appearance, as before
        (traceback(0) + traceback(1), 0),
        # the root-cause rank printed no traceback of it: nothing to prefer
        (traceback(0) + SIGTERM_LINE + box(first=1, other=0, other_exit=-15), 0),
    ],
)  # fmt: skip
def test_near_misses_keep_the_order_of_appearance(tmp_path, text, rank):
    d = the_diagnosis(tmp_path, text)
    assert d.category == "python_exception", d.summary
    assert d.first_failure["rank"] == rank, d.summary
