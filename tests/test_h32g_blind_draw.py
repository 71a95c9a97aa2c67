"""Rule from batch h32g of issue 16 (fixtures/eval README, "Batch h32g"): a tenth blind draw from GitHub issue threads
shaped like the judged set.

Its one miss as it came (dev 1440) is pynvml raising NVMLError_Unknown from nvmlDeviceGetHandleByIndex: NVML started,
then could not return a handle for the job's GPU. nvidia-smi reports the same failed call as "Unable to determine the
device handle for GPU ...: <nvmlErrorString>" (line rule nvml_lost, gpu_hardware for any reason); pynvml raises it as an
NVMLError subclass by code (NVIDIA nvidia-ml-py pynvml.py: nvmlDeviceGetHandleByIndex -> nvmlDeviceGetHandleByIndex_v2,
_nvmlCheckReturn raises NVMLError(ret); NVML_ERROR_UNKNOWN -> NVMLError_Unknown "Unknown Error", NVML_ERROR_GPU_IS_LOST
-> NVMLError_GpuIsLost "GPU is lost"). Trace rule nvml_device_handle: those two codes, through a handle query only.
NVML's init failing with "Unknown Error" (a container that lost its device nodes, h25b's near miss) and the configuration
codes (NotSupported, NoPermission, DriverNotLoaded, an AMD / MUSA shim's InvalidArgument) stay out.
The tracebacks below are rebuilt from pynvml's and torch's frames with our values, not copied from a fixture."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis

from gangscope.parsers.errors import first_trace_rule

SITE = "/opt/venvs/train/lib/python3.11/site-packages"


def traceback(exc: str, message: str, call: str = "nvmlDeviceGetHandleByIndex", caller: str = "torch") -> str:
    """A training run's traceback ending in a pynvml call that raised, as Python prints it."""
    head = {
        "torch": (f'  File "{SITE}/torch/cuda/__init__.py", line 1073, in _get_pynvml_handler\n'
                  f"    handle = pynvml.{call}(device)\n"),
        "gpustat": (f'  File "{SITE}/gpustat/core.py", line 512, in new_query\n'
                    f"    handle = N.{call}(index)\n"),
    }[caller]
    return (
        "step 1200 loss 2.3141 lr 3.0e-04\n"
        "Traceback (most recent call last):\n"
        '  File "/srv/jobs/train.py", line 88, in <module>\n'
        "    main()\n"
        '  File "/srv/jobs/train.py", line 61, in main\n'
        "    log_gpu_stats(step)\n"
        + head
        + f'  File "{SITE}/pynvml.py", line 2604, in {call}\n'
        "    _nvmlCheckReturn(ret)\n"
        f'  File "{SITE}/pynvml.py", line 1042, in _nvmlCheckReturn\n'
        "    raise NVMLError(ret)\n"
        f"{exc}: {message}\n"
    )


@pytest.mark.parametrize("exc, message", [
    ("pynvml.NVMLError_Unknown", "Unknown Error"),
    ("pynvml.nvml.NVMLError_Unknown", "Unknown Error"),
    ("pynvml.NVMLError_GpuIsLost", "GPU is lost"),
])
@pytest.mark.parametrize("call", ["nvmlDeviceGetHandleByIndex", "nvmlDeviceGetHandleByPciBusId", "nvmlDeviceGetHandleByUUID"])
@pytest.mark.parametrize("caller", ["torch", "gpustat"])
def test_a_device_handle_nvml_cannot_return_is_the_gpu(tmp_path, exc, message, call, caller):
    d = the_diagnosis(tmp_path, traceback(exc, message, call, caller))
    assert d.category == "gpu_hardware", (d.category, d.summary)


def test_the_rule_reads_the_handle_query_frame():
    frames = [f"{SITE}/torch/cuda/__init__.py:_get_pynvml_handler", f"{SITE}/pynvml.py:nvmlDeviceGetHandleByIndex",
              f"{SITE}/pynvml.py:_nvmlCheckReturn"]
    found = first_trace_rule("pynvml.NVMLError_Unknown", "Unknown Error", frames)
    assert found is not None and found.name == "nvml_device_handle" and found.category == "gpu_hardware"


@pytest.mark.parametrize("exc, message, frames", [
    # NVML's init failing with "Unknown Error": a container that lost its device nodes (h25b's near miss), not this rule
    ("pynvml.NVMLError_Unknown", "Unknown Error", [f"{SITE}/pynvml.py:nvmlInit", f"{SITE}/pynvml.py:nvmlInitWithFlags"]),
    # configuration codes through a handle query
    ("pynvml.NVMLError_NotSupported", "Not Supported", [f"{SITE}/pynvml.py:nvmlDeviceGetHandleByIndex"]),
    ("pynvml.NVMLError_NoPermission", "Insufficient Permissions", [f"{SITE}/pynvml.py:nvmlDeviceGetHandleByIndex"]),
    ("pynvml.NVMLError_DriverNotLoaded", "Driver Not Loaded", [f"{SITE}/pynvml.py:nvmlDeviceGetHandleByIndex"]),
    # an AMD SMI shim's own nvmlDeviceGetHandleByIndex raising for an index out of range
    ("NVMLError_InvalidArgument", "invalid device index 3", [f"{SITE}/amdsmi_nvml_shim.py:nvmlDeviceGetHandleByIndex"]),
    # Unknown Error from another query (a utilization read) is not a handle query
    ("pynvml.NVMLError_Unknown", "Unknown Error", [f"{SITE}/pynvml.py:nvmlDeviceGetUtilizationRates"]),
    # the same frame name in user code of another module
    ("pynvml.NVMLError_Unknown", "Unknown Error", ["/srv/jobs/monitor.py:nvmlDeviceGetHandleByIndex"]),
])
def test_near_misses_are_not_this_rule(exc, message, frames):
    found = first_trace_rule(exc, message, frames)
    assert found is None or found.name != "nvml_device_handle", found.name


def test_nvml_init_unknown_error_stays_out_of_gpu_hardware(tmp_path):
    text = (
        "Traceback (most recent call last):\n"
        '  File "/srv/jobs/train.py", line 12, in <module>\n'
        "    pynvml.nvmlInit()\n"
        f'  File "{SITE}/pynvml.py", line 1987, in nvmlInit\n'
        "    nvmlInitWithFlags(0)\n"
        f'  File "{SITE}/pynvml.py", line 1970, in nvmlInitWithFlags\n'
        "    _nvmlCheckReturn(ret)\n"
        f'  File "{SITE}/pynvml.py", line 1042, in _nvmlCheckReturn\n'
        "    raise NVMLError(ret)\n"
        "pynvml.NVMLError_Unknown: Unknown Error\n"
    )
    d = the_diagnosis(tmp_path, text)
    assert d.category != "gpu_hardware", (d.category, d.summary)
