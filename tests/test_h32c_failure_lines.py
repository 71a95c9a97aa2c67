"""The rules written from batch h32c's build half (fixtures/formats/failure_lines.json, `"batch": "h32c"`), with near misses.

Batch h32c is, in part, launcher boxes and lines copied from a terminal or a web UI's pane narrower than their lines (40-56
columns: torchrun's ChildFailedError box, Open MPI's / PRRTE's help boxes, DeepSpeed's launcher) and PaddlePaddle's enforce
errors of other types (errors::External with a CUDA / cuDNN / NCCL code, the tracer's "(Fatal) Operator ... raises an ...
exception."), and in part families new to the table (RCCL's "HIP failure", s3fs's translated S3 errors, aiohttp's client
errors, torch.distributed.checkpoint's async_save). Each rule cites its source beside it in gangscope/parsers/wraps.py,
gangscope/parsers/errors.py, gangscope/pipeline/diagnose/rules.py and root_cause.py (blocks marked h32c). The lines below are
written with our own values in the printers' wordings; the near misses are lines that must not match.
"""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis
from rule_reference import read_line
from gangscope.parsers import wraps
from gangscope.parsers.errors import first_trace_rule

H32C_TRACE_RULES = ("paddle_external_cuda_oom", "paddle_external_gpu_error", "s3fs_error_wrapper", "aiohttp_fetch_failed",
                    "aiohttp_response_server_error", "dcp_async_save_no_cpu_backend")
TB = 'Traceback (most recent call last):\n  File "/workspace/train.py", line 12, in <module>\n    main()\n'
STEP = "[2026-01-07 11:02:01,118] [INFO] [trainer.py:233] step 120 | loss 2.4017 | lr 1.90e-04\n"


def hard_wrap(text: str, width: int) -> str:
    """Every line of `text` cut at exactly `width` columns, as a copy of a terminal keeps it."""
    out = []
    for line in text.split("\n"):
        while len(line) > width:
            out.append(line[:width])
            line = line[width:]
        out.append(line)
    return "\n".join(out)


# --- wraps.py: a pane narrower than MIN_WIDTH

DS_KILL = (STEP + "".join(f"[2026-01-07 11:02:09,11{i}] [INFO] [launch.py:319:sigkill_handler] Killing subprocess 4410{i}\n" for i in range(3))
           + "[2026-01-07 11:02:09,240] [ERROR] [launch.py:325:sigkill_handler] ['/usr/bin/python3', '-u', 'train.py', '--local_rank=2', "
           "'--deepspeed'] exits with return code = -9\n")
DASH = "-" * 74
MPI_KILL = (STEP + DASH + "\nPrimary job  terminated normally, but 1 process returned\na non-zero exit code. Per user-direction, the job has "
            "been aborted.\n" + DASH + "\n" + DASH + "\nmpirun noticed that process rank 2 with PID 4410 on node node-a7 exited on signal 9 "
            "(Killed).\n" + DASH + "\n")
EL_BOX = ("torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n" + "=" * 60 + "\ntrain.py FAILED\n" + "-" * 60 +
          "\nFailures:\n  <NO_OTHER_FAILURES>\n" + "-" * 60 + "\nRoot Cause (first observed failure):\n[0]:\n  time      : 2026-01-07_11:02:09\n"
          "  host      : node-a7.cluster.example.org\n  rank      : 2 (local_rank: 2)\n  exitcode  : -9 (pid: 4410)\n  error_file: <N/A>\n"
          "  traceback : Signal 9 (SIGKILL) received by PID 4410\n" + "=" * 60 + "\n")


@pytest.mark.parametrize("width", [40, 44, 48, 52, 56])
def test_a_launchers_lines_copied_from_a_narrow_pane_are_joined_back(width):
    rows = hard_wrap(DS_KILL, width).split("\n")
    assert wraps.wrap_width(rows) == width
    assert wraps.join_wrapped(rows) == DS_KILL.split("\n")


@pytest.mark.parametrize("width", [40, 48, 56])
def test_a_narrow_copy_of_deepspeeds_sigkill_is_host_memory(tmp_path, width):
    assert the_diagnosis(tmp_path, hard_wrap(DS_KILL, width)).category == "host_oom"


@pytest.mark.parametrize("width", [40, 48, 56])
def test_a_narrow_copy_of_mpiruns_signal_box_is_host_memory(tmp_path, width):
    assert the_diagnosis(tmp_path, hard_wrap(MPI_KILL, width)).category == "host_oom"


@pytest.mark.parametrize("width", [40, 44, 52])
def test_a_narrow_copy_of_torchruns_box_keeps_its_class_name_whole(tmp_path, width):
    rows = hard_wrap(TB + EL_BOX, width).split("\n")
    joined = wraps.join_wrapped(rows)
    assert "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: " in joined
    assert the_diagnosis(tmp_path, "\n".join(rows)).category == "host_oom"


def test_a_rule_line_cut_at_the_edge_is_a_break():
    assert wraps.cut_rule("-" * 48, "-" * 26)
    assert wraps.cut_rule("=" * 40, "=" * 20)
    # near misses: two whole rules (Open MPI prints its closing and opening rules so), a rule then text, a row of text
    assert not wraps.cut_rule("-" * 74, "-" * 74)
    assert not wraps.cut_rule("-" * 48, "--- end ---")
    assert not wraps.cut_rule("-" * 48, "")
    assert not wraps.cut_rule("ab" * 24, "a")


def test_a_qualified_class_name_cut_at_the_edge_goes_on():
    assert wraps.cut_name("torch.distributed.elastic.multiprocessin", "g.errors.ChildFailedError: ")
    assert wraps.cut_name("[rank3]: torch.distributed.DistBack", "endError: NCCL error in: ...")
    # near misses: a header a writer starts on a line of its own, a row that ends in a word with no dot
    assert not wraps.cut_name("torch.distributed.elastic.multiprocessin", "RuntimeError: boom")
    assert not wraps.cut_name("loading the model from the checkpoint dir", "ValueError: bad")
    assert not wraps.cut_name("see torch.distributed", "  File \"x.py\", line 1")


@pytest.mark.parametrize(
    "rows",
    [
        # ranks printing one 40-column line each, then a shorter one (fixtures/eval dev 668): no break inside a word
        ["read 1281167 files from 1000 directories"] * 4 + ["read 50000 files from 1000 directories"] * 4,
        # a writer's short lines of one length: two breaks that look like cut words are not enough under MIN_WIDTH
        ["x" * 39 + "a", "bc", "y" * 39 + "d", "ef", "z" * 39 + ".", "end"],
        # narrower than NARROW_MIN_WIDTH
        ["a" * 37 + "bc", "de", "f" * 37 + "gh", "ij", "k" * 37 + "lm", "no", "p" * 39],
    ],
)  # fmt: skip
def test_short_lines_that_were_not_wrapped_are_left_as_they_are(rows):
    assert wraps.wrap_width(rows) is None
    assert wraps.join_wrapped(rows) is rows


def test_three_cut_words_show_a_narrow_wrap():
    rows = ["x" * 39 + "a", "bc", "y" * 39 + "d", "ef", "z" * 39 + "g", "hi", "end"]
    assert wraps.wrap_width(rows) == 40
    assert wraps.join_wrapped(rows) == ["x" * 39 + "abc", "y" * 39 + "def", "z" * 39 + "ghi", "end"]


# --- RCCL's HIP failure

@pytest.mark.parametrize(
    "line, category",
    [
        ("node-a7:4410:4522 [2] NCCL WARN HIP failure 'out of memory' at /src/rccl/build/hipify/src/allocator.cc:212", "cuda_oom"),
        ("node-a7:4410:4522 [2] NCCL WARN HIP failure 'an illegal memory access was encountered' at /src/rccl/src/enqueue.cc:1377",
         "cuda_error"),
        ("[default2]:node-a7:4410:4522 [2] NCCL WARN HIP failure 'unspecified launch failure' at src/init.cc:88", "cuda_error"),
        ("node-a7:4410:4522 [2] NCCL WARN HIP failure 'uncorrectable ECC error encountered' at src/proxy.cc:901", "gpu_hardware"),
    ],
)
def test_rccls_hip_failure_is_read_by_its_error_string(line, category):
    assert read_line(line) == ("rccl_hip_failure", category)


@pytest.mark.parametrize(
    "line",
    [
        # another HIP failure stays the generic WARN's (as NVIDIA's 'initialization error'), the text outside NCCL's WARN is none
        "node-a7:4410:4522 [2] NCCL WARN HIP failure 'invalid argument' at src/transport/p2p.cc:271",
        "HIP failure 'out of memory' at allocator.cc:212",
        "node-a7:4410:4522 [2] NCCL INFO HIP failure 'out of memory' was retried",
    ],
)
def test_near_misses_of_rccls_hip_failure(line):
    found = read_line(line)
    assert found is None or found[0] != "rccl_hip_failure", found


# --- trace rules

@pytest.mark.parametrize(
    "exc_type, message, rule, category",
    [
        ("OSError", "(External) CUDA error(2), out of memory. \n  [Hint: 'cudaErrorMemoryAllocation'. ...]", "paddle_external_cuda_oom",
         "cuda_oom"),
        ("ExternalError", "CUDA error(2), out of memory. ", "paddle_external_cuda_oom", "cuda_oom"),
        ("OSError", "(External) CU error(2). ", "paddle_external_cuda_oom", "cuda_oom"),
        ("OSError", "(External) CUDA error(700), an illegal memory access was encountered. ", "paddle_external_gpu_error", "cuda_error"),
        ("OSError", "(External) CUDNN error(4), CUDNN_STATUS_INTERNAL_ERROR. ", "paddle_external_gpu_error", "cuda_error"),
        ("ExternalError", "CUFFT error(5). ", "paddle_external_gpu_error", "cuda_error"),
        ("aiohttp.client_exceptions.ServerDisconnectedError", "Server disconnected", "aiohttp_fetch_failed", "storage_io"),
        ("aiohttp.ClientPayloadError", "Response payload is not completed", "aiohttp_fetch_failed", "storage_io"),
        ("aiohttp.client_exceptions.ClientResponseError", "503, message='Service Unavailable', url='https://data.example.org/a.bin'",
         "aiohttp_response_server_error", "storage_io"),
        ("aiohttp.client_exceptions.ClientResponseError", "429, message='Too Many Requests', url='https://data.example.org/a.bin'",
         "aiohttp_response_server_error", "storage_io"),
        ("AssertionError", "A CPU backend must be enabled for async save; try initializing process group with 'cpu:gloo,cuda:nccl'",
         "dcp_async_save_no_cpu_backend", "checkpoint_error"),
    ],
)
def test_the_h32c_trace_rules(exc_type, message, rule, category):
    found = first_trace_rule(exc_type, message)
    assert found is not None and (found.name, found.category) == (rule, category)


@pytest.mark.parametrize(
    "exc_type, message",
    [
        # Paddle's NCCL code is nccl_error's; an ECC error and a library's ALLOC_FAILED are read first; a code not at the start
        ("OSError", "(External) NCCL error(5), invalid usage. "),
        ("OSError", "(External) CUDA error(214), uncorrectable ECC error encountered. "),
        ("OSError", "(External) CUBLAS error(3). \n  [Hint: 'CUBLAS_STATUS_ALLOC_FAILED'. ...]"),
        ("RuntimeError", "the kernel reported CUDA error(2) once and recovered"),
        # aiohttp's 4xx of the request's own, its other classes; another client's "Server disconnected"
        ("aiohttp.client_exceptions.ClientResponseError", "404, message='Not Found', url='https://data.example.org/a.bin'"),
        ("aiohttp.client_exceptions.ClientResponseError", "401, message='Unauthorized', url='https://api.example.org/v1'"),
        ("aiohttp.client_exceptions.ContentTypeError", "0, message='Attempt to decode JSON with unexpected mimetype: text/html'"),
        ("RuntimeError", "Server disconnected"),
        # DCP's other async messages
        ("RuntimeError", "async_save requires a CPU backend process group"),
    ],
)
def test_near_misses_of_the_h32c_trace_rules(exc_type, message):
    found = first_trace_rule(exc_type, message)
    assert found is None or found.name not in H32C_TRACE_RULES, found.name


def test_an_error_raised_through_s3fss_error_wrapper_is_the_object_stores():
    frames = ["/opt/conda/lib/python3.10/site-packages/fsspec/asyn.py:sync",
              "/opt/conda/lib/python3.10/site-packages/s3fs/core.py:_error_wrapper"]
    for exc_type, message in (("OSError", "[Errno 16] Please reduce your request rate."),
                              ("PermissionError", "Access Denied"), ("TimeoutError", "Your socket connection to the server was not read")):
        found = first_trace_rule(exc_type, message, frames)
        assert found is not None and (found.name, found.category) == ("s3fs_error_wrapper", "storage_io")
    # near misses: s3fs's other functions (its own argument checks), the same error without s3fs's frames
    found = first_trace_rule("ValueError", "Invalid bucket name", ["/opt/conda/lib/python3.10/site-packages/s3fs/core.py:split_path"])
    assert found is None or found.name != "s3fs_error_wrapper"
    found = first_trace_rule("OSError", "[Errno 16] Please reduce your request rate.", ["/workspace/io.py:read"])
    assert found is None or found.name != "s3fs_error_wrapper"


# --- whole logs: Paddle's enforce errors

PADDLE_OOM = ("Out of memory error on GPU 0. Cannot allocate 1.250000GB memory on GPU 0, 38.714844GB memory has been allocated and "
              "available memory is only 795.375000MB.\n\nPlease check whether there is any other process using GPU 0.\n")


@pytest.mark.parametrize("prefix", ["", "[rank3]: "])
def test_paddles_fatal_operator_wrapper_is_read_by_the_words_below_it(tmp_path, prefix):
    body = ("SystemError: (Fatal) Operator matmul_v2 raises an paddle::memory::allocation::BadAlloc exception.\nThe exception content is\n"
            ":ResourceExhaustedError: \n\n" + PADDLE_OOM)
    text = STEP + "".join(prefix + line + "\n" for line in (TB + body).split("\n"))
    assert the_diagnosis(tmp_path, text).category == "cuda_oom"


def test_paddles_fatal_operator_wrapper_with_nothing_below_stays_an_exception(tmp_path):
    # near miss: the wrapper with no failure of its own category below it
    text = STEP + TB + ("SystemError: (Fatal) Operator relu raises an std::runtime_error exception.\nThe exception content is\n"
                        ":bad things happened.\n")
    assert the_diagnosis(tmp_path, text).category == "python_exception"


def test_an_exception_line_that_only_names_an_operator_is_no_announcement(tmp_path):
    # near miss: the words "(Fatal) Operator" in another message, a GPU OOM line below it after a blank line
    text = STEP + TB + "SystemError: (Fatal) Operator matmul_v2 failed its shape check.\n\n" + PADDLE_OOM
    assert the_diagnosis(tmp_path, text).category == "python_exception"


@pytest.mark.parametrize(
    "line, announces",
    [("SystemError: (Fatal) Operator matmul_v2 raises an paddle::memory::allocation::BadAlloc exception.", True),
     ("[rank1]: SystemError: (Fatal) Operator conv2d raises an struct paddle::memory::allocation::BadAlloc exception.", True),
     ("SystemError: (Fatal) Operator relu raises an std::runtime_error exception.", True),
     # near misses: other words after the operator, no type before it, the tag of another error type
     ("SystemError: (Fatal) Operator matmul_v2 failed its shape check.", False),
     ("(Fatal) Operator matmul_v2 raises an std::bad_alloc exception.", False),
     ("RuntimeError: (PreconditionNotMet) Operator matmul_v2 raises an std::bad_alloc exception.", False)],
)
def test_what_announces_its_words_below(line, announces):
    from gangscope.pipeline.diagnose.root_cause import _announcing_line

    assert (_announcing_line(line) is not None) == announces


@pytest.mark.parametrize(
    "message, category",
    [("OSError: (External) CUDA error(2), out of memory. \n  [Hint: 'cudaErrorMemoryAllocation'. The API call failed because it was "
      "unable to allocate enough memory to perform the requested operation. ] (at /paddle/paddle/phi/backends/gpu/cuda/cuda_info.cc:275)",
      "cuda_oom"),
     ("OSError: (External) CUDA error(719), unspecified launch failure. \n  [Hint: 'cudaErrorLaunchFailure'. ...] (at /paddle/x.cc:1)",
      "cuda_error"),
     ("OSError: (External) NCCL error(2), unhandled system error. \n  [Hint: 'ncclSystemError'. A call to the system failed. ]",
      "nccl_error")],
)
def test_paddles_external_errors(tmp_path, message, category):
    assert the_diagnosis(tmp_path, STEP + TB + message + "\n").category == category


def test_paddles_summary_under_a_bare_oserror_is_read(tmp_path):
    text = (STEP + TB + "OSError: \n\n--------------------------------------\nC++ Traceback (most recent call last):\n"
            "--------------------------------------\n0   paddle::platform::GpuMemcpyAsync(void*, void const*, unsigned long)\n\n"
            "----------------------\nError Message Summary:\n----------------------\nExternalError: CUDA error(2), out of memory. \n"
            "  [Hint: 'cudaErrorMemoryAllocation'. ...] (at /paddle/paddle/phi/backends/gpu/cuda/cuda_info.cc:275)\n\n")
    assert the_diagnosis(tmp_path, text).category == "cuda_oom"


# --- whole logs: the storage clients and DCP

def test_s3fs_slow_down_is_the_object_store(tmp_path):
    text = (STEP + TB + '  File "/opt/conda/lib/python3.10/site-packages/s3fs/core.py", line 140, in _error_wrapper\n    raise err\n'
            "OSError: [Errno 16] Please reduce your request rate.\n")
    assert the_diagnosis(tmp_path, text).category == "storage_io"


def test_aiohttp_server_error_fetching_a_shard_is_storage(tmp_path):
    text = (STEP + TB + "aiohttp.client_exceptions.ClientResponseError: 502, message='Bad Gateway', "
            "url='https://data.example.org/shards/000017.tar'\n")
    assert the_diagnosis(tmp_path, text).category == "storage_io"


def test_aiohttp_not_found_stays_an_exception(tmp_path):
    # near miss: a 404 is the request's own (fsspec raises FileNotFoundError for it; a direct client keeps the 404)
    text = STEP + TB + "aiohttp.client_exceptions.ClientResponseError: 404, message='Not Found', url='https://api.example.org/v1/x'\n"
    assert the_diagnosis(tmp_path, text).category != "storage_io"


def test_dcp_async_save_without_a_cpu_backend_is_a_checkpoint_error(tmp_path):
    text = (STEP + TB + "AssertionError: A CPU backend must be enabled for async save; try initializing process group with "
            "'cpu:gloo,cuda:nccl'\n")
    assert the_diagnosis(tmp_path, text).category == "checkpoint_error"
