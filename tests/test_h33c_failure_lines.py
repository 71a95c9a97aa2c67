"""The rules written from batch h33c's build half (fixtures/formats/failure_lines.json, `"batch": "h33c"`), with near misses.

Batch h33c is eleven families new to the table: PRRTE's help texts (Open MPI 5's mpirun runs prterun), torch_npu's HCCL and ACL
checks and its HCCL watchdog, the Job controller's podFailurePolicy and failed-indexes verdicts, XLA's coordination barrier,
vLLM's start-up memory check, MPS's unsupported ops, Gaudi's device acquire and NCCL's init checks. Each rule cites its source
beside it in gangscope/parsers/errors.py and parsers/tool_exits.py (blocks marked h33c). The lines below are written with our own
values in the printers' wordings; the near misses are lines that must not match.
"""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis
from rule_reference import read_line
from gangscope.parsers.errors import first_trace_rule
from gangscope.pipeline.diagnose.rules import FIRST_FAILURE_REPORTS

STEP = "[2026-03-02 08:11:40,118] [INFO] [trainer.py:233] step 120 | loss 2.4017 | lr 1.90e-04\n"
TB = 'Traceback (most recent call last):\n  File "/workspace/train.py", line 12, in <module>\n    main()\n'
DASH = "-" * 74 + "\n"


# --- PRRTE's help texts: the signal on a line of its own, the box's exit code and process name, exe-not-found

@pytest.mark.parametrize("line, category", [
    ("signal 9 (Killed).", "host_oom"),
    ("signal 9.", "host_oom"),
    ("signal 15 (Terminated).", "preempted"),
    ("signal 11 (Segmentation fault).", "unknown"),
    ("signal 6.", "unknown"),
])
def test_prrte_s_signal_alone_on_its_line_is_read_by_its_number(line, category):
    assert read_line(line) == ("prrte_signal_continued", category)


@pytest.mark.parametrize("line", [
    "signal 9 (Killed). Retrying",  # more after the sentence
    "  signal 9 (Killed).",  # not at the line's start
    "signal handler installed for SIGTERM.",
    "signal 9",  # no full stop: not the help text's sentence end
    "caught signal 9 (Killed).",
])
def test_near_misses_of_the_signal_line(line):
    found = read_line(line)
    assert found is None or found[0] != "prrte_signal_continued"


@pytest.mark.parametrize("line, category", [
    ("   Exit code:    137", "host_oom"),
    ("  Exit code:    1", "unknown"),
    ("   Exit code:    143", "preempted"),
])
def test_the_non_zero_exit_box_s_exit_code(line, category):
    assert read_line(line) == ("mpirun_nonzero_exit_code", category)


@pytest.mark.parametrize("line", [
    "   Exit code:    0",  # no failure
    "Exit code:    137",  # not the box's indent
    "   Exit code: 137",  # not the box's alignment
    "    Exit code:    137",
    "Job finished. Exit code: 137",
])
def test_near_misses_of_the_exit_code_line(line):
    found = read_line(line)
    assert found is None or found[0] != "mpirun_nonzero_exit_code"


def test_prrte_s_process_name_names_the_first_rank():
    assert read_line("   Process name: [prterun-gpu-node-07-51730@1,3]") == ("prrte_first_process", "unknown")
    assert "prrte_first_process" in FIRST_FAILURE_REPORTS
    # ORTE's [[jobid,app],vpid] stays mpirun_first_process's
    assert read_line("  Process name: [[40960,1],3]") == ("mpirun_first_process", "unknown")


def test_prterun_s_exe_not_found_is_a_configuration_error():
    line = "prterun was unable to find the specified executable file, and therefore did"
    assert read_line(line) == ("mpirun_executable_not_found", "python_exception")
    assert read_line("mpirun was unable to find the specified executable file, and therefore did") is not None


@pytest.mark.parametrize("line", [
    "  prterun was unable to find the specified executable file, and therefore did",  # not at the start
    "The launcher was unable to find the specified executable file",  # two words before
    "prterun was unable to launch the specified application as it could not find",  # a sibling text: no rule (measure half)
])
def test_near_misses_of_exe_not_found(line):
    found = read_line(line)
    assert found is None or found[0] != "mpirun_executable_not_found"


def test_prterun_s_split_signal_box_after_steps_is_host_memory(tmp_path):
    text = (STEP + DASH + "prterun noticed that process rank 6 with PID 0 on node gpu-node-11 exited on\nsignal 9 (Killed).\n" + DASH)
    d = the_diagnosis(tmp_path, text)
    assert (d.category, d.outcome) == ("host_oom", "failed")


def test_prterun_s_non_zero_exit_after_a_traceback_keeps_the_traceback_s_cause(tmp_path):
    text = (STEP + TB + "KeyError: 'optimizer'\n" + DASH + "prterun detected that one or more processes exited with non-zero status,\n"
            "thus causing the job to be terminated. The first process to do so was:\n\n   Process name: [prterun-n1-400@1,0]\n"
            "   Exit code:    1\n" + DASH)
    assert the_diagnosis(tmp_path, text).category == "python_exception"


# --- torch_npu: HCCL_CHECK_ERROR, NPU_CHECK_ERROR

HCCL = ("RuntimeError: create_config:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:149 HCCL function error: "
        "hcclCommInitRootInfoConfig(numRanks, &rootInfo, rank, config, &(comm->hcclComm_)), error code is {code}")


@pytest.mark.parametrize("code", [1, 7, 9, 11, 15])
def test_an_hccl_call_s_failure_is_the_collective_library_s(code):
    rule = first_trace_rule("RuntimeError", HCCL.format(code=code).split(": ", 1)[1] + "\n[ERROR] 2026-03-02-08:11:41 (PID:1, "
                            "Device:0, RankID:0) ERR02200 DIST call hccl api failed.")
    assert (rule.name, rule.category) == ("hccl_call_failed", "nccl_error")


def test_hccl_near_misses():
    assert first_trace_rule("RuntimeError", "HCCL function error happened") is None or \
        first_trace_rule("RuntimeError", "HCCL function error happened").name != "hccl_call_failed"
    rule = first_trace_rule("RuntimeError", "HCCL function error: hcclAllReduce(...)")  # no code
    assert rule is None or rule.name != "hccl_call_failed"


@pytest.mark.parametrize("message, name, category", [
    ("operator():build/CMakeFiles/torch_npu.dir/compiler_depend.ts:26 NPU function error: "
     "c10_npu::acl::AclrtSynchronizeStreamWithTimeout(copy_stream), error code is 507035\n[Error]: The vector core execution is "
     "abnormal. ", "npu_acl_error", "cuda_error"),
    ("npu_swiglu:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:79 NPU function error: call aclnnSwiGlu failed, error code is "
     "507014", "npu_acl_error", "cuda_error"),
    ("synchronize:torch_npu/csrc/core/npu/NPUStream.cpp:417 NPU error, error code is 507035", "npu_acl_error", "cuda_error"),
    ("npuSynchronizeDevice:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:508 NPU function error: "
     "AclrtSynchronizeDeviceWithTimeout, error code is 507013", "npu_acl_hardware", "gpu_hardware"),
    ("synchronize:NPUStream.cpp:417 NPU error, error code is 507013", "npu_acl_hardware", "gpu_hardware"),
])
def test_an_acl_call_s_failure_is_the_npu_runtime_s(message, name, category):
    rule = first_trace_rule("RuntimeError", message)
    assert (rule.name, rule.category) == (name, category)


@pytest.mark.parametrize("message", [
    "NPU warning, error code is 507035",  # NPU_CHECK_WARN: a warning
    "NPU out of memory. Tried to allocate 1.40 GiB (NPU 0; 32.00 GiB total capacity)",  # the allocator's own (torch_npu rule)
    "NPU function error: aclInit",  # no code
])
def test_acl_near_misses(message):
    rule = first_trace_rule("RuntimeError", message)
    assert rule is None or rule.name not in ("npu_acl_error", "npu_acl_hardware")


def test_an_npu_vector_core_fault_after_steps_is_a_device_error(tmp_path):
    text = (STEP + TB + "RuntimeError: operator():build/CMakeFiles/torch_npu.dir/compiler_depend.ts:26 NPU function error: "
            "c10_npu::acl::AclrtSynchronizeStreamWithTimeout(copy_stream), error code is 507035\n[ERROR] 2026-03-02-08:11:41 "
            "(PID:9, Device:0, RankID:4) ERR00100 PTA call acl api failed\n[Error]: The vector core execution is abnormal. \n"
            "        Rectify the fault based on the error information in the ascend log.\nEZ9999: Inner Error!\n")
    assert the_diagnosis(tmp_path, text).category == "cuda_error"


def test_an_hccl_init_failure_under_rank_prefixes_is_nccl_error(tmp_path):
    body = TB + HCCL.format(code=7) + "\n[ERROR] 2026-03-02-08:11:41 (PID:9, Device:3, RankID:3) ERR02200 DIST call hccl api failed.\n"
    text = "".join(f"[rank3]: {line}\n" for line in body.rstrip("\n").split("\n"))
    assert the_diagnosis(tmp_path, text).category == "nccl_error"


# --- XLA's coordination barrier (2024+ wording)

BARRIER = ("DEADLINE_EXCEEDED: Barrier timed out. Id: {id}. This usually happens because a task triggered the barrier too early or "
           "too slowly. Please look at the task logs (both timed out and first task) to debug further.\n# of tasks that reached the "
           "barrier: 3/4.\nThe first task at the barrier: /job:jax_worker/replica:0/task:1. Some timed out task names:\n"
           "/job:jax_worker/replica:0/task:2\n")


@pytest.mark.parametrize("barrier_id, name, category", [
    ("0_async_write_complete.0.22000", "xla_barrier_timeout", "nccl_timeout"),
    ("levanter_barrier_sync_7::0", "xla_barrier_timeout", "nccl_timeout"),
    ("PjRT_Client_Connect", "jax_connect_barrier_id", "rendezvous_error"),
])
def test_a_barrier_that_timed_out(barrier_id, name, category):
    rule = first_trace_rule("jaxlib.xla_extension.XlaRuntimeError", BARRIER.format(id=barrier_id))
    assert (rule.name, rule.category) == (name, category)


def test_the_older_connect_barrier_wording_stays_jax_connect_barrier():
    rule = first_trace_rule("jaxlib.xla_extension.XlaRuntimeError",
                            "DEADLINE_EXCEEDED: Barrier timed out. Barrier_id: PjRT_Client_Connect. Timed out task names:\n")
    assert (rule.name, rule.category) == ("jax_connect_barrier", "rendezvous_error")


@pytest.mark.parametrize("line, category", [
    ("E1205 10:01:12.881201 140188 checkpoint_manager.py:1652] async save failed: DEADLINE_EXCEEDED: Barrier timed out. "
     "Id: 0_async_write_complete.0.22000. This usually happens because a task triggered the barrier too early", "nccl_timeout"),
    ("E1205 10:01:12.881201 140188 client.py:88] DEADLINE_EXCEEDED: Barrier timed out. Id: PjRT_Client_Connect. This usually",
     "rendezvous_error"),
])
def test_a_barrier_timeout_in_a_log_line(line, category):
    assert read_line(line) == ("xla_barrier_timeout", category)


@pytest.mark.parametrize("line", [
    "Barrier timed out. Retrying in 5 s",  # no Id
    "fan-in barrier timed out job_id=3 present=2 expected=4",
    "Warning: Barrier timed out! Proceeding without synchronization.",
])
def test_barrier_near_misses(line):
    found = read_line(line)
    assert found is None or found[0] != "xla_barrier_timeout"


# --- part B: vLLM's start-up check, Gaudi's device acquire, the Job controller's failed indexes

@pytest.mark.parametrize("message", [
    "Free memory on device (11.42/79.19 GiB) on startup is less than desired GPU memory utilization (0.9, 71.27 GiB). Decrease GPU "
    "memory utilization or reduce GPU memory used by other processes.",
    "Free memory on device cuda:0 (6.18/79.19 GiB) on startup is less than desired GPU memory utilization (0.85, 67.31 GiB).",
    "Free memory on device xpu:0 (18.79/28.57 GiB) on startup is less than desired GPU memory utilization (0.7, 20.0 GiB).",
])
def test_vllm_s_start_up_memory_check_is_gpu_memory(message):
    rule = first_trace_rule("ValueError", message)
    assert (rule.name, rule.category) == ("vllm_startup_free_memory", "cuda_oom")


def test_vllm_near_miss():
    rule = first_trace_rule("ValueError", "Free memory on device is low; consider lowering the batch size")
    assert rule is None or rule.name != "vllm_startup_free_memory"


def test_gaudi_s_device_acquire_failure():
    rule = first_trace_rule("RuntimeError", "synStatus=26 [Generic failure] Device acquire failed.")
    assert (rule.name, rule.category) == ("gaudi_device_acquire_failed", "cuda_error")
    other = first_trace_rule("RuntimeError", "synStatus=1 [Invalid argument] Graph compile failed.")
    assert other is None or other.name != "gaudi_device_acquire_failed"


@pytest.mark.parametrize("line", [
    "  Warning  FailedIndexes  3m  job-controller  Job has failed indexes",
    "    message: Job has exceeded the specified maximal number of failed indexes",
])
def test_the_job_controller_s_failed_indexes_are_a_summary(line):
    assert read_line(line) == ("k8s_job_failed_indexes", "unknown")


def test_failed_indexes_near_miss():
    found = read_line("  failedIndexes: 1,2")
    assert found is None or found[0] != "k8s_job_failed_indexes"


def test_a_vllm_rollout_engine_that_found_its_gpu_taken_is_cuda_oom(tmp_path):
    text = (STEP + TB + "ValueError: Free memory on device cuda:1 (18.90/79.19 GiB) on startup is less than desired GPU memory "
            "utilization (0.5, 39.6 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.\n")
    assert the_diagnosis(tmp_path, text).category == "cuda_oom"
