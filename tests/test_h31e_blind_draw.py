"""Rules from batch h31e of issue 16 (fixtures/eval README, "Batch h31e"): an eighth blind draw from GitHub issue threads
shaped like the judged set (language, speech, RL, science and time-series projects).

Two classes of its misses show their cause in the log and have a rule:
- THC's cuBLAS check as a line of its own: __THCublasCheck (torch/cutorch lib/THC/THCGeneral.c, pytorch/pytorch
  aten/src/THC/THCGeneral.cpp) raises _THError(file, line, "cublas runtime error : %s", errmsg) with " at <file>:<line>"
  appended; under Lua torch it reaches the log after Lua's "<script>.lua:<n>: ", no Python exception around it, and the
  log read as `running` (dev 1338, DIGITS' log). Line rule thc_cublas_runtime_error (parsers/errors.py).
- A process pool's carrier of a worker's traceback (concurrent.futures' and loky's `_RemoteTraceback`, multiprocessing.pool's
  `RemoteTraceback`) as the last exception of a cut print: the carrier's message is the worker's traceback between '\"\"\"'
  and the worker's exception is re-raised after it, so ending on the carrier the text was cut in the worker's traceback.
  It was named as the failure (`python_exception`, "_RemoteTraceback: \"\"") where the cause is not in the text: `unknown`
  (dev 1328, pycaret's loky). parsers/errors.py classify_trace.
The lines below are rebuilt from the printing sources' format strings with our values, not copied from the fixtures."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis

from gangscope.parsers import errors

AT = " at /home/build/cutorch/lib/THC/THCBlas.cu:"


@pytest.mark.parametrize(
    "line, category",
    [
        # Lua torch: luaL_error's position, then _THError's message and " at <file>:<line>"
        ("/opt/torch/share/lua/5.1/nn/Linear.lua:66: cublas runtime error : the GPU program failed to execute" + AT + "246",
         "cuda_error"),
        ("/opt/torch/share/lua/5.1/cunn/SpatialConvolutionMM.lua:41: cublas runtime error : an internal operation failed"
         + AT + "88", "cuda_error"),
        ("/usr/local/share/lua/5.1/nn/Bilinear.lua:117: cublas runtime error : library not initialized" + AT + "35",
         "cuda_error"),
        # CUBLAS_STATUS_ALLOC_FAILED: the device allocation inside cuBLAS
        ("/opt/torch/share/lua/5.1/nn/Linear.lua:66: cublas runtime error : resource allocation failed" + AT + "35",
         "cuda_oom"),
        # DIGITS' log record around it, and PyTorch 0.4-1.4's RuntimeError as a line of its own
        ("2017-02-14 08:03:51 [FAIL] /usr/share/lua/5.1/nn/Linear.lua:99: cublas runtime error : an access to GPU memory "
         "space failed" + AT + "211", "cuda_error"),
        ("RuntimeError: cublas runtime error : the GPU program failed to execute at /opt/conda/conda-bld/pytorch_1549/work/"
         "aten/src/THC/THCBlas.cu:259", "cuda_error"),
    ],
)  # fmt: skip
def test_thc_cublas_check_line(line, category):
    found = errors.detect(line)
    assert found is not None, line
    assert found[1] == category, found


@pytest.mark.parametrize(
    "line",
    [
        # near misses: not the check's fixed texts, or not its wording
        "/opt/torch/share/lua/5.1/nn/Linear.lua:66: cublas runtime error : see the log above",
        "cublas runtime error : the GPU program failed to execute",  # no ": " before it (prose quoting the text)
        "/opt/torch/share/lua/5.1/nn/Linear.lua:66: cusparse runtime error : the GPU program failed to execute" + AT + "12",
    ],
)  # fmt: skip
def test_thc_cublas_near_misses(line):
    found = errors.detect(line)
    assert found is None or found[0].name != "thc_cublas_runtime_error", found


def lua_run(error: str) -> str:
    """A DIGITS Torch7 training log (digits/tools/torch/main.lua's records) ending in the thread callback's error."""
    return (
        "2017-02-14 08:02:11 [INFO ] started training the model\n"
        "2017-02-14 08:03:51 [INFO ] Training (epoch 0.37): loss = 0.86431962251663, lr = 0.01\n"
        "2017-02-14 08:03:51 [FAIL] /usr/share/lua/5.1/threads/threads.lua:183: [thread 1 callback] "
        "/usr/share/lua/5.1/nn/Container.lua:67:\n"
        "In 3 module of nn.Sequential:\n"
        f"{error}\n"
        "stack traceback:\n"
        "[C]: in function 'addmm'\n"
        "/usr/share/lua/5.1/nn/Linear.lua:66: in function 'updateOutput'\n"
        "/usr/share/lua/5.1/nn/Container.lua:63: in function 'rethrowErrors'\n"
    )


def test_a_lua_torch_run_ending_in_the_cublas_check_is_a_cuda_error(tmp_path):
    d = the_diagnosis(tmp_path, lua_run("/usr/share/lua/5.1/nn/Linear.lua:66: cublas runtime error : the GPU program "
                                        "failed to execute" + AT + "246"))
    assert d.category == "cuda_error", d.summary


def test_a_lua_torch_run_ending_in_the_cublas_allocation_is_a_cuda_oom(tmp_path):
    d = the_diagnosis(tmp_path, lua_run("/usr/share/lua/5.1/nn/Linear.lua:66: cublas runtime error : resource allocation "
                                        "failed" + AT + "35"))
    assert d.category == "cuda_oom", d.summary


# --- process pools' remote tracebacks

LOKY = "/srv/envs/ts/lib/python3.9/site-packages/joblib/externals/loky/process_executor.py"
POOL = "/usr/lib/python3.10/multiprocessing/pool.py"
WORKER_FRAMES = (
    f'  File "{LOKY}", line 436, in _process_worker\n'
    "    r = call_item()\n"
    f'  File "{LOKY}", line 288, in __call__\n'
    "    return self.fn(*self.args, **self.kwargs)\n"
)


def futures_print(carrier: str, worker_exc: str | None, outer: str | None) -> str:
    """A pool's print (concurrent.futures / loky / multiprocessing.pool): the carrier's line, the worker's traceback between
    '\"\"\"' (cut where worker_exc is None), then the parent's own traceback and the re-raised exception."""
    text = f'{carrier}: \n"""\nTraceback (most recent call last):\n' + WORKER_FRAMES
    if worker_exc is None:
        return text + f'  File "{LOKY}", line 595, in __call__\n    return self.func(*args,\n'
    text += f'{worker_exc}\n"""\n\nThe above exception was the direct cause of the following exception:\n\n'
    text += 'Traceback (most recent call last):\n  File "fit_models.py", line 41, in <module>\n    best = run_search(grid)\n'
    return text + (outer or worker_exc) + "\n"


@pytest.mark.parametrize(
    "carrier",
    ["joblib.externals.loky.process_executor._RemoteTraceback", "concurrent.futures.process._RemoteTraceback",
     "multiprocessing.pool.RemoteTraceback", "_RemoteTraceback"],
)  # fmt: skip
def test_a_print_cut_inside_the_workers_traceback_is_unknown(tmp_path, carrier):
    d = the_diagnosis(tmp_path, "fitting 12 candidate models\n" + futures_print(carrier, None, None))
    assert d.category == "unknown", d.summary


@pytest.mark.parametrize("carrier", ["_RemoteTraceback", "RemoteTraceback"])
def test_a_notebook_print_cut_inside_the_workers_traceback_is_unknown(tmp_path, carrier):
    # IPython's verbose traceback (IPython/core/ultratb.py): its rule of dashes, the exception's name padded to the right
    # of "Traceback (most recent call last)", then the print as above
    head = "-" * 75 + "\n" + f"{carrier:<42}Traceback (most recent call last)\n"
    d = the_diagnosis(tmp_path, head + futures_print(carrier, None, None))
    assert d.category == "unknown", d.summary


@pytest.mark.parametrize(
    "worker_exc, category",
    [
        # near misses: a whole print names the worker's exception, read as before
        ("ValueError: Found array with 0 sample(s) (shape=(0, 7)) while a minimum of 1 is required.", "python_exception"),
        ("OSError: [Errno 28] No space left on device: '/scratch/cache/fold_3.npy'", "storage_io"),
    ],
)  # fmt: skip
def test_a_whole_pool_print_keeps_the_workers_exception(tmp_path, worker_exc, category):
    text = "fitting 12 candidate models\n" + futures_print("concurrent.futures.process._RemoteTraceback", worker_exc, None)
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary
