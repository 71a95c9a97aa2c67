"""Rules from batch h16f of issue 16 (fixtures/eval README), each from a dev miss and the source
that prints the line: NCCL's result line under an NCCL error, mp.spawn's wrapper before torch 1.8
(a bare `Exception`), horovodrun's first failed process killed by SIGKILL, and a torch elastic box
entry joined on one line by a log viewer. Values in the texts are ours."""

from __future__ import annotations

import pytest

from gangscope.parsers.errors import detect
from diagnose_in_process import the_diagnosis


def rule_and_category(line: str) -> tuple[str, str] | None:
    found = detect(line)
    return (found[0].name, found[1]) if found is not None else None


# --- NCCL's result line (torch/csrc/distributed/c10d/NCCLUtils.cpp getNcclErrorDetailStr)


@pytest.mark.parametrize(
    "line",
    [
        "ncclUnhandledCudaError: Call to CUDA function failed.",
        "UnhandledCudaError: Call to CUDA function failed.",  # a paste that lost the `nccl`
        "[rank7]: ncclUnhandledCudaError: Call to CUDA function failed.",
        "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. ",
        "ncclInternalError: Internal check failed.",
        "ncclInvalidArgument: Invalid value for an argument.",
        "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.",
        "ncclInvalidUsage: This usually reflects invalid usage of NCCL library (such as too many async ops, too many collectives at once, mixing streams in a group, etc).",
        "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
    ],
)  # fmt: skip
def test_nccl_s_result_line_is_an_nccl_error(line):
    assert rule_and_category(line)[1] == "nccl_error"


@pytest.mark.parametrize(
    "line, expected",
    [
        ("SystemError: error return without exception set", ("exception_line", "python_exception")),  # CPython's own
        # TensorFlow's: its own words say a GPU allocation failed (tf_dst_uninitialized, batch h16z), never NCCL's
        ("InternalError: Dst tensor is not initialized.", ("tf_dst_uninitialized", "cuda_oom")),
    ],
)  # fmt: skip
def test_exceptions_that_share_a_name_with_nccl_results_are_no_nccl_errors(line, expected):
    assert rule_and_category(line) == expected


def test_an_nccl_error_whose_result_line_lost_its_prefix_is_an_nccl_error(tmp_path):
    text = (
        "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3699, "
        "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.27.3\n"
        "UnhandledCudaError: Call to CUDA function failed.\n"
    )  # fmt: skip
    d = the_diagnosis(tmp_path, text)
    assert d.category == "nccl_error"


# --- mp.spawn before ProcessRaisedException: raise Exception("\n\n-- Process N terminated with the following error:\n" + trace)

SPAWN_PARENT = (
    "Traceback (most recent call last):\n"
    '  File "/opt/venv/bin/fairseq-train", line 33, in <module>\n'
    "    sys.exit(load_entry_point('fairseq', 'console_scripts', 'fairseq-train')())\n"
    '  File "/opt/venv/lib/python3.6/site-packages/torch/multiprocessing/spawn.py", line 118, in join\n'
    "    raise Exception(msg)\n"
    "Exception: \n"
    "\n"
    "-- Process 3 terminated with the following error:\n"
)  # fmt: skip


def test_a_cut_old_spawn_wrapper_leaves_the_child_s_own_error_as_the_cause_with_its_process(tmp_path):
    text = (
        "    work = _default_pg.allreduce([tensor], opts)\n"
        "RuntimeError: NCCL error in: /opt/conda/conda-bld/pytorch/work/torch/lib/c10d/../c10d/NCCLUtils.hpp:78, invalid argument, NCCL version 2.4.8\n"
        + SPAWN_PARENT
        + "Traceback (most recent call last):\n"
        '  File "/opt/ven\n'
    )  # fmt: skip
    d = the_diagnosis(tmp_path, text)
    assert d.category == "nccl_error"
    assert d.first_failure["rank"] == 3
    assert d.exception_type == "RuntimeError"


def test_an_old_spawn_wrapper_names_the_child_s_exception(tmp_path):
    text = SPAWN_PARENT + (
        "Traceback (most recent call last):\n"
        '  File "/opt/venv/lib/python3.6/site-packages/torch/multiprocessing/spawn.py", line 19, in _wrap\n'
        "    fn(i, *args)\n"
        '  File "/srv/train.py", line 88, in main\n'
        "    assert cfg.batch_size % world_size == 0\n"
        "AssertionError\n"
    )  # fmt: skip
    d = the_diagnosis(tmp_path, text)
    assert d.category == "python_exception"
    assert d.exception_type == "AssertionError"
    assert d.first_failure["rank"] == 3


def test_a_plain_exception_is_no_wrapper(tmp_path):
    text = (
        "Traceback (most recent call last):\n"
        '  File "/srv/train.py", line 12, in <module>\n'
        "    raise Exception('bad config: lr must be positive')\n"
        "Exception: bad config: lr must be positive\n"
    )  # fmt: skip
    d = the_diagnosis(tmp_path, text)
    assert d.category == "python_exception"
    assert d.exception_type == "Exception"


# --- horovodrun (horovod/runner/gloo_run.py launch_gloo): the first failed process and its exit code

HOROVOD_TAIL = (
    "Traceback (most recent call last):\n"
    '  File "/opt/conda/bin/horovodrun", line 8, in <module>\n'
    "    sys.exit(run_commandline())\n"
    '  File "/opt/conda/lib/python3.8/site-packages/horovod/runner/gloo_run.py", line 318, in launch_gloo_elastic\n'
    "    .format(name=name, code=exit_code))\n"
    "RuntimeError: Horovod detected that one or more processes exited with non-zero status, thus causing the job to be terminated. "
    "The first process to do so was:\n"
)  # fmt: skip


@pytest.mark.parametrize(
    "tail",
    [
        "Process name: trainer-worker-1[0]\nExit code: 137\n",
        "Exit code: 137\nProcess name: 1\n",  # older horovod printed the code first
    ],
)  # fmt: skip
def test_horovodrun_s_first_process_killed_by_sigkill_is_host_memory(tmp_path, tail):
    d = the_diagnosis(tmp_path, HOROVOD_TAIL + tail)
    assert d.category == "host_oom"


@pytest.mark.parametrize("code", ["1", "1370"])
def test_horovodrun_s_first_process_with_another_exit_code_says_no_cause(tmp_path, code):
    d = the_diagnosis(tmp_path, HOROVOD_TAIL + f"Process name: trainer-worker-1[0]\nExit code: {code}\n")
    assert d.category == "unknown"


# --- torch elastic's box entry with its fields on one line (a log viewer's join)


def test_a_box_entry_joined_on_one_line_names_its_global_rank(tmp_path):
    text = "".join(
        f"  | 2025-02-03T11:20:07.118Z | [{i}]: time : 2025-02-03_11:20:07 host : algo-2 rank : {8 + i} (local_rank: {i}) "
        f"exitcode : -6 (pid: {300 + i}) error_file: <N/A> traceback : Signal 6 (SIGABRT) received by PID {300 + i}\n"
        for i in (1, 2)
    )
    d = the_diagnosis(tmp_path, text)
    assert d.first_failure["rank"] == 9


def test_a_box_signal_line_without_its_rank_is_read_as_before():
    found = detect("  traceback : Signal 9 (SIGKILL) received by PID 4242")
    assert found is not None and found[0].name == "box_signal"
