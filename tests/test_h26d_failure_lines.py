"""The rules written from batch h26d's build half (fixtures/formats/failure_lines.json, `"batch": "h26d"`), with near misses.

Batch h26d is the failure lines of other accelerators and of the transports under NCCL / MPI: PyTorch's ROCm and MPS texts,
ROCr's and ROCclr's aborts, the amdgpu driver, bitsandbytes' CUDA checks, UCX, libfabric's EFA provider, Open MPI's openib
BTL, XLA's preemption notifier. Each rule cites its source beside it in gangscope/parsers/errors.py (blocks marked h26d).
The lines below are written with our own values in the printers' wordings (every version the rule reads); the near misses
are lines that must not match.
"""

from __future__ import annotations

import re

import pytest

from gangscope.parsers.errors import first_trace_rule
from rule_reference import detected

H26D_LINE_RULES = {"hip_error", "hip_oom", "mps_oom", "rocr_vm_fault", "rocr_hw_exception", "rocclr_queue_abort",
                   "amdgpu_ras_uncorrectable", "amdgpu_vm_page_fault", "bnb_cuda_check", "ucx_ib_completion_error",
                   "efa_endpoint_error", "efa_internal_ope_failure", "ompi_openib_retry_exceeded", "ompi_openib_error_event",
                   "xla_sigterm_notice"}
H26D_TRACE_RULES = {"hip_mps_oom", "hip_error"}
UCX = "[1733282412.418296] [trn-node-07:40213:0]     ib_mlx5_log.c:179  UCX  ERROR "
KERNEL = "[Fri Dec  4 03:12:44 2026] amdgpu 0000:c1:00.0: amdgpu: "



@pytest.mark.parametrize(
    "line, rule, category",
    [
        # torch's hipified c10 texts: each hipGetErrorString class, every torch 2.x suffix after it is on its own line
        ("RuntimeError: HIP error: invalid device function", "hip_error", "cuda_error"),
        ("torch.AcceleratorError: HIP error: unspecified launch failure", "hip_error", "cuda_error"),
        ("[rank3]: RuntimeError: HIP error: device-side assert triggered", "hip_error", "cuda_error"),
        ("  what():  HIP error: the launch timed out and was terminated", "hip_error", "cuda_error"),
        ("RuntimeError: HIP error: out of memory", "hip_error", "cuda_oom"),
        ("RuntimeError: HIP error: uncorrectable ECC error encountered", "hip_error", "gpu_hardware"),
        ("RuntimeError: HIP out of memory. Tried to allocate 2.00 GiB (GPU 0; 63.98 GiB total capacity; 60.41 GiB already allocated; "
         "1.62 GiB free; 61.37 GiB reserved in total by PyTorch)", "hip_oom", "cuda_oom"),
        ("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 896.00 MiB. GPU 5 has a total capacity of 255.98 GiB of which "
         "412.00 MiB is free.", "hip_oom", "cuda_oom"),
        ("RuntimeError: MPS backend out of memory (MPS allocated: 17.82 GB, other allocations: 394.45 MB, max allowed: 18.13 GB). "
         "Tried to allocate 256.00 MB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory "
         "allocations (may cause system failure).", "mps_oom", "cuda_oom"),
        ("RuntimeError: MPS backend out of memory (MPS allocated: 36.12 GB, other allocations: 1.04 GB). Tried to allocate 1.50 GB on "
         "shared pool.", "mps_oom", "cuda_oom"),
        # ROCr's VM fault: every reason of the handler (ROCm 3.9-6.2), the imprecise address
        ("Memory access fault by GPU node-3 (Agent handle: 0x55d0e3a1b2c0) on address 0x7f2c41e00000. Reason: Page not present or "
         "supervisor privilege.", "rocr_vm_fault", "cuda_error"),
        ("Memory access fault by GPU node-5 (Agent handle: 0x5612a0c4d8e0) on address 0x7ef01a200000. Reason: Write access to a "
         "read-only page.", "rocr_vm_fault", "cuda_error"),
        ("Memory access fault by GPU node-1 (Agent handle: 0x5612a0c4d8e0) on address 0x7ef01a200000. Reason: Execute access to a "
         "page marked NX.", "rocr_vm_fault", "cuda_error"),
        ("Memory access fault by GPU node-1 (Agent handle: 0x5612a0c4d8e0) on address 0x7ef01a200000. Reason: Host access only.",
         "rocr_vm_fault", "cuda_error"),
        ("Memory access fault by GPU node-2 (Agent handle: 0x55b8f0a3c6a0) on address 0x7fcd4a000000(may not be exact address). "
         "Reason: Unknown.", "rocr_vm_fault", "cuda_error"),
        ("Memory access fault by GPU node-4 (Agent handle: 0x55e2b1c09f30) on address 0x7f8812340000. Reason: DRAM ECC failure.",
         "rocr_vm_fault", "gpu_hardware"),
        ("Memory access fault by GPU node-9 (Agent handle: 0x561f4c2a07b0) on address 0x7f33c8a00000. Reason: SRAM ECC failure.",
         "rocr_vm_fault", "gpu_hardware"),
        ("Memory access fault by GPU node-9 (Agent handle: 0x561f4c2a07b0) on address 0x7f33c8a00000. Reason: Generic hang recovery.",
         "rocr_vm_fault", "gpu_hardware"),
        ("HW Exception by GPU node-6 (Agent handle: 0x5581d7f3e2a0) reason :GPU Hang", "rocr_hw_exception", "gpu_hardware"),
        ("HW Exception by GPU node-2 (Agent handle: 0x55c7e0a81f40) reason :ECC", "rocr_hw_exception", "gpu_hardware"),
        # ROCclr's queue callback: clr (rocm-5.6+) both branches, ROCclr before it
        (":0:rocdevice.cpp            :2999: 1418830317 us: [pid:40213 tid:0x7f0e7dffb640] Callback: Queue 0x7f0c58600000 aborting "
         "with error : HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent attempted to access memory beyond the largest legal "
         "address. code: 0x29", "rocclr_queue_abort", "cuda_error"),
        (":0:rocdevice.cpp            :2990: 3120459871 us: [pid:40213 tid:0x7f0e7dffb640] Callback: Queue 0x7f0c58600000 Aborting "
         "with error : HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary resources. Code: 0x1008 "
         "Available Free mem : 12 MB", "rocclr_queue_abort", "cuda_oom"),
        (":0:rocdevice.cpp            :2614: 281102691423 us: 54282: [tid:0x7ff1f9c47700] Device::callbackQueue aborting with error : "
         "HSA_STATUS_ERROR_MEMORY_FAULT: Agent attempted to access an inaccessible address. code: 0x2b", "rocclr_queue_abort",
         "cuda_error"),
        # the amdgpu driver: RAS in its three wordings, the VM fault in v9's and v10's (and 6.9's, no process)
        (KERNEL + "2 uncorrectable hardware errors detected in umc block", "amdgpu_ras_uncorrectable", "gpu_hardware"),
        (KERNEL + "socket: 0, die: 1, 3 new uncorrectable hardware errors detected in umc block", "amdgpu_ras_uncorrectable",
         "gpu_hardware"),
        (KERNEL + "socket: 0, die: 1, 3 uncorrectable hardware errors detected in total in umc block", "amdgpu_ras_uncorrectable",
         "gpu_hardware"),
        (KERNEL + "{118} socket: 0, die: 0, 1 new uncorrectable hardware errors detected in gfx block", "amdgpu_ras_uncorrectable",
         "gpu_hardware"),
        (KERNEL + "[gfxhub0] no-retry page fault (src_id:0 ring:0 vmid:8 pasid:32771, for process python3 pid 40213 thread python3 "
         "pid 40213)", "amdgpu_vm_page_fault", "cuda_error"),
        (KERNEL + "[gfxhub] page fault (src_id:0 ring:24 vmid:3 pasid:32769, for process python pid 51877 thread python pid 51877)",
         "amdgpu_vm_page_fault", "cuda_error"),
        (KERNEL + "[mmhub0] page fault (src_id:0 ring:0 vmid:0 pasid:0)", "amdgpu_vm_page_fault", "cuda_error"),
        # bitsandbytes' CUDA_CHECK_RETURN (CUDA and HIP builds)
        ("Error an illegal memory access was encountered at line 380 in file /src/csrc/ops.cu", "bnb_cuda_check", "cuda_error"),
        ("Error out of memory at line 572 in file /src/csrc/pythonInterface.cpp", "bnb_cuda_check", "cuda_oom"),
        ("Error invalid device function at line 1254 in file /bitsandbytes/csrc/ops.hip", "bnb_cuda_check", "cuda_error"),
        # UCX's mlx5 completion errors: the 1.13+ and the 1.8-1.12 interface forms print alike
        (UCX + "Transport retry count exceeded on mlx5_0:1/IB (synd 0x15 vend 0x81 hw_synd 0/0)", "ucx_ib_completion_error",
         "nccl_error"),
        (UCX + "Remote access error on mlx5_2:1/RoCE (synd 0x13 vend 0x88 hw_synd 0/0)", "ucx_ib_completion_error", "nccl_error"),
        (UCX + "Receive-no-ready retry count exceeded on mlx5_0:1/IB (synd 0x16 vend 0x82 hw_synd 0/0)", "ucx_ib_completion_error",
         "nccl_error"),
        ("[1612345678.123456] [hpc-node-031:40213:0]   ib_mlx5_log.c:143  UCX  ERROR Work Request Flushed Error on mlx5_0:1/IB "
         "(synd 0x5 vend 0xf9 hw_synd 0/0)", "ucx_ib_completion_error", "nccl_error"),
        # libfabric's EFA provider: the abort box's three lines, the EQ line, the rx / tx entry failures
        ("Libfabric EFA provider has encountered an internal error:", "efa_endpoint_error", "nccl_error"),
        ("Libfabric error: (5) Input/output error", "efa_endpoint_error", "nccl_error"),
        ("EFA internal error: (4124) Unresponsive receiver (connection previously established)", "efa_endpoint_error", "nccl_error"),
        ("libfabric:40213:1733282412:efa:eq:efa_base_ep_write_eq_error():836<warn> Writing error to EQ: err: Input/output error (5) "
         "prov_errno: Unreachable remote - never received a response (15)", "efa_endpoint_error", "nccl_error"),
        ("libfabric:40213:1733282412:efa:cq:efa_rdm_rxe_handle_error():675<warn> EFA provider internal rxe failure err: 5, message: "
         "Connection was reset by remote peer (8)", "efa_internal_ope_failure", "nccl_error"),
        ("libfabric:40213:1733282412:efa:cq:efa_rdm_txe_handle_error():1084<warn> EFA provider internal txe failure err: 113, "
         "message: Unresponsive receiver (reachable by EFA device but handshake failed) (4126)", "efa_internal_ope_failure",
         "nccl_error"),
        # Open MPI's openib BTL help topics
        ("The InfiniBand retry count between two MPI processes has been", "ompi_openib_retry_exceeded", "nccl_error"),
        ("The OpenFabrics \"receiver not ready\" retry count on a per-peer", "ompi_openib_retry_exceeded", "nccl_error"),
        ("The OpenFabrics \"receiver not ready\" retry count on a shared receive", "ompi_openib_retry_exceeded", "nccl_error"),
        ("The OpenFabrics stack has reported a network error event.  Open MPI", "ompi_openib_error_event", "nccl_error"),
        # XLA's preemption notifier
        ("W1204 03:12:44.512083  40260 preemption_notifier.cc:89] SIGTERM caught at 2026-12-04T03:12:44.511912+00:00",
         "xla_sigterm_notice", "preempted"),
    ],
)
def test_h26d_line_rules(line, rule, category):
    assert detected(line) == (rule, category)


@pytest.mark.parametrize(
    "line",
    [
        # hipMemGetInfo / rocm-smi / torch prints of free memory, and the success text: no failure
        "hipMemGetInfo: free 64424509440 bytes, total 68702699520 bytes",
        "[rank0] torch.cuda.mem_get_info() on HIP: free=60.10 GiB total=63.98 GiB",
        "GPU[0]\t\t: VRAM Total Used Memory (B): 59726528512",
        "HIP error: no error",
        "set PYTORCH_HIP_ALLOC_CONF=expandable_segments:True to avoid HIP out of memory errors",
        "Tip: lower the batch size if you see MPS backend out of memory errors",
        "export HSA_ENABLE_VM_FAULT_MESSAGE=0  # quiet the Memory access fault by GPU node- messages",
        ":3:rocdevice.cpp            :2802: 0006438233 us: [pid:40213 tid:0x7f0e7dffb640] Callback: Queue 0x7f0c58600000 created",
        KERNEL + "5 correctable hardware errors detected in umc block",
        KERNEL + "socket: 0, die: 1, 0 uncorrectable hardware errors detected in total in umc block",
        KERNEL + "[gfxhub0] page fault handling enabled",
        "Error parsing the config at line 3 in file settings.yaml",
        "Error: out of memory at line 5",
        "[1733282412.418296] [trn-node-07:40213:0]        ib_iface.c:1116 UCX  WARN  IB: ibv_fork_init() was disabled or failed",
        "trn1-node-12:40213:40390 [0] NCCL INFO NET/OFI Selected Provider is efa (found 4 nics)",
        "libfabric:40213:1733282412:efa:core:efa_device_construct():158<info> EFA device found: rdmap16s27",
        "WARNING: There is at least non-excluded one OpenFabrics device found,",
        "Caught SIGTERM, shutting down the data workers",
        "the notifier logs 'SIGTERM caught at <time>' when the VM is preempted",
    ],
)
def test_h26d_line_near_misses(line):
    found = detected(line)
    assert found is None or found[0] not in H26D_LINE_RULES, found


@pytest.mark.parametrize(
    "exc_type, message, rule",
    [
        ("RuntimeError", "HIP out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.98 GiB total capacity; 6.51 GiB already "
         "allocated; 4.53 GiB free; 11.39 GiB reserved in total by PyTorch)", "hip_mps_oom"),
        ("RuntimeError", "MPS backend out of memory (MPS allocated: 9.04 GB, other allocations: 8.89 GB, max allowed: 18.13 GB). "
         "Tried to allocate 250.00 MB on private pool.", "hip_mps_oom"),
        ("RuntimeError", "HIP error: out of memory\nHIP kernel errors might be asynchronously reported at some other API call",
         "hip_mps_oom"),
        ("RuntimeError", "HIP error: invalid device function\nHIP kernel errors might be asynchronously reported at some other API "
         "call, so the stacktrace below might be incorrect.", "hip_error"),
        ("torch.AcceleratorError", "HIP error: invalid argument\nSearch for `hipErrorInvalidValue' in "
         "https://docs.nvidia.com/cuda/cuda-runtime-api/group__HIPRT__TYPES.html for more information.", "hip_error"),
    ],
)
def test_h26d_trace_rules(exc_type, message, rule):
    found = first_trace_rule(exc_type, message, [])
    assert found is not None and found.name == rule


@pytest.mark.parametrize(
    "exc_type, message",
    [
        ("RuntimeError", "HIP error: no error"),
        ("ValueError", "hipMemGetInfo reported 0 bytes free"),
        ("RuntimeError", "MPS backend is not available"),
    ],
)
def test_h26d_trace_near_misses(exc_type, message):
    found = first_trace_rule(exc_type, message, [])
    assert found is None or found.name not in H26D_TRACE_RULES


def test_an_uncorrectable_ecc_hip_error_stays_hardware():
    # gpu_ecc (before the h26d trace rules) reads the ECC text whatever the runtime's prefix
    found = first_trace_rule("RuntimeError", "HIP error: uncorrectable ECC error encountered", [])
    assert found is not None and found.name == "gpu_ecc"
