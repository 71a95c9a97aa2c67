"""Batch h16r-19 of issue 16 (fixtures/eval README): failed runs printed without a Python traceback naming the cause.
Lines that end their process wherever they stand: Paddle's signal report (a death by signal, not a Python exception),
a glog / absl / TSL FATAL line, the what() of an uncaught C++ exception (std::bad_alloc: host memory). Error-level
logger lines (Python logging ERROR/CRITICAL) as a log's last word: a failure, `unknown` unless their
message names one; followed by progress they are no failure. Values in the texts are ours."""

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
        ("FatalError: `Segmentation fault` is detected by the operating system.", ("paddle_fatal_signal", "unknown")),
        ("FatalError: `Erroneous arithmetic operation` is detected by the operating system.", ("paddle_fatal_signal", "unknown")),
        ("FatalError: `Terminated` is detected by the operating system.", ("paddle_fatal_signal", "preempted")),
        ("FatalError: A serious error (Segmentation fault) is detected by the operating system. (at /paddle/paddle/fluid/"
         "platform/init.cc:303)", ("paddle_fatal_signal", "unknown")),
        ("F0417 08:21:05.114822  3310 solver.cpp:91] Check failed: status.ok() Failed to open leveldb train_lmdb",
         ("glog_fatal", "unknown")),
        ("2026-02-11 07:02:41.330118: F external/xla/xla/service/gpu/gpu_compiler.cc:712] Check failed: ok (0 vs. 1)",
         ("glog_fatal", "unknown")),
        ("(RolloutWorker pid=4412) F0211 07:02:41.330118   4412 client.cc:88] Check failed: channel_ != nullptr",
         ("glog_fatal", "unknown")),
        ("  what():  std::bad_alloc", ("cxx_terminate_what", "host_oom")),
        ("  what():  basic_string::_M_create", ("cxx_terminate_what", "unknown")),
        ("ERROR:root:Training run failed", ("logger_error", "unknown")),
        ("CRITICAL:trainer:worker 3 stopped answering", ("logger_error", "unknown")),
        ("[2026-02-11 07:02:41] [ERROR] Command exited with code 1", ("logger_error", "unknown")),
        ("2026-02-11 07:02:41,330 - trainer - ERROR - epoch 3 did not finish", ("logger_error", "unknown")),
        ("2026-02-11 07:02:41 | ERROR | fairseq_cli.train | could not finish the epoch", ("logger_error", "unknown")),
        ("2026-02-11 07:02:41.330 | ERROR    | train:main:88 - stopping", ("logger_error", "unknown")),
        ("[NeMo E 2026-02-11 07:02:41 exp_manager:611] the run stopped", ("logger_error", "unknown")),
    ],
)  # fmt: skip
def test_the_lines_and_their_categories(line, expected):
    assert rule_and_category(line) == expected


@pytest.mark.parametrize(
    "line",
    [
        "I0211 07:02:41.330118   4412 net.cpp:100] Creating Layer conv9",
        "W0211 07:02:41.330118   4412 device_context.cc:338] Please NOTE: device: 0",
        "E0211 07:02:41.330118   4412 cuda_dnn.cc:8310] Unable to register cuDNN factory: Attempting to register factory "
        "for plugin cuDNN when one has already been registered",
        "2026-02-11 07:02:41,330 - trainer - INFO - epoch 3 done",
        "ERROR_RATE = 0.02",
        "what(): this is a sentence about what() calls",
    ],
)
def test_lines_like_them_are_not(line):
    found = rule_and_category(line)
    assert found is None or found[0] not in ("glog_fatal", "logger_error", "cxx_terminate_what",
                                              "paddle_fatal_signal")  # fmt: skip


# --- whole logs

STEPS = "".join(f"step {i} loss {2.5 - i / 100:.4f}\n" for i in range(1, 9))
PADDLE = ("--------------------------------------\nC++ Traceback (most recent call last):\n"
          "--------------------------------------\nNo stack trace in paddle, may be caused by external reasons.\n\n"
          "----------------------\nError Message Summary:\n----------------------\n"
          "FatalError: `Segmentation fault` is detected by the operating system.\n"
          "  [TimeInfo: *** Aborted at 1771920001 (unix time) try \"date -d @1771920001\" if you are using GNU date ***]\n"
          "  [SignalInfo: *** SIGSEGV (@0x0) received by PID 5120 (TID 0x7f1a2b3c4d50) from PID 0 ***]\n")  # fmt: skip


def test_paddle_s_signal_report_is_unknown_not_a_python_exception(tmp_path):
    d = the_diagnosis(tmp_path, STEPS + PADDLE)
    assert (d.outcome, d.category) == ("failed", "unknown")


def test_a_fatal_glog_line_ends_the_run_even_when_other_threads_log_after_it(tmp_path):
    text = ("I0211 07:02:41.330118   4412 net.cpp:100] Creating Layer conv9\n"
            "F0211 07:02:41.331020   4418 math_functions.cpp:250] Check failed: a <= b (0 vs. -1.19209e-07)\n"
            "*** Check failure stack trace: ***\n"
            "I0211 07:02:41.332511   4412 net.cpp:150] Setting up conv9\n")  # fmt: skip
    assert the_diagnosis(tmp_path, text).category == "unknown"


def test_bad_alloc_is_host_memory(tmp_path):
    text = STEPS + ("terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc\n"
                    "Aborted (core dumped)\n")  # fmt: skip
    assert the_diagnosis(tmp_path, text).category == "host_oom"


def test_an_error_line_as_the_last_word_is_a_failure_with_no_cause(tmp_path):
    d = the_diagnosis(tmp_path, STEPS + "[2026-02-11 07:02:41] [ERROR] Command exited with code 1\n")
    assert (d.outcome, d.category) == ("failed", "unknown")
    assert "error-level line" in d.summary


def test_an_error_line_that_names_a_failure_as_the_last_word_is_that_failure(tmp_path):
    # (an earlier rule of the table reads this message first; logger_error's own reading of it is the same)
    text = STEPS + "2026-02-11 07:02:41,330 - ckpt - ERROR - Error(s) in loading state_dict for GPT: size mismatch\n"
    assert the_diagnosis(tmp_path, text).category == "checkpoint_error"


def test_a_glog_error_line_as_the_last_word_is_no_failure(tmp_path):
    # glog's ERROR is no end: TensorFlow and XLA log it at every start and go on
    text = STEPS + ("2026-02-11 07:02:41.330118: E external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:9261] Unable to "
                    "register cuDNN factory: Attempting to register factory for plugin cuDNN when one has already been registered\n")
    assert the_diagnosis(tmp_path, text).category == "running"


def test_an_error_line_that_training_went_on_after_is_no_failure(tmp_path):
    text = "E0211 07:02:41.330118   4412 runtime.cc:120] retrying the device query\nERROR:root:tensorboard not found\n" + STEPS
    assert the_diagnosis(tmp_path, text).category == "running"
