"""Rules from batch h16s of issue 16 (fixtures/eval README, "Batch h16s"): device memory exhausted as a math library or
XLA reports it is `cuda_oom`, not a CUDA runtime error and not nothing.

The lines, each from the source that prints it (cited in parsers/errors.py, rules cuda_lib_alloc_failed, xla_device_oom
and the trace rule device_alloc_failed): torch's TORCH_CUDABLAS_CHECK ("CUDA error: CUBLAS_STATUS_ALLOC_FAILED when
calling `cublasCreate(handle)`", aten/src/ATen/cuda/Exceptions.h) and AT_CUDNN_CHECK ("cuDNN error: "), TensorFlow's
"failed to create cublas handle: "; XLA's allocator adapter ("Out of memory while trying to allocate N bytes.",
xla/stream_executor/integrations/tf_allocator_adapter.cc) and the TPU runtime's and compiler's HBM reports (openxla/xla
docs/errors/error_0100.md, error_0101.md, error_1000.md). Values in the texts are ours."""

from __future__ import annotations

import pytest

from gangscope.parsers.errors import exception_category
from diagnose_in_process import the_diagnosis
from rule_reference import category_of


@pytest.mark.parametrize(
    "line, category",
    [
        ("RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`", "cuda_oom"),
        ("[rank3]: RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`", "cuda_oom"),
        ("2024-02-11 08:31:07.441203: E tensorflow/stream_executor/cuda/cuda_blas.cc:226] failed to create cublas handle: "
         "CUBLAS_STATUS_ALLOC_FAILED", "cuda_oom"),
        ("RuntimeError: cuDNN error: CUDNN_STATUS_ALLOC_FAILED", "cuda_oom"),
        ("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 301989888 bytes.", "cuda_oom"),
        ("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 41943040 bytes.", "cuda_oom"),
        ("2023-06-11 03:41:17.508211: E tensorflow/compiler/xla/xla_client/xla_util.cc:88]   (1) RESOURCE_EXHAUSTED: Attempting to "
         "reserve 6.51G at the bottom of memory. That was not possible. There are 6.74G free, 0B reserved, and 3.29G reservable.", "cuda_oom"),
        ("jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Error loading program 'jit_train_step': Attempting to reserve 12.25G at the "
         "bottom of memory. That was not possible. There are 11.02G free, 0B reserved, and 11.02G reservable.", "cuda_oom"),
        ("ValueError: RESOURCE_EXHAUSTED: Error allocating device buffer: Attempting to allocate 16.00M. That was not possible. "
         "There are 9.12M free.; (0x0x0_HBM0)", "cuda_oom"),
        ("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory "
         "space hbm. Used 19.40G of 15.48G hbm. Exceeded hbm capacity by 3.92G.", "cuda_oom"),
        ("RESOURCE_EXHAUSTED: TPU TensorCore Hbm usage: 28.10G, SparseCore Hbm usage 80.50G, exceeding available bytes: 95.74G", "cuda_oom"),
        # not theirs: another cuBLAS status stays a CUDA error; other RESOURCE_EXHAUSTED statuses and the host limit are not read
        ("RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle, opa, opb, m, n, k, &alpha, a, "
         "lda, b, ldb, &beta, c, ldc)`", "cuda_error"),
        ("grpc: RESOURCE_EXHAUSTED: Received message larger than max (8388713 vs. 4194304)", None),
        ("RESOURCE_EXHAUSTED: Out of host memory while trying to allocate 68719476736 bytes. Please set the environment variable "
         "XLA_PJRT_GPU_HOST_MEMORY_LIMIT_GB to allocate larger host memory than the default 64 GB.", None),
    ],
)  # fmt: skip
def test_the_lines_and_their_near_misses(line, category):
    assert category_of(line) == category


@pytest.mark.parametrize(
    "exc_type, message",
    [
        ("RuntimeError", "CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`"),
        ("jaxlib.xla_extension.XlaRuntimeError", "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 41943040 bytes."),
        ("jax.errors.JaxRuntimeError", "RESOURCE_EXHAUSTED: Error loading program 'jit_step': Attempting to reserve 9.50G at the "
                                       "bottom of memory. That was not possible. There are 7.01G free, 0B reserved, and 7.01G reservable."),
    ],
)  # fmt: skip
def test_raised_they_are_gpu_memory(exc_type, message):
    assert exception_category(exc_type, message) == "cuda_oom"


CUBLAS_TRACE = ("Traceback (most recent call last):\n"
                '  File "main.py", line 304, in main\n'
                "    model.backward(loss)\n"
                '  File "/opt/venv/lib/python3.8/site-packages/torch/autograd/__init__.py", line 197, in backward\n'
                "    Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass\n"
                "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`\n")  # fmt: skip
TPU_LINES = "".join(f"2023-06-11 03:41:17.50821{i}: E tensorflow/compiler/xla/xla_client/xla_util.cc:88] {text}\n" for i, text in enumerate([
    "  (1) RESOURCE_EXHAUSTED: Attempting to reserve 6.51G at the bottom of memory. That was not possible. There are 6.74G free, "
    "0B reserved, and 3.29G reservable.",
    "\t [[{{node XRTExecute}}]]",
    "0 successful operations.",
    "0 derived errors ignored."])) + "Exception in device=TPU:4: RES\n"  # fmt: skip


@pytest.mark.parametrize("text", [CUBLAS_TRACE, TPU_LINES])
def test_the_logs_of_the_batch_read_as_gpu_memory(tmp_path, text):
    d = the_diagnosis(tmp_path, text)
    assert d.category == "cuda_oom", d.summary
