"""Rules from batch h16z of issue 16 (fixtures/eval README, "Batch h16z"): TensorFlow's own words for a failed GPU.

The lines, each as the source cited beside its rule in parsers/errors.py prints it (values ours): op_kernel.cc's
ResourceExhausted "OOM when allocating tensor with shape[..] and type T on <device> by allocator <name>" (GPU -> cuda_oom,
CPU -> host_oom), gpu_util.cc's "Dst tensor is not initialized." (the copy's destination never allocated: cuda_oom), the
CUDA driver API's error names as the stream executor prints them (cuda.h CUresult: a kernel's fault -> cuda_error, ECC /
NVLink uncorrectable -> gpu_hardware, out of memory -> cuda_oom; the start-up names TF survives are not read), the BFC
allocator's retry lines (a warning: "this isn't always important to users"), and the kernels' cuBLAS / cuDNN statuses
(matmul_op.cc "Blas GEMM launch failed", cudnn_rnn_ops.cc "Failed to call ThenRnnForward", conv_ops.cc "Failed to get
convolution algorithm. This is probably because cuDNN failed to initialize", gpu_util.cc "GPU sync failed"); StatusGroup's
"N root error(s) found." names no cause itself; record_reader.cc's DataLoss "corrupted record at N" is a dataset error. And
SLURM's own lines: the job memory limit's notice (a cause), the cgroup's "at some point" note (a warning), srun's "Node
failure on <nodes>" (node_failure)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gangscope.parsers.errors import WARNING, exception_category, rule_role
from diagnose_in_process import the_diagnosis
from rule_reference import found

DEV = Path(__file__).resolve().parent.parent / "fixtures" / "eval" / "dev"




@pytest.mark.parametrize(
    "line, expected",
    [
        ("2023-07-02 10:14:09.118201: W tensorflow/core/framework/op_kernel.cc:1828] OP_REQUIRES failed at conv_ops.cc:688 : "
         "RESOURCE_EXHAUSTED: OOM when allocating tensor with shape[64,128,112,112] and type float on "
         "/job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc", ("tf_oom_allocating", "cuda_oom")),
        ("2019-11-20 08:31:55.402117: W tensorflow/core/common_runtime/base_collective_executor.cc:216] BaseCollectiveExecutor::"
         "StartAbort Resource exhausted: OOM when allocating tensor with shape[32,512,38,38] and type half on "
         "/job:worker/replica:0/task:1/device:GPU:3 by allocator GPU_3_bfc", ("tf_oom_allocating", "cuda_oom")),
        ("W tensorflow/core/common_runtime/executor.cc:1076] 0x7f3a2c0 Compute status: Resource exhausted: OOM when allocating "
         "tensor with shape[4096,4096]", ("tf_oom_allocating", "cuda_oom")),
        ("ResourceExhaustedError: OOM when allocating tensor of shape [120000,300] and type float", ("tf_oom_allocating", "cuda_oom")),
        ("tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[8192,8192] and "
         "type float on /job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu", ("tf_oom_allocating", "host_oom")),
        ("tensorflow.python.framework.errors_impl.InternalError: Failed copying input tensor from "
         "/job:localhost/replica:0/task:0/device:CPU:0 to /job:localhost/replica:0/task:0/device:GPU:0 in order to run "
         "_EagerConst: Dst tensor is not initialized.", ("tf_dst_uninitialized", "cuda_oom")),
        ("2020-04-11 19:02:33.503112: E tensorflow/core/common_runtime/direct_session.cc:137] Internal: failed initializing "
         "StreamExecutor for CUDA device ordinal 1: Internal: failed call to cuDevicePrimaryCtxRetain: CUDA_ERROR_OUT_OF_MEMORY: "
         "out of memory; total memory reported: 11721506816", ("cuda_driver_error", "cuda_oom")),
        ("2022-01-05 13:40:12.990021: F tensorflow/stream_executor/lib/statusor.cc:34] Attempting to fetch value instead of "
         "handling error Internal: failed initializing StreamExecutor for CUDA device ordinal 0: Internal: failed call to "
         "cuDevicePrimaryCtxRetain: CUDA_ERROR_ECC_UNCORRECTABLE: uncorrectable ECC error encountered", ("cuda_driver_error", "gpu_hardware")),
        ("2021-08-30 02:11:45.600913: E tensorflow/stream_executor/cuda/cuda_driver.cc:1010] could not synchronize on CUDA "
         "context: CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered :: *** Begin stack trace ***",
         ("cuda_driver_error", "cuda_error")),
        ("2020-09-14 17:05:21.774120: E tensorflow/stream_executor/cuda/cuda_event.cc:29] Error polling for event status: failed "
         "to query event: CUDA_ERROR_LAUNCH_FAILED: unspecified launch failure", ("cuda_driver_error", "cuda_error")),
        ("E tensorflow/stream_executor/cuda/cuda_driver.cc:1140] could not synchronize on CUDA context: CUDA_ERROR_MISALIGNED_ADDRESS "
         ":: No stack trace available", ("cuda_driver_error", "cuda_error")),
        ("tensorflow.python.framework.errors_impl.InternalError: Blas SGEMM launch failed : m=12544, n=64, k=27",
         ("tf_blas_launch_failed", "cuda_error")),
        ("2020-01-16 10:26:44.375949: W tensorflow/core/framework/op_kernel.cc:1655] OP_REQUIRES failed at cudnn_rnn_ops.cc:1517 : "
         "Internal: Failed to call ThenRnnBackward with model config: [rnn_mode, rnn_input_mode, rnn_direction_mode]: 2, 0, 0 ",
         ("tf_cudnn_rnn_failed", "cuda_error")),
        ("tensorflow.python.framework.errors_impl.UnknownError:  Failed to get convolution algorithm. This is probably because "
         "cuDNN failed to initialize, so try looking to see if a warning log message was printed above.",
         ("tf_cudnn_init_failed", "cuda_error")),
        ("F tensorflow/core/common_runtime/gpu/gpu_util.cc:370] GPU sync failed", ("tf_gpu_sync_failed", "cuda_error")),
        # the allocator's retries are a warning (the rule's role), never the failure
        ("2021-07-14 08:08:53.663124: I tensorflow/stream_executor/cuda/cuda_driver.cc:775] failed to allocate 256.00M "
         "(268435456 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory", ("tf_device_alloc_retry", "cuda_oom")),
        ("2018-02-07 22:06:11.442068: E tensorflow/stream_executor/cuda/cuda_driver.cc:936] failed to allocate 163.62M "
         "(171573248 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY", ("tf_device_alloc_retry", "cuda_oom")),
        ("tensorflow.python.framework.errors_impl.DataLossError: corrupted record at 775087002", ("tf_record_corrupted", "dataloader_error")),
        ("DataLossError (see above for traceback): truncated record at 4190", ("tf_record_corrupted", "dataloader_error")),
        # SLURM's own lines (src/slurmd, task_cgroup_memory.c, srun's node-failure handler)
        ("slurmstepd: error: Exceeded job memory limit", ("slurm_job_mem_notify", "host_oom")),
        ("srun: Exceeded job memory limit", ("slurm_job_mem_notify", "host_oom")),
        ("slurmstepd: error: Exceeded step memory limit at some point.", ("slurm_mem_at_some_point", "host_oom")),
        ("srun: error: Node failure on gpu-b[03-04]", ("srun_node_failure", "node_failure")),
        # near misses: the driver's start-up names TF survives on the CPU, other Blas words
        ("2019-12-09 10:29:08.549054: E tensorflow/stream_executor/cuda/cuda_driver.cc:318] failed call to cuInit: "
         "CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected", None),
        ("2019-12-09 10:29:08.549054: W tensorflow/compiler/xla/service/platform_util.cc:256] unable to create StreamExecutor "
         "for CUDA:0: failed initializing StreamExecutor for CUDA device ordinal 0: Internal: failed call to "
         "cuDevicePrimaryCtxRetain: CUDA_ERROR_INVALID_DEVICE: invalid device ordinal", None),
        ("Using Blas library OpenBLAS 0.3.21 with 8 threads", None),
        ("INFO:tensorflow:Hint: If you want to see a list of allocated tensors when OOM happens, add "
         "report_tensor_allocations_upon_oom to RunOptions", None),
    ],
)  # fmt: skip
def test_the_lines_and_their_near_misses(line, expected):
    assert found(line) == expected


def test_the_allocator_retry_and_the_cgroup_note_are_warnings():
    assert rule_role("tf_device_alloc_retry") == WARNING
    assert rule_role("slurm_mem_at_some_point") == WARNING  # printed also when the step then ends well


@pytest.mark.parametrize(
    "exc_type, message, category",
    [
        ("tensorflow.python.framework.errors_impl.ResourceExhaustedError",
         "OOM when allocating tensor with shape[256,1024,1024] and type float on /job:localhost/replica:0/task:0/device:GPU:0 "
         "by allocator GPU_0_bfc", "cuda_oom"),
        ("tensorflow.python.framework.errors_impl.ResourceExhaustedError",
         "OOM when allocating tensor with shape[256,1024,1024] and type float on /job:localhost/replica:0/task:0/device:CPU:0 "
         "by allocator cpu", "host_oom"),
        ("tensorflow.python.framework.errors_impl.InternalError", "Dst tensor is not initialized.", "cuda_oom"),
        ("tensorflow.python.framework.errors_impl.InternalError", "GPU sync failed", "cuda_error"),
        ("InternalError", "Blas GEMM launch failed : a.shape=(32, 784), b.shape=(784, 512), m=32, n=512, k=784", "cuda_error"),
        ("tensorflow.python.framework.errors_impl.InternalError",
         "failed initializing StreamExecutor for CUDA device ordinal 0: Internal: failed call to cuDevicePrimaryCtxRetain: "
         "CUDA_ERROR_ECC_UNCORRECTABLE: uncorrectable ECC error encountered", "gpu_hardware"),
        ("tensorflow.python.framework.errors_impl.UnknownError", "2 root error(s) found.", "unknown"),
        ("tensorflow.python.framework.errors_impl.DataLossError", "corrupted record at 2585605691", "dataloader_error"),
        # a checkpoint's DataLossError is no dataset error: the checkpoint's (tf_checkpoint_file, batch h16f-2)
        ("tensorflow.python.framework.errors_impl.DataLossError", "Unable to open table file /ckpt/model.ckpt-100: Data loss: not an "
         "sstable (bad magic number): perhaps your file is in a different file format", "checkpoint_error"),
        ("tensorflow.python.framework.errors_impl.InvalidArgumentError", "Incompatible shapes: [32,10] vs. [32,12]", "python_exception"),
    ],
)  # fmt: skip
def test_the_exceptions(exc_type, message, category):
    assert exception_category(exc_type, message) == category


SESSION_OOM = (
    "Epoch 3/40\n"
    " 412/1250 [========>.....................] - ETA: 3:02 - loss: 0.8817 - acc: 0.6904\n"
    "Traceback (most recent call last):\n"
    '  File "/srv/seg/train.py", line 88, in <module>\n'
    "    model.fit(train_ds, epochs=40)\n"
    '  File "/usr/local/lib/python3.6/dist-packages/tensorflow/python/client/session.py", line 1348, in _do_call\n'
    "    raise type(e)(node_def, op, message)\n"
    "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[16,256,128,128] "
    "and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n"
    "\t [[{{node conv2d_7/Conv2D}}]]\n"
)
ROOT_ERRORS = (
    "Epoch 1/10\n"
    "tensorflow.python.framework.errors_impl.InternalError: 2 root error(s) found.\n"
    "  (0) Internal: Blas GEMM launch failed : a.shape=(64, 50), b.shape=(50, 180), m=64, n=180, k=50\n"
    "\t [[node dense_1/MatMul (defined at /srv/tq/model.py:41) ]]\n"
    "  (1) Internal: Blas GEMM launch failed : a.shape=(64, 50), b.shape=(50, 180), m=64, n=180, k=50\n"
    "\t [[node dense_1/MatMul (defined at /srv/tq/model.py:41) ]]\n"
    "0 successful operations.\n"
    "0 derived errors ignored.\n"
)


@pytest.mark.parametrize("text, category", [(SESSION_OOM, "cuda_oom"), (ROOT_ERRORS, "cuda_error")])
def test_whole_logs(tmp_path, text, category):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary


@pytest.mark.parametrize("name, category", [("509", "cuda_oom"), ("511", "cuda_error"), ("512", "cuda_oom"), ("513", "dataloader_error"),
                                           ("514", "cuda_error")])
def test_the_dev_logs_of_the_batch(tmp_path, name, category):
    d = the_diagnosis(tmp_path, (DEV / f"{name}.log").read_text(), name)
    assert d.category == category, d.summary
