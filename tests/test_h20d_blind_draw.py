"""Rules from batch h20d of issue 16 (fixtures/eval README, "Batch h20d"): a second blind draw of the communication and
start-up slice shaped like the judged set.

The classes of mistake it showed, each read from the source that prints the text (cited in parsers/errors.py, the
blocks "h20d"):
- torch's NCCL result line ("ncclInternalError: Internal check failed. ...", NCCLUtils.cpp getNcclErrorDetailStr) as the
  exception line of a traceback the copy cut was taken for a Python exception of that name: trace rule nccl_result_type;
- a CUDA device-side assert line cut before "failed." (a thread's title) was not read: line rule device_assert_cut;
- a log ending in NCCL's socket connect retries ("Call to connect returned Connection refused, retrying",
  src/include/socket.h / src/misc/socket.cc) read as running: line rule nccl_connect_retry, a warning that only the end
  of a log makes the answer.
Values in the texts are ours."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis
from rule_reference import category_of


@pytest.mark.parametrize(
    "line, category",
    [
        ("/aten/src/ATen/native/cuda/Indexing.cu:1141: indexSelectLargeIndex: block: [612,0,0], thread: [64,0,0] Assertion `src",
         "cuda_error"),
        ("/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu:92: operator(): block: [3,0,0], thread: [17,0,0] Assertion `index >= -s",
         "cuda_error"),
        # the whole line stays device_assert's
        ("/aten/src/ATen/native/cuda/Indexing.cu:1141: indexSelectLargeIndex: block: [612,0,0], thread: [64,0,0] Assertion "
         "`srcIndex < srcSelectDimSize` failed.", "cuda_error"),
        # near misses: a Python assertion, an assertion word in prose
        ("AssertionError: Assertion `x > 0` failed", "python_exception"),
        ("Assertion checks passed for block: [1,2] thread: [3]", None),
    ],
)  # fmt: skip
def test_the_lines_and_their_near_misses(line, category):
    assert category_of(line) == category


RETRIES = "".join(f"job-worker-0:{p}:{t} [{g}] NCCL INFO Call to connect returned Connection refused, retrying\n"
                  for p, t, g in [(31, 80, 0), (33, 81, 2)] * 6)  # fmt: skip
# retries a connection follows: the run goes on, no failure
RETRIES_THEN_STEPS = RETRIES + "".join(f"{{'loss': 3.{i}1, 'grad_norm': 1.4{i}, 'learning_rate': {i}.04e-06, 'epoch': 0.0{i}}}\n"
                                        for i in range(1, 4))  # fmt: skip
CUT_NCCL_TRACE = ("[2113] Initializing process group with: {'MASTER_ADDR': '10.40.3.11', 'MASTER_PORT': '29411', 'WORLD_SIZE': '8'}\n"
                  "Traceback (most recent call last):\n"
                  '  File "/work/ddp/test_ddp.\n'
                  "ncclInternalError: Internal check failed. This is either a bug in NCCL or due to memory corruption\n")  # fmt: skip
SYSTEM_TRACE = ("Traceback (most recent call last):\n"
                '  File "/home/u/train.py", line 41, in <module>\n'
                "    model = DDP(model, device_ids=[rank])\n"
                "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.\n")  # fmt: skip
# near miss: a Python SystemError is no NCCL result
PY_SYSTEM_ERROR = ("Traceback (most recent call last):\n"
                   '  File "/home/u/train.py", line 41, in <module>\n'
                   "    run()\n"
                   "SystemError: error return without exception set\n")  # fmt: skip


@pytest.mark.parametrize(
    "text, category",
    [(RETRIES, "nccl_error"), (CUT_NCCL_TRACE, "nccl_error"), (SYSTEM_TRACE, "nccl_error"),
     (PY_SYSTEM_ERROR, "python_exception")],
)  # fmt: skip
def test_the_logs_of_the_batch(tmp_path, text, category):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary


def test_retries_followed_by_progress_are_no_failure(tmp_path):
    assert the_diagnosis(tmp_path, RETRIES_THEN_STEPS).category != "nccl_error"
