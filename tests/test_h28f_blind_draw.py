"""Rules from batch h28f of issue 16 (fixtures/eval README, "Batch h28f"): a blind draw from the Chinese-ecosystem training
stacks (LLaMA-Factory, ms-swift, PaddlePaddle, ColossalAI, Pai-Megatron-Patch, ChatGLM) and non-NVIDIA accelerators (Ascend
NPU with torch_npu / CANN / HCCL, AWS Trainium's Neuron runtime).

The classes of its misses, each read from the printing library's source:
- torch_npu's caching allocator says "NPU out of memory. Tried to allocate ..." (npu_oom, line and trace rule): cuda_oom;
- CANN's report of an HCCL failure, a fault code and its message ("EI0006: ... Getting socket times out. ...") (hccl_error_code):
  EI0002 / EI0006 are HCCL's collective timeouts (nccl_timeout), EI0010 / EI0012 / EI0013 its link failures (nccl_error);
- CANN's report of a failed device task ("Kernel task happen error, retCode=0x26, [aicore exception].", "Message info[0]:RTS_HWTS:
  aicore exception, ...") (cann_task_exception): a kernel fault on the NPU, cuda_error;
- torch_npu raises a failed CANN call as a RuntimeError whose first line names only the call and its return code, CANN's report on
  the lines under it (or, for an asynchronous error, "The Inner error is reported as above"): the report says what failed
  (pipeline/diagnose/root_cause._npu_call_of_its_own_report, rules.NPU_CALL_FAILED / CANN_REPORTS);
- PaddlePaddle's reader thread ("DataLoader reader thread raised an exception!", "(Fatal) Blocking queue is killed because the data
  reader raises an exception."): dataloader_error;
- HF datasets' "Not enough disk space. Needed: ..." : storage_io;
- the Neuron runtime's "NRT:nrt_infodump ... Failure: NRT_INVALID in nrt_load()": the accelerator runtime's error, cuda_error;
- NVIDIA DIGITS' "ERROR: error code -9" / "task failed with error code -9": the task killed by SIGKILL, host_oom.
The lines below are rebuilt from the libraries' format strings with our values, not copied from the fixtures."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis
from rule_reference import assert_found_past_the_prefilter, category_of


@pytest.mark.parametrize(
    "line, rule, category",
    [
        # torch_npu's allocator (NPUCachingAllocator.cpp), as RuntimeError (1.x-2.1) and torch.OutOfMemoryError (2.1+)
        ("RuntimeError: NPU out of memory. Tried to allocate 1.25 GiB (NPU 5; 60.97 GiB total capacity; 58.02 GiB already "
         "allocated; 58.02 GiB current active; 402.11 MiB free; 59.87 GiB reserved in total by PyTorch) If reserved memory is >> "
         "allocated memory try setting max_split_size_mb to avoid fragmentation.", "npu_oom", "cuda_oom"),
        ("torch.OutOfMemoryError: NPU out of memory. Tried to allocate 512.00 MiB (NPU 0; 29.50 GiB total capacity; 27.10 GiB "
         "already allocated; 27.10 GiB current active; 88.00 MiB free; 28.90 GiB reserved in total by PyTorch).", "npu_oom", "cuda_oom"),
        ("RuntimeError: NPU out of memory. Tried to allocate more than 1EB memory.", "npu_oom", "cuda_oom"),
        # CANN's HCCL fault codes in each of their printed forms
        ("EI0006: 2025-03-02-11:20:05.118.402 Getting socket times out. Reason: Remote Rank did not send the data in time. Please "
         "check the reason for the rank being stuck", "hccl_error_code", "nccl_timeout"),
        ("[rank3]: EI0006: [PID: 51822] 2025-03-02-11:20:05.118.402 Getting socket times out. Reason: Remote Rank did not send the "
         "data in time.", "hccl_error_code", "nccl_timeout"),
        ("[PID: 4410] 2026-01-14-08:12:40.006.117 Get_Socket_Timeout(EI0006): Getting socket times out. Reason: 1. The remote does "
         "not initiate a connect request.", "hccl_error_code", "nccl_timeout"),
        ("EI0002: 2025-03-02-11:50:05.001.220 The wait execution of the Notify register times out. Reason: The Notify register has "
         "not received the Notify record from remote rank: [7].", "hccl_error_code", "nccl_timeout"),
        ("Execution_Error_SDMA(EI0012): SDMA memory copy task exception occurred. Remote rank: [2]. Base information: [streamID:[3]].",
         "hccl_error_code", "nccl_error"),
        ("EI0013: An error CQE occurred during operator execution. Local information: server 10.31.4.7, device ID 1, device IP "
         "10.40.0.17.", "hccl_error_code", "nccl_error"),
        # CANN's runtime and the task scheduler's message (error_code.cc descriptions)
        ("EZ9999  Kernel task happen error, retCode=0x26, [aicore exception].[FUNC:PreCheckTaskErr][FILE:task_info.cc][LINE:1518]",
         "cann_task_exception", "cuda_error"),
        ("        Kernel task happen error, retCode=0x2a, [aicpu exception].[FUNC:PreCheckTaskErr][FILE:task.cc][LINE:1068]",
         "cann_task_exception", "cuda_error"),
        ("  Message info[0]:RTS_HWTS: aicore exception, slot_id=12, stream_id=5", "cann_task_exception", "cuda_error"),
        ("Kernel task happen error, retCode=0x31, [sdma poison error].", "cann_task_exception", "gpu_hardware"),
        # PaddlePaddle's reader thread (2.x logging.error, 1.x logging.warning) and HF datasets' disk check
        ("ERROR:root:DataLoader reader thread raised an exception!", "paddle_reader_thread_failed", "dataloader_error"),
        ("2021-11-03 05:08:55,091 - WARNING - DataLoader reader thread raised an exception.", "paddle_reader_thread_failed",
         "dataloader_error"),
        ("OSError: Not enough disk space. Needed: 134.92 GiB (download: 41.97 GiB, generated: 92.95 GiB, post-processed: Unknown "
         "size)", "datasets_disk_space", "storage_io"),
        # the Neuron runtime's dump
        ("2025-Feb-11 09:14:02.771004  3120:3177  ERROR   NRT:nrt_infodump                            Failure: NRT_INVALID in "
         "nrt_load()", "neuron_runtime_failure", "cuda_error"),
        ("2025-Feb-11 09:14:02.771004  3120:3177  ERROR   NRT:nrt_infodump                            Failure: NRT_HW_ERROR in "
         "nrt_execute()", "neuron_runtime_failure", "gpu_hardware"),
        # NVIDIA DIGITS' job page and its log
        ("ERROR: error code -9", "digits_task_error_code", "host_oom"),
        ("2017-05-02 10:11:12 [20170502-101010-8a1f] [ERROR] Train Caffe Model task failed with error code -9",
         "digits_task_error_code", "host_oom"),
        ("ERROR: error code -15", "digits_task_error_code", "preempted"),
    ],
)  # fmt: skip
def test_the_lines_of_the_class(line, rule, category):
    assert_found_past_the_prefilter(line, rule, category)


@pytest.mark.parametrize(
    "line, category",
    [
        # HCCL's configuration codes are not read by this rule; nor is an environment line naming its timeouts
        ("EI0001: Environment variable [HCCL_IF_IP] is invalid. Reason: the IP is not on this host.", None),
        ("export HCCL_CONNECT_TIMEOUT=7200  # EI0006 Getting socket times out at 120 s", None),
        # a task scheduler message that names no fault
        ("  Message info[0]:RTS_HWTS: task done, slot_id=3, stream_id=1", None),
        # Neuron statuses that are no device failure
        ("ERROR   NRT:nrt_infodump                            Failure: NRT_UNINITIALIZED in nrt_load()", None),
        # DIGITS' other exit codes say nothing by themselves
        ("ERROR: error code 1", None),
        # another tool's disk check, not datasets' wording
        ("not enough disk space. Needed: 4294967296, free space: 1073741824", None),
    ],
)  # fmt: skip
def test_near_misses(line, category):
    assert category_of(line) == category


TORCH_NPU_HCCL = ("[rank1]: Traceback (most recent call last):\n"
                  '[rank1]:   File "/srv/rl/train_grpo.py", line 311, in <module>\n'
                  "[rank1]:     main()\n"
                  '[rank1]:   File "/opt/envs/npu/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 2501, in all_reduce\n'
                  "[rank1]:     work = group.allreduce([tensor], opts)\n"
                  "[rank1]: RuntimeError: InnerRunOpApi:torch_npu/csrc/framework/OpParamMaker.cpp:281 OPS function error: HcclAllreduce, "
                  "error code is 6\n"
                  "[rank1]: [ERROR] 2025-03-02-11:20:05 (PID:51822, Device:1, RankID:1) ERR01100 OPS call acl api failed.\n")  # fmt: skip
EI0006 = ("[rank1]: EI0006: [PID: 51822] 2025-03-02-11:20:05.118.402 Getting socket times out. Reason: Remote Rank did not send "
          "the data in time. Please check the reason for the rank being stuck\n")  # fmt: skip
EI0001 = "[rank1]: EI0001: [PID: 51822] 2025-03-02-11:20:05.118.402 Environment variable [HCCL_IF_IP] is invalid.\n"
AICORE = ("DEVICE[0] PID[5120]: \n"
          "EXCEPTION STREAM:\n"
          "  Exception info:TGID=60214, model id=65535, stream id=3, stream phase=3\n"
          "  Message info[0]:RTS_HWTS: aicore exception, slot_id=12, stream_id=3\n"
          "    Other info[0]:time=2025-03-02-11:20:05.001.220, function=int_process_hwts_task_exception, line=296, error code=0x26\n")  # fmt: skip
INNER = ("Traceback (most recent call last):\n"
         '  File "/srv/ft/src/train.py", line 14, in <module>\n'
         "    main()\n"
         '  File "/opt/envs/npu/lib/python3.9/site-packages/transformers/trainer.py", line 1624, in train\n'
         "    return inner_training_loop(\n"
         "RuntimeError: The Inner error is reported as above.\n"
         " Since the operator is called asynchronously, the stacktrace may be inaccurate. If you want to get the accurate stacktrace, "
         "pleace set the environment variable ASCEND_LAUNCH_BLOCKING=1.\n")  # fmt: skip
KEYERROR = ("[rank0]: Traceback (most recent call last):\n"
            '[rank0]:   File "/srv/rl/train_grpo.py", line 311, in <module>\n'
            "[rank0]:     main()\n"
            "[rank0]: KeyError: 'prompt_input_ids'\n")  # fmt: skip
NPU_OOM = ("Traceback (most recent call last):\n"
           '  File "/srv/ft/src/train.py", line 14, in <module>\n'
           "    model.to(device)\n"
           "RuntimeError: NPU out of memory. Tried to allocate 386.00 MiB (NPU 2; 60.97 GiB total capacity; 59.57 GiB already "
           "allocated; 59.57 GiB current active; 16.54 MiB free; 60.06 GiB reserved in total by PyTorch)\n")  # fmt: skip
PADDLE = ("ERROR:root:DataLoader reader thread raised an exception!\n"
          "Traceback (most recent call last):\n"
          '  File "tools/train.py", line 71, in run\n'
          "    trainer.train(FLAGS.eval)\n"
          '  File "/opt/envs/pd/lib/python3.8/site-packages/paddle/fluid/dataloader/dataloader_iter.py", line 565, in __next__\n'
          "    data = self._reader.read_next_var_list()\n"
          "SystemError: (Fatal) Blocking queue is killed because the data reader raises an exception.\n"
          "  [Hint: Expected killed_ != true, but received killed_:1 == true:1.] (at /paddle/paddle/fluid/operators/reader/"
          "blocking_queue.h:166)\n")  # fmt: skip
DISK = ("Traceback (most recent call last):\n"
        '  File "/srv/glm/ptuning/main.py", line 98, in main\n'
        "    raw_datasets = load_dataset(\n"
        '  File "/opt/envs/glm/lib/python3.10/site-packages/datasets/builder.py", line 810, in download_and_prepare\n'
        "    raise OSError(\n"
        "OSError: Not enough disk space. Needed: Unknown size (download: Unknown size, generated: Unknown size, post-processed: "
        "Unknown size)\n")  # fmt: skip


@pytest.mark.parametrize(
    "text, category",
    [
        # torch_npu's exception for a failed HCCL call, CANN's fault code under it: the code says what failed
        (TORCH_NPU_HCCL + EI0006, "nccl_timeout"),
        # the report printed before the exception (ASCEND_LOGE first): the same
        (EI0006 + TORCH_NPU_HCCL, "nccl_timeout"),
        # an asynchronous device fault, then torch_npu's "The Inner error is reported as above"
        (AICORE + INNER, "cuda_error"),
        (NPU_OOM, "cuda_oom"),
        (PADDLE, "dataloader_error"),
        (DISK, "storage_io"),
        # near misses: the same exception with no report under it stays a Python exception (as before) ...
        (TORCH_NPU_HCCL, "python_exception"),
        (INNER, "python_exception"),
        # ... and one whose report is a configuration code (not read)
        (TORCH_NPU_HCCL + EI0001, "python_exception"),
        # ... and another rank's exception that is not torch_npu's report keeps the HCCL timeout a symptom of it
        (KEYERROR + EI0006, "python_exception"),
    ],
)  # fmt: skip
def test_diagnoses(tmp_path, text, category):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary


def test_the_failing_rank_of_the_hccl_report_is_the_exceptions(tmp_path):
    d = the_diagnosis(tmp_path, TORCH_NPU_HCCL + EI0006)
    assert (d.category, d.first_failure["rank"]) == ("nccl_timeout", 1), d.summary
