"""Diagnosis families of issue 16 batches 9-11 (fixtures/eval README): watchdog lines wrapped by a
terminal, a launcher reporting its worker's SIGKILL / exit 137, and a secondary NameError printed
beside the failure that caused it."""

from __future__ import annotations

import pytest

from diagnose_in_process import diagnoses_of
from rule_reference import category_of


@pytest.mark.parametrize(
    "line",
    [
        # a viewer's word wrap after "last enqueued"
        "[rank3]:[E909 09:55:46.996672294 ProcessGroupNCCL.cpp:1709] [PG 0 (default_pg) Rank 3] Timeout at NCCL work: 2070, last enqueued ",
        # a fixed-width wrap inside "completed"
        "[rank6]:[E ProcessGroupNCCL.cpp:1537] [PG 1 Rank 6] Timeout at NCCL work: 20917, last enqueued NCCL work: 20918, last co",
        # cut right after the work's number
        "[rank1]:[E1103 07:34:57.460801783 ProcessGroupNCCL.cpp:1834] [PG ID 0 PG GUID 0(default_pg) Rank 1] Timeout at NCCL work: 1",
    ],
)  # fmt: skip
def test_a_wrapped_or_cut_watchdog_timeout_line_is_still_a_collective_timeout(line):
    assert category_of(line) == "nccl_timeout"


@pytest.mark.parametrize(
    "line",
    [
        "NCCL work: 2082, last completed NCCL work: 2069.",  # the wrapped tail alone says nothing
        "[rank3]:[E909 09:55:46.996672294 ProcessGroupNCCL.cpp:1709] [PG 0 (default_pg) Rank 3] Timeout at NCCL wo",
        "Timeout at NCCL workshop registration",
    ],
)
def test_without_the_watchdog_s_words_and_number_there_is_no_timeout(line):
    assert category_of(line) is None


def test_a_wrapped_watchdog_line_is_diagnosed_with_its_rank(tmp_path):
    text = ("bench.node-a.nolog [stderr] [rank3]:[E909 09:55:46.996672294 ProcessGroupNCCL.cpp:1709] [PG 0 (default_pg) Rank 3] "
            "Timeout at NCCL work: 2070, last enqueued \n"
            "NCCL work: 2082, last completed NCCL work: 2069.\n")  # fmt: skip
    [d] = diagnoses_of(tmp_path, text)
    assert d.category == "nccl_timeout" and d.first_failure["rank"] == 3


@pytest.mark.parametrize(
    "line, category",
    [
        ("subprocess.CalledProcessError: Command '['/usr/bin/python3', 'train.py']' died with <Signals.SIGKILL: 9>.", "host_oom"),
        ("subprocess.CalledProcessError: Command 'bash run.sh' returned non-zero exit status 137.", "host_oom"),
        # any other death of the child is the child's own failure, reported elsewhere: alone, the line
        # says only that the child failed (unknown, like "Exit Code: 1"; batch h16k, errors.CHILD_FAILURE_WRAPPERS)
        ("subprocess.CalledProcessError: Command '['/usr/bin/python3', 'train.py']' returned non-zero exit status 1.", "unknown"),
        ("subprocess.CalledProcessError: Command 'bash run.sh' returned non-zero exit status 1370.", "unknown"),
        ("      Exit Code:    137", "host_oom"),
        ("      Exit Code:    1", "unknown"),
        ("<error>   [2022-01-05, 08:20:22] unexpected failure of trial after restart 2/5: container failed with non-zero exit code: "
         "container failed with non-zero exit code: 137 (exit code 137)  experiment-id=\"1\" system=\"master\"", "host_oom"),
        ("<info>    [2023-05-07 10:43:05] 087c0ee7 || INFO: container failed with non-zero exit code:  (exit code 1)", "unknown"),
    ],
)  # fmt: skip
def test_a_launcher_reporting_its_worker_s_exit_code(line, category):
    assert category_of(line) == category


def test_a_container_that_completed_is_no_failure():
    assert category_of("      Exit Code:    0") is None


OOM_TRACE = (
    "Traceback (most recent call last):\n"
    '  File "/ws/main.py", line 606, in <module>\n'
    "    model.cuda()\n"
    "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB\n"
)
KEYERROR_TRACE = (
    "Traceback (most recent call last):\n"
    '  File "/ws/main.py", line 590, in <module>\n'
    "    cfg = config['model']\n"
    "KeyError: 'model'\n"
)
NAME_ERROR_TRACE = (
    "Traceback (most recent call last):\n"
    '  File "/ws/main.py", line 826, in <module>\n'
    "    if trainer.global_rank == 0:\n"
    "NameError: name 'trainer' is not defined\n"
)


def test_a_cleanup_name_error_printed_before_the_oom_does_not_outrank_it(tmp_path):
    [d] = diagnoses_of(tmp_path, NAME_ERROR_TRACE + OOM_TRACE)
    assert d.category == "cuda_oom"


def test_a_cleanup_name_error_printed_before_a_user_code_bug_names_the_bug(tmp_path):
    [d] = diagnoses_of(tmp_path, NAME_ERROR_TRACE + KEYERROR_TRACE)
    assert d.category == "python_exception" and d.exception_type == "KeyError"


def test_a_name_error_alone_is_the_bug_it_is(tmp_path):
    [d] = diagnoses_of(tmp_path, NAME_ERROR_TRACE)
    assert d.category == "python_exception" and d.exception_type == "NameError"


def test_a_name_error_of_one_rank_is_not_explained_by_another_rank_s_oom(tmp_path):
    text = "".join(f"[rank1]:{line}\n" for line in NAME_ERROR_TRACE.splitlines()) + "".join(
        f"[rank0]:{line}\n" for line in OOM_TRACE.splitlines())
    [d] = diagnoses_of(tmp_path, text)
    assert d.category == "python_exception" and d.first_failure["rank"] == 1
