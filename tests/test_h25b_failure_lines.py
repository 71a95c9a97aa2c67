"""The rules written from batch h25b's build half (fixtures/formats/failure_lines.json, `"batch": "h25b"`), with near misses.

Each rule cites its source beside it in gangscope/parsers/errors.py (blocks marked h25b). The lines below are written with our
own values in the printers' wordings (every version the rule reads); the near misses are lines that must not match.
"""

from __future__ import annotations

import re

import pytest

from gangscope.parsers.errors import TRACE_RULES, first_trace_rule
from rule_reference import detected

H25B_LINE_RULES = {"nccl_host_malloc_failed", "nccl_cuda_kernel_fault", "nvml_init_failed", "k8s_scheduler_disruption",
                   "k8s_scheduler_disruption_126", "kubelet_system_oom", "jobset_failed"}
H25B_TRACE_RULES = {"dataloader_fd_passing", "dataloader_ancdata", "nvml_gpu_state", "botocore_stream", "enotconn_path",
                    "thc_cublas_alloc_failed", "thc_cublas_error", "ray_node_died_gcs"}



@pytest.mark.parametrize(
    "line, rule, category",
    [
        ("trn-a100-117:40213:40390 [5] include/alloc.h:131 NCCL WARN Failed to malloc 4294967296 bytes", "nccl_host_malloc_failed", "host_oom"),
        ("trn-a100-117:40213:40213 [5] NCCL WARN Failed to malloc 65536 bytes", "nccl_host_malloc_failed", "host_oom"),
        ("trn-a100-117:40213:40213 [5] enqueue.cc:1034 NCCL WARN Cuda failure 'unspecified launch failure'", "nccl_cuda_kernel_fault", "cuda_error"),
        ("trn-a100-117:40213:40213 [5] enqueue.cc:1570 NCCL WARN Cuda failure 700 'an illegal memory access was encountered'",
         "nccl_cuda_kernel_fault", "cuda_error"),
        ("trn-a100-117:40213:40213 [5] proxy.cc:895 NCCL WARN Cuda failure 'device-side assert triggered'", "nccl_cuda_kernel_fault", "cuda_error"),
        ("trn-a100-117:40213:40213 [5] init.cc:1622 NCCL WARN Cuda failure 715 'an illegal instruction was encountered'",
         "nccl_cuda_kernel_fault", "cuda_error"),
        ("trn-a100-117:40213:40213 [5] init.cc:1622 NCCL WARN Cuda failure 'uncorrectable ECC error encountered'",
         "nccl_cuda_kernel_fault", "gpu_hardware"),
        # the NVLink text is read first by cuda_nvlink_uncorrectable (h16g), the same category
        ("trn-a100-117:40213:40213 [5] init.cc:1622 NCCL WARN Cuda failure 220 'uncorrectable NVLink error detected during the execution'",
         "cuda_nvlink_uncorrectable", "gpu_hardware"),
        ("[2026-12-04T01:02:03.456] error: Failed to initialize NVML: Driver/library version mismatch", "nvml_init_failed", "gpu_hardware"),
        ("Failed to initialize NVML: Driver/library version mismatch", "nvml_init_failed", "gpu_hardware"),
        ("E1204 01:02:03.456789       1 main.go:123] Failed to initialize NVML: ERROR_LIB_RM_VERSION_MISMATCH.", "nvml_init_failed", "gpu_hardware"),
        ("Failed to initialize NVML: GPU is lost", "nvml_init_failed", "gpu_hardware"),
        ("    message: 'default-scheduler: preempting to accommodate a higher priority pod'", "k8s_scheduler_disruption", "preempted"),
        ("    message: 'default-scheduler: preempting to accommodate a higher priority podgroup'", "k8s_scheduler_disruption", "preempted"),
        ("    message: 'Kube-scheduler: preempting'", "k8s_scheduler_disruption_126", "preempted"),
        ("2m11s  Warning  SystemOOM  node/trn-a100-117  System OOM encountered, victim process: pt_main_thread, pid: 40213",
         "kubelet_system_oom", "host_oom"),
        ("  Warning  SystemOOM  7m  kubelet, trn-a100-117  System OOM encountered", "kubelet_system_oom", "host_oom"),
        ("    message: jobset failed due to one or more job failures", "jobset_failed", "unknown"),
        ("  Warning  FailedJobs  41s  jobset  jobset failed due to one or more job failures (first failed job: pretrain-worker-0)",
         "jobset_failed", "unknown"),
        ("  Warning  ReachedMaxRestarts  2m  jobset  jobset failed due to reaching max number of restarts", "jobset_failed", "unknown"),
    ],
)
def test_h25b_line_rules(line, rule, category):
    assert detected(line) == (rule, category)


@pytest.mark.parametrize(
    "line",
    [
        "Failed to malloc 4096 bytes",  # another program's allocator, or torch's "Last error:" repeat with no NCCL WARN
        "APP_LOG: Failed to malloc 1024 bytes for data of key 3",
        "trn-a100-117:40213:40213 [5] transport/nvls.cc:246 NCCL WARN Cuda failure 3 'initialization error'",  # dev 255: nccl_error
        "trn-a100-117:40213:40213 [5] enqueue.cc:1085 NCCL WARN Cuda failure 'out of memory'",  # nccl_cuda_oom's
        "Failed to initialize NVML: Driver Not Loaded",  # a container without the driver: configuration
        "Failed to initialize NVML: Insufficient Permissions",
        "Failed to initialize NVML: Unknown Error",
        "    message: 'Preempting pods to accommodate a higher priority pod'",
        "I1204 03:12:44 preemption.go:120] preempting to accommodate a higher priority pod",  # a log line, no scheduler prefix
        "  Normal   NodeHasSufficientMemory  3m  kubelet  Node trn-a100-117 status is now: NodeHasSufficientMemory",
        "System OOM handling is enabled",
        "    message: jobset completed successfully",
        "  Normal   AllJobsCompleted  1m  jobset  jobset completed successfully",
    ],
)
def test_h25b_line_near_misses(line):
    found = detected(line)
    assert found is None or found[0] not in H25B_LINE_RULES, found


@pytest.mark.parametrize(
    "exc_type, message, frames, rule",
    [
        ("ConnectionRefusedError", "[Errno 111] Connection refused",
         ["/opt/conda/lib/python3.10/site-packages/torch/multiprocessing/reductions.py:rebuild_storage_fd",
          "/opt/conda/lib/python3.10/multiprocessing/resource_sharer.py:get_connection",
          "/opt/conda/lib/python3.10/multiprocessing/connection.py:SocketClient"], "dataloader_fd_passing"),
        ("EOFError", "", ["/usr/lib/python3.11/multiprocessing/resource_sharer.py:detach",
                          "/usr/lib/python3.11/multiprocessing/reduction.py:recvfds"], "dataloader_fd_passing"),
        ("RuntimeError", "received 0 items of ancdata", [], "dataloader_ancdata"),
        ("pynvml.nvml.NVMLError_GpuIsLost", "GPU is lost", [], "nvml_gpu_state"),
        ("pynvml.NVMLError_LibRmVersionMismatch", "RM has detected an NVML/RM version mismatch.", [], "nvml_gpu_state"),
        ("RuntimeError", "Failed to initialize NVML: Driver/library version mismatch", [], "nvml_gpu_state"),
        ("botocore.exceptions.ResponseStreamingError", "An error occurred while reading from response stream: ('Connection broken: "
         "IncompleteRead(3145728 bytes read, 5242880 more expected)', IncompleteRead(3145728 bytes read, 5242880 more expected))", [],
         "botocore_stream"),
        ("botocore.exceptions.IncompleteReadError", "3145728 read, but total bytes expected is 8388608.", [], "botocore_stream"),
        ("OSError", "[Errno 107] Transport endpoint is not connected: '/mnt/lustre/ckpt/iter_0042000/model_optim_rng.pt'",
         [".../torch/serialization.py:save"], "enotconn_path"),
        ("FileNotFoundError", "[Errno 107] Transport endpoint is not connected: \"/mnt/fsx/data/shard-00417.bin\"", [], "enotconn_path"),
        ("RuntimeError", "cublas runtime error : resource allocation failed at /pytorch/aten/src/THC/THCGeneral.cpp:216", [],
         "thc_cublas_alloc_failed"),
        ("RuntimeError", "cublas runtime error : the GPU program failed to execute at /pytorch/aten/src/THC/THCBlas.cu:331", [],
         "thc_cublas_error"),
        ("RuntimeError", "cublas runtime error : library not initialized at /pytorch/aten/src/THC/THCGeneral.cpp:250", [],
         "thc_cublas_error"),
        ("ray.exceptions.ActorDiedError", "The actor died unexpectedly before finishing this task.\n\tclass_name: FSDPWorker\n"
         "The actor died because its node has died. Node Id: 4d2f8a1c\n\tthe actor's node was terminated unexpectedly: health check "
         "failed due to missing too many heartbeats", [], "ray_node_died_gcs"),
        ("ray.exceptions.RayActorError", "The actor died unexpectedly before finishing this task.\nThe actor died because its node has "
         "died. Node Id: 4d2f8a1c", [], "ray_node_died_gcs"),
    ],
)
def test_h25b_trace_rules(exc_type, message, frames, rule):
    found = first_trace_rule(exc_type, message, frames)
    assert found is not None and found.name == rule


@pytest.mark.parametrize(
    "exc_type, message, frames",
    [
        # a socket refused outside the DataLoader's fd passing (a store, a download): not this rule
        ("ConnectionRefusedError", "[Errno 111] Connection refused",
         ["/opt/conda/lib/python3.10/site-packages/torch/distributed/rendezvous.py:_create_c10d_store"]),
        ("KeyboardInterrupt", "", ["/usr/lib/python3.11/multiprocessing/resource_sharer.py:detach"]),  # Ctrl-C during fd passing
        ("RuntimeError", "received 3 items of data", []),
        ("pynvml.nvml.NVMLError_DriverNotLoaded", "Driver Not Loaded", []),
        ("pynvml.nvml.NVMLError_NotSupported", "Not Supported", []),
        ("asyncio.exceptions.IncompleteReadError", "0 bytes read on a total of 4 expected bytes", []),
        ("OSError", "[Errno 107] Transport endpoint is not connected", []),  # a socket's shutdown, no path
        ("RuntimeError", "cusparse runtime error : an internal operation failed", []),
        ("ray.exceptions.ActorDiedError", "The actor died unexpectedly before finishing this task.\nThe actor died because its node has "
         "died. Node Id: 4d2f8a1c\n\tthe actor's node was preempted: the GCE instance was preempted", []),
    ],
)
def test_h25b_trace_near_misses(exc_type, message, frames):
    found = first_trace_rule(exc_type, message, frames)
    assert found is None or found.name not in H25B_TRACE_RULES, found.name


def test_h25b_rule_names_are_in_the_tables():
    assert H25B_TRACE_RULES <= {rule.name for rule in TRACE_RULES}
