"""Rules from batch h33h of issue 16 (fixtures/eval README, "Batch h33h"): a blind draw from RLHF / post-training stacks.

Three classes of its misses as they came, each a table entry grounded in the printing source:
- `kubectl get pods -A` rows: the printer puts the pod's NAMESPACE first (printPod's `if options.WithNamespace`,
  cli-runtime's decorateTable); k8s_pod_pending_row and k8s_pod_crash_loop read only the NAME-first form (dev 1571).
- `ray job submit`'s failure box (ray/dashboard/modules/job/cli.py _log_job_status: `Job '<id>' failed` between rules of
  dashes): the job failed, cause not said, unknown as a summary (dev 1572).
- Arrow's Parquet reader on an empty or footer-less file, raised by pyarrow as ArrowInvalid (cpp/src/parquet/file_reader.cc
  ParseMetaData): the training's data file cannot be read, dataloader_error (dev 1567).
The lines below are rebuilt with our values, not copied from a fixture."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis

from gangscope.parsers import errors

HEADER = "NAMESPACE      NAME                                  READY   STATUS    RESTARTS      AGE\n"
SYSTEM = ("kube-system    coredns-5d78c9869d-wn4rb              1/1     Running   0             3d\n"
          "kube-system    kube-proxy-b8r2k                      1/1     Running   1 (2d ago)    3d\n")


def _name(line):
    found = errors.detect(line)
    return found and (found[0].name, found[1])


# --- kubectl get pods -A ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("line, age", [
    ("training       ppo-actor-worker-0                    0/1     Pending   0             14h", "14h"),
    ("default        mnist                                 0/1     Pending   0             42m", "42m"),
    ("rl-jobs        grpo-trainer-master-0                 0/2     Pending   0             3d4h", "3d4h"),
    # -o wide: IP, NODE, NOMINATED NODE, READINESS GATES after AGE
    ("rl-jobs        grpo-trainer-master-0                 0/1     Pending   0             25m   <none>   <none>   <none>   <none>",
     "25m"),
])
def test_an_all_namespaces_pending_row_is_the_rule(line, age):
    found = errors.detect(line)
    assert found and found[0].name == "k8s_pod_pending_row" and found[1] == "pods_ready_timeout", (line, found)


@pytest.mark.parametrize("line", [
    # a young Pending pod is no failure yet (Kueue's 5 minutes)
    "training       ppo-actor-worker-0                    0/1     Pending   0             95s",
    # running, completed, a header
    "kube-system    kubeshare-node-daemon-p4sxj           2/2     Running   0             70s",
    "training       ppo-actor-worker-0                    1/1     Running   0             14h",
    "training       data-prep-7xk2p                       0/1     Completed 0             14h",
    HEADER.strip(),
    # a namespace column with an upper-case word is no kubectl row
    "Training       ppo-actor-worker-0                    0/1     Pending   0             14h",
])
def test_other_rows_are_not_a_pending_pod(line):
    assert _name(line) != ("k8s_pod_pending_row", "pods_ready_timeout"), line


def test_an_all_namespaces_crash_loop_row_is_the_rule():
    line = "kubeflow       pytorchjob-worker-1                   0/1     CrashLoopBackOff   6 (3m ago)   21m"
    assert _name(line) == ("k8s_pod_crash_loop", "pods_ready_timeout"), errors.detect(line)


def test_the_name_first_rows_read_as_before():
    assert _name("ppo-actor-worker-0   0/1     Pending   0          14h") == ("k8s_pod_pending_row", "pods_ready_timeout")
    assert _name("pytorchjob-worker-1   0/1   CrashLoopBackOff   6 (3m ago)   21m") == ("k8s_pod_crash_loop", "pods_ready_timeout")


def test_an_all_namespaces_listing_with_the_training_pod_pending(tmp_path):
    text = HEADER + "training       ppo-actor-worker-0                    0/1     Pending   0             14h\n" + SYSTEM
    d = the_diagnosis(tmp_path, text)
    assert d.category == "pods_ready_timeout", (d.category, d.summary)
    assert "ppo-actor-worker-0" in d.summary, d.summary


def test_an_all_namespaces_listing_with_everything_running(tmp_path):
    text = HEADER + "training       ppo-actor-worker-0                    1/1     Running   0             14h\n" + SYSTEM
    d = the_diagnosis(tmp_path, text)
    assert d.category == "running", (d.category, d.summary)


# --- ray job submit's failure box --------------------------------------------------------------------------------------

BOX = "\n---------------------------------------\nJob 'raysubmit_T4nWq8Lz1vRb6HcE' failed\n---------------------------------------\n\n"
RAY_STEPS = "".join(f"(TaskRunner pid=40217) step:{i} - actor/pg_loss:{0.031 - i / 1000:.3f} - actor/grad_norm:0.{i}12 - "
                    f"critic/score/mean:0.{i}40 - response_length/mean:{700 + 13 * i}.000\n" for i in range(1, 5))


@pytest.mark.parametrize("line", [
    "Job 'raysubmit_T4nWq8Lz1vRb6HcE' failed",
    "Job 'grpo-run-17' failed",
    # cli_logger's record form when records are logged
    "2026-02-11 09:14:27,301\tERR cli.py:69 -- Job 'raysubmit_T4nWq8Lz1vRb6HcE' failed",
    # colours a copy from a terminal keeps without their ESC
    "[31mJob 'raysubmit_T4nWq8Lz1vRb6HcE' failed[39m",
])
def test_the_failure_box_line_is_the_rule(line):
    assert _name(line) == ("ray_job_failed", "unknown"), errors.detect(line)


@pytest.mark.parametrize("line", [
    "Job 'raysubmit_T4nWq8Lz1vRb6HcE' succeeded",
    "Job 'raysubmit_T4nWq8Lz1vRb6HcE' submitted successfully",
    "Job 'raysubmit_T4nWq8Lz1vRb6HcE' was stopped",
    "Status for job 'raysubmit_T4nWq8Lz1vRb6HcE': RUNNING",
    "the Job 'raysubmit_T4nWq8Lz1vRb6HcE' failed the check, retrying",
    "Job 'raysubmit_T4nWq8Lz1vRb6HcE' failed to start: see the dashboard",
])
def test_other_job_lines_are_not_the_rule(line):
    assert _name(line) != ("ray_job_failed", "unknown"), line


def test_steps_then_the_failure_box_failed_without_saying_why(tmp_path):
    d = the_diagnosis(tmp_path, RAY_STEPS + BOX)
    assert d.category == "unknown", (d.category, d.summary)
    assert "raysubmit_T4nWq8Lz1vRb6HcE" in d.summary, d.summary


def test_the_box_after_a_named_failure_keeps_the_failure(tmp_path):
    text = (RAY_STEPS
            + "(WorkerDict pid=40388) torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.12 GiB. GPU 0 has a total "
              "capacity of 79.19 GiB of which 1.87 GiB is free.\n"
            + BOX)
    d = the_diagnosis(tmp_path, text)
    assert d.category == "cuda_oom", (d.category, d.summary)


def test_the_box_after_a_status_message_of_exit_127_keeps_the_configuration_error(tmp_path):
    text = (BOX + "Status message: Job entrypoint command failed with exit code 127, last available logs (truncated to 20,000 "
                  "chars):\n/bin/bash: /opt/rl/run_grpo.sh: No such file or directory\n")
    d = the_diagnosis(tmp_path, text)
    assert d.category == "python_exception", (d.category, d.summary)


def test_a_succeeded_box_is_no_failure(tmp_path):
    box = "\n-------------------------------------------\nJob 'raysubmit_T4nWq8Lz1vRb6HcE' succeeded\n-------------------------------------------\n"
    d = the_diagnosis(tmp_path, RAY_STEPS + box)
    assert d.category != "unknown", (d.category, d.summary)


# --- Arrow's Parquet reader --------------------------------------------------------------------------------------------

FRAMES = ('Traceback (most recent call last):\n'
          '  File "/opt/venv/lib/python3.11/site-packages/datasets/builder.py", line 1855, in _prepare_split_single\n'
          '    for _, table in generator:\n'
          '  File "/opt/venv/lib/python3.11/site-packages/datasets/packaged_modules/parquet/parquet.py", line 90, in _generate_tables\n'
          '    if parquet_fragment.row_groups:\n'
          '  File "pyarrow/error.pxi", line 92, in pyarrow.lib.check_status\n')
# the user's own script reading its rollouts (no datasets frame: the rule reads the exception alone)
USER_FRAMES = ('Traceback (most recent call last):\n'
               '  File "/workspace/rl/train_grpo.py", line 214, in <module>\n'
               '    main()\n'
               '  File "/workspace/rl/train_grpo.py", line 88, in main\n'
               '    table = pq.read_table(args.prompts)\n'
               '  File "pyarrow/error.pxi", line 92, in pyarrow.lib.check_status\n')


@pytest.mark.parametrize("message", [
    "Could not open Parquet input source '<Buffer>': Parquet file size is 0 bytes",
    "Parquet file size is 0 bytes",
    "Could not open Parquet input source 'rollouts/train-00003-of-00008.parquet': Parquet magic bytes not found in footer. Either "
    "the file is corrupted or this is not a parquet file.",
    "Could not open Parquet input source '<Buffer>': Parquet file size is 5 bytes, smaller than the minimum file footer (8 bytes)",
])
@pytest.mark.parametrize("frames", [FRAMES, USER_FRAMES], ids=["datasets", "user"])
def test_an_unreadable_parquet_file_is_a_dataset_error(tmp_path, message, frames):
    d = the_diagnosis(tmp_path, frames + f"pyarrow.lib.ArrowInvalid: {message}\n")
    assert d.category == "dataloader_error", (d.category, d.summary)


@pytest.mark.parametrize("tail", [
    # another ArrowInvalid: a schema or cast error is the code's or the config's
    "pyarrow.lib.ArrowInvalid: Column 2 named chosen expected length 64 but got length 63",
    "pyarrow.lib.ArrowInvalid: Could not convert 'yes' with type str: tried to convert to int64",
    # other words about a parquet file
    "pyarrow.lib.ArrowInvalid: Parquet file has no row groups to read",
    "ValueError: the Parquet file size is larger than the limit (bytes)",
])
def test_other_exceptions_keep_their_reading(tmp_path, tail):
    d = the_diagnosis(tmp_path, USER_FRAMES + tail + "\n")
    assert d.category == "python_exception", (d.category, d.summary)
