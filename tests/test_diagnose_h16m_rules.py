"""Rules from batch h16m of issue 16 (fixtures/eval README): an unselected draw's dev misses.

- A CUDA device assert whose backticks a thread's Markdown ate (`Assertion t >= 0 && t < n_classes
  failed.`) is still the device runtime's assert (`cuda_error`).
- The dynamic loader's `<lib>.so: undefined symbol: <name>` (glibc dl-lookup.c, the message of the
  ImportError CPython raises for it) is an environment / build mismatch (`python_exception`) whatever
  carries it: a JSON log entry's field, a logger's line.
- Ray Train's `TrainingFailedError: The Ray Train run failed. Please inspect the previous error
  messages for a cause.` (ray/train/base_trainer.py, raised `from result.error`) only says the run
  failed: the error before it is the answer; alone, `unknown`.
- SkyPilot's `Job finished (status: FAILED_...)` / `Job N is already in terminal state FAILED_...`
  say a job failed, not why: a summary (`unknown`).

Values in the texts are ours."""

from __future__ import annotations

import re

import pytest

from gangscope.parsers.errors import PREFILTER, ErrorDetector, child_failure_wrapper
from gangscope.parsers.lines import Line
from diagnose_in_process import the_diagnosis


def detect(text: str):
    if not re.search(PREFILTER, text):
        return None
    consumed, records = ErrorDetector().feed(Line("2026-11-30T04:13:57Z", 0, text))
    return records[0] if records else None


@pytest.mark.parametrize(
    "line, category, rule",
    [
        ("../aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], "
         "thread: [17,0,0] Assertion t >= 0 && t < n_classes failed.", "cuda_error", "device_assert"),
        ("/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu:92: operator(): block: [41,0,0], thread: [63,0,0] "
         "Assertion `index >= -sizes[i] && index < sizes[i] && \"index out of bounds\"` failed.", "cuda_error", "device_assert"),
        ('    "message": "Module raised an exception for failing to TPU node IP: /root/.local/lib/python3.7/site-packages/'
         'tensorflow/core/kernels/libtfkernel_sobol_op.so: undefined symbol: _ZN10tensorflow14kernel_factoryE.",',
         "python_exception", "undefined_symbol"),
        ("2025-01-09 10:22:41 | ERROR | loader | /opt/venv/lib/python3.10/site-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: "
         "undefined symbol: _ZN3c104cuda9SetDeviceEi", "python_exception", "undefined_symbol"),
        # an exception line keeps its own rule (it names the type)
        ("ImportError: /opt/venv/lib/python3.12/site-packages/vllm/_C.abi3.so: undefined symbol: _ZN5torch3jit17parseSchema",
         "python_exception", "exception_line"),
        ("✓ Job finished (status: FAILED_DRIVER).", "unknown", "skypilot_job_failed"),
        ("Job finished (status: ManagedJobStatus.FAILED_SETUP).", "unknown", "skypilot_job_failed"),
        ("Job 41 is already in terminal state FAILED_CONTROLLER. For more details, run: sky jobs logs --controller 41",
         "unknown", "skypilot_terminal_failed"),
        ("TrainingFailedError: The Ray Train run failed. Please inspect the previous error messages for a cause.",
         "unknown", "exception_line"),
    ],
)
def test_the_batchs_lines_read_as_their_category(line, category, rule):
    found = detect(line)
    assert found is not None, line
    assert (found.category, found.pattern) == (category, rule)


@pytest.mark.parametrize(
    "line",
    [
        "INFO: Job finished (status: SUCCEEDED).",
        "Job 12 is already in terminal state SUCCEEDED.",
        "Assertion checks passed for 12 configs",
        "nm -D libfoo.so | grep undefined symbols",
    ],
)
def test_near_misses_are_no_failure(line):
    found = detect(line)
    assert found is None or found.category not in ("unknown", "cuda_error", "python_exception"), (line, found)


def test_ray_trains_failure_is_a_wrapper_only_with_its_own_message():
    message = "The Ray Train run failed. Please inspect the previous error messages for a cause."
    assert child_failure_wrapper("ray.train.base_trainer.TrainingFailedError", message) == "ray_train_failed"
    assert child_failure_wrapper("TrainingFailedError", message) == "ray_train_failed"
    # other projects' own TrainingFailedError (accuracy guards, service errors) are errors in their own right
    assert child_failure_wrapper("TrainingFailedError", "Training failed for the 'lstm' model.") is None


IPYTHON_FIT = (
    "File ~/work/venv/lib/python3.10/site-packages/ray/train/base_trainer.py:638, in BaseTrainer.fit(self)\n"
    "    636     # or configure FailureConfig in a new run.\n"
    "--> 638     raise TrainingFailedError(\n"
    '    639         "\\n".join([restore_msg, TrainingFailedError._FAILURE_CONFIG_MSG])\n'
    "    640     ) from result.error\n"
    "\n"
    "TrainingFailedError: The Ray Train run failed. Please inspect the previous error messages for a cause. After fixing "
    "the issue (assuming that the error is not caused by your own application logic, but rather an error such as OOM), you "
    "can restart the run from scratch or continue this run.\n"
)


def test_ray_trains_failure_alone_is_unknown_and_its_cause_wins(tmp_path):
    d = the_diagnosis(tmp_path, IPYTHON_FIT)
    assert (d.outcome, d.category) == ("failed", "unknown")
    cause = ("Traceback (most recent call last):\n"
             '  File "/opt/venv/lib/python3.10/site-packages/ray/train/_internal/utils.py", line 57, in check_for_failure\n'
             "    ray.get(object_ref)\n"
             "ray.exceptions.RayTaskError(TypeError): ray::_RayTrainWorker__execute.get_next() (pid=512, ip=10.0.3.7)\n"
             "TypeError: 'StreamSplitDataIterator' object is not subscriptable\n\n")
    d = the_diagnosis(tmp_path, cause + IPYTHON_FIT)
    assert d.category == "python_exception"
    assert "TypeError" in d.summary


def test_a_markdown_eaten_device_assert_alone_is_a_cuda_error(tmp_path):
    text = ("../aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], "
            "thread: [9,0,0] Assertion t >= 0 && t < n_classes failed.\n")
    assert the_diagnosis(tmp_path, text).category == "cuda_error"


def test_a_loader_error_in_a_json_log_entry_is_a_python_exception(tmp_path):
    text = ('{\n  "jsonPayload": {\n    "lineno": 974,\n'
            '    "message": "Module raised an exception: /opt/lib/libtfkernel_sobol_op.so: undefined symbol: _ZN10tensorflow6StatusC1E.",\n'
            '    "levelname": "ERROR"\n  },\n  "severity": "ERROR"\n}\n')
    assert the_diagnosis(tmp_path, text).category == "python_exception"


def test_skypilots_failed_job_is_unknown(tmp_path):
    text = ("$ sky jobs logs 41\n"
            "Job 41 is already in terminal state FAILED_CONTROLLER. For more details, run: sky jobs logs --controller 41\n"
            "Failure reason: Unexpected error occurred: [AssertionError] JobStatus.FAILED_DRIVER\n")
    d = the_diagnosis(tmp_path, text)
    assert (d.outcome, d.category) == ("failed", "unknown")
    text = "(task, pid=4113) step 10 loss 2.31\n(task, pid=4113) step 20 loss 2.05\n✓ Job finished (status: FAILED).\n"
    assert the_diagnosis(tmp_path, text).category == "unknown"


# --- kubectl's pod table: a pod whose STATUS is CrashLoopBackOff (dev 386, 396)
PODS = ("$ kubectl get pods -n team-a\n"
        "NAME                                    READY   STATUS             RESTARTS   AGE\n"
        "keras-example-a1b2c3d4-worker-0         0/2     CrashLoopBackOff   14         15m\n"
        "keras-example-e5f6g7h8-worker-0         0/2     CrashLoopBackOff   14         15m\n"
        "keras-example-i9j0k1l2-worker-0         0/2     CrashLoopBackOff   14         15m\n"
        "keras-example-random-5b9d7c6f48-wq7kp   1/1     Running            0          15m\n")


@pytest.mark.parametrize(
    "line",
    [
        "pytorchjob-example-q7wnbd2k-master-0         0/2     CrashLoopBackOff   14         11m",
        "train-job-worker-0   0/1     Init:CrashLoopBackOff   5 (32s ago)   4m10s",
    ],
)
def test_a_crash_looping_pod_row_is_a_pods_ready_summary(line):
    found = detect(line)
    assert (found.category, found.pattern) == ("pods_ready_timeout", "k8s_pod_crash_loop")


def test_prose_about_a_crash_loop_is_no_failure():
    assert detect("I wonder if it is related: my controller-manager pod is in CrashLoopBackOff") is None


def test_a_table_of_crash_looping_pods_is_pods_ready_timeout(tmp_path):
    # the rows share one width and end in a letter before a lower-case pod name: a table, not a wrap
    d = the_diagnosis(tmp_path, PODS)
    assert (d.outcome, d.category) == ("failed", "pods_ready_timeout")


def test_the_launchers_own_report_outranks_its_crash_loop(tmp_path):
    mpirun = ("mpirun noticed that process rank 1 with PID 88 on node dist-worker-1 exited on signal 9 (Killed).\n")
    for text in (PODS + mpirun, mpirun + PODS):
        d = the_diagnosis(tmp_path, text)
        assert (d.category, d.first_failure["rank"]) == ("host_oom", 1)


def test_table_rows_are_not_joined_as_a_wrap():
    from gangscope.parsers.wraps import join_wrapped, table_rows
    rows = PODS.splitlines()
    assert table_rows(rows[2], rows[3])
    assert join_wrapped(rows) == rows
    # a real wrap still joins: pieces of one message share no columns
    wrapped = ["[rank0]:[E311 09:41:18.1 ProcessGroupNCCL.cpp:1897] Process group watchdog thread terminated with exc",
               "eption: CUDA error: an illegal memory access was encountered and more words to fill up the r",
               "ow width of this terminal pane so that it wraps again at the same width of one hundred colum",
               "ns exactly"]
    width = max(map(len, wrapped[:3]))
    wrapped = [w.ljust(width) if i < 3 else w for i, w in enumerate(wrapped)]
    wrapped = [w[:width] for w in wrapped]
    assert not table_rows(wrapped[0], wrapped[1])
