"""Rules from batch h33b of issue 16 (fixtures/eval README, "Batch h33b"): a blind draw from the fine-tuning stacks of the
Chinese-language ecosystem (Paddle, Megatron forks, LLaMA-Factory, ms-swift, Ascend NPU runs, Chinese LLM repos).

One class of its misses: a DataLoader's reader polls its workers' result queue with a timeout and, on queue.Empty, checks
its workers; a dead worker makes it raise its own RuntimeError inside that except block, a live one sends it back to
polling (the Empty is swallowed: PaddlePaddle/Paddle python/paddle/io/dataloader/dataloader_iter.py, fluid/dataloader
before 2.5, _DataLoaderIterMultiProcess._get_data: "DataLoader {} workers exit unexpectedly, pids: {}"; pytorch/pytorch
torch/utils/data/dataloader.py _MultiProcessingDataLoaderIter._try_get_data: "DataLoader worker (pid(s) {}) exited
unexpectedly" from e). A queue.Empty printed with its traceback through that poll is therefore the first half of the
loader's failure report, and a paste that cuts the second half before its exception line leaves only the Empty (dev 1501,
Paddle's reader thread at exit). Trace rule dataloader_poll_empty reads it as dataloader_error. A queue.Empty raised
anywhere else is left to the generic reading, and the full reports keep their rules (a worker killed by signal first stays
host_oom). The lines below are rebuilt from the libraries' formats with our values, not copied from a fixture."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis

from gangscope.parsers import errors

PADDLE = ("/home/mlops/miniconda3/envs/pd/lib/python3.7/site-packages/paddle/fluid/dataloader/dataloader_iter.py",
          "/opt/conda/lib/python3.10/site-packages/paddle/io/dataloader/dataloader_iter.py",
          "C:\\Users\\trainer\\anaconda3\\envs\\pd\\lib\\site-packages\\paddle\\io\\dataloader\\dataloader_iter.py")
TORCH = ("/opt/conda/lib/python3.10/site-packages/torch/utils/data/dataloader.py",
         "D:\\envs\\det\\lib\\site-packages\\torch\\utils\\data\\dataloader.py")


def _lib(path: str) -> str:
    """The folder that holds the interpreter's own modules, beside site-packages."""
    sep = "\\" if "\\" in path else "/"
    return path.split(f"{sep}site-packages{sep}")[0]


def paddle_empty(path: str, thread: bool = True) -> list[str]:
    """Paddle's reader thread: the Empty of its timed get, then the handler's traceback header."""
    lib = _lib(path)
    sep = "\\" if "\\" in path else "/"
    return ([f"Exception in thread Thread-{27 if thread else 3}:"] if thread else []) + [
        "Traceback (most recent call last):",
        f'  File "{path}", line 583, in _get_data',
        "    data = self._data_queue.get(timeout=self._timeout)",
        f'  File "{lib}{sep}multiprocessing{sep}queues.py", line 105, in get',
        "    raise Empty",
        "_queue.Empty",
        "",
        "During handling of the above exception, another exception occurred:",
        "",
        "Traceback (most recent call last):",
        f'  File "{lib}{sep}threading.py", line 926, in _bootstrap_inner',
        "    self.run()",
    ]


# where the copy of the second traceback ends: after its header's first frame, mid-path, mid-function-name
CUTS = (
    [],
    ['  File "/opt/conda/lib/python3.10/site-packages/pa'],
    ['  File "/opt/conda/lib/python3.10/threading.py", line 870, in run',
     "    self._target(*self._args, **self._kwargs)",
     '  File "/opt/conda/lib/python3.10/site-packages/paddle/io/dataloader/dataloader_iter.py", line 534, in _t'],
)


@pytest.mark.parametrize("path", PADDLE)
@pytest.mark.parametrize("cut", range(len(CUTS)))
def test_paddle_s_reader_empty_cut_before_the_loader_s_report_is_a_dataloader_failure(tmp_path, path, cut):
    text = "\n".join(paddle_empty(path) + CUTS[cut]) + "\n"
    d = the_diagnosis(tmp_path, text)
    assert d.category == "dataloader_error", d.summary


def test_after_the_end_of_training_lines(tmp_path):
    # dev 1501's shape: wandb's sync lines at exit, then the reader thread's report cut
    text = "\n".join([" Synced 4 W&B file(s), 0 media file(s), 1 artifact file(s) and 0 other file(s)",
                      "wandb: Find logs at: ./wandb/run-20250301_101500-ab12cd34/logs"]
                     + paddle_empty(PADDLE[1]) + CUTS[2]) + "\n"
    d = the_diagnosis(tmp_path, text)
    assert d.category == "dataloader_error", d.summary


def torch_report(path: str, raised: list[str], after: list[str]) -> str:
    """torch's poll: `raised` under its timed get, then the direct-cause header and the second traceback's `after`."""
    return "\n".join([
        "Traceback (most recent call last):",
        f'  File "{path}", line 1133, in _try_get_data',
        "    data = self._data_queue.get(timeout=timeout)",
        *raised,
        "",
        "The above exception was the direct cause of the following exception:",
        "",
        "Traceback (most recent call last):",
        *after,
    ]) + "\n"


def torch_empty(path: str) -> list[str]:
    """The Empty of the timed get (multiprocessing/queues.py beside the interpreter's modules)."""
    lib = _lib(path)
    sep = "\\" if "\\" in path else "/"
    return [f'  File "{lib}{sep}multiprocessing{sep}queues.py", line 114, in get', "    raise Empty", "_queue.Empty"]


def torch_loader_raises(path: str, pids: str) -> list[str]:
    """The loader's own RuntimeError, raised from the Empty (or from a worker's failure) in _try_get_data."""
    return [f'  File "{path}", line 1146, in _try_get_data',
            "    raise RuntimeError(f'DataLoader worker (pid(s) {pids_str}) exited unexpectedly') from e",
            f"RuntimeError: DataLoader worker (pid(s) {pids}) exited unexpectedly"]


@pytest.mark.parametrize("path", TORCH)
def test_torch_s_poll_empty_cut_before_the_direct_cause_is_a_dataloader_failure(tmp_path, path):
    text = torch_report(path, torch_empty(path), ['  File "train.py", line 212, in <module>', "    main("])
    d = the_diagnosis(tmp_path, text)
    assert d.category == "dataloader_error", d.summary


@pytest.mark.parametrize("exc_type", ["_queue.Empty", "queue.Empty", "Empty"])
@pytest.mark.parametrize("frame", ["/x/paddle/fluid/dataloader/dataloader_iter.py:_get_data",
                                   "/x/paddle/io/dataloader/dataloader_iter.py:_DataLoaderIterMultiProcess._get_data",
                                   "/x/paddle/io/dataloader/dataloader_iter.py:_try_get_data",
                                   "/x/torch/utils/data/dataloader.py:_MultiProcessingDataLoaderIter._try_get_data"])
def test_the_rule_reads_the_type_through_the_poll(exc_type, frame):
    rule = errors.first_trace_rule(exc_type, "", [frame, "/usr/lib/python3.10/multiprocessing/queues.py:get"])
    assert rule is not None and rule.name == "dataloader_poll_empty" and rule.category == "dataloader_error", rule


@pytest.mark.parametrize("exc_type, frame", [
    ("_queue.Empty", "/usr/lib/python3.10/multiprocessing/queues.py:get"),  # a get of the user's own
    ("_queue.Empty", "/srv/app/data/loader.py:_get_data"),  # a project's own _get_data
    ("_queue.Empty", "/x/torch/utils/data/dataloader.py:_MultiProcessingDataLoaderIter._next_data"),
    ("pandas.errors.EmptyDataError", "/x/paddle/io/dataloader/dataloader_iter.py:_get_data"),
    ("RuntimeError", "/x/paddle/io/dataloader/dataloader_iter.py:_get_data"),
])
def test_near_misses_of_the_rule(exc_type, frame):
    rule = errors.first_trace_rule(exc_type, "", [frame])
    assert rule is None or rule.name != "dataloader_poll_empty", rule


def test_an_empty_of_the_user_s_own_queue_stays_a_python_exception(tmp_path):
    text = "\n".join([
        "Traceback (most recent call last):",
        '  File "/srv/app/rollout.py", line 88, in collect',
        "    item = self.results.get(timeout=30)",
        '  File "/usr/lib/python3.10/multiprocessing/queues.py", line 114, in get',
        "    raise Empty",
        "_queue.Empty",
    ]) + "\n"
    d = the_diagnosis(tmp_path, text)
    assert d.category != "dataloader_error", d.summary


def test_the_full_paddle_report_keeps_its_reading(tmp_path):
    text = "\n".join(paddle_empty(PADDLE[0]) + [
        '  File "/home/mlops/miniconda3/envs/pd/lib/python3.7/site-packages/paddle/fluid/dataloader/dataloader_iter.py", '
        "line 599, in _get_data",
        '    "pids: {}".format(len(failed_workers), pids))',
        "RuntimeError: DataLoader 2 workers exit unexpectedly, pids: 40121, 40123",
    ]) + "\n"
    d = the_diagnosis(tmp_path, text)
    assert d.category == "dataloader_error", d.summary
    # the Empty is the report's first half only: the loader's own words are quoted (TraceRule.last_link_only)
    assert "workers exit unexpectedly" in d.summary and "Empty" not in d.summary, d.summary


def test_the_full_torch_report_quotes_the_loader_s_words(tmp_path):
    text = torch_report(TORCH[0], torch_empty(TORCH[0]), torch_loader_raises(TORCH[0], "40517"))
    d = the_diagnosis(tmp_path, text)
    assert d.category == "dataloader_error", d.summary
    assert "exited unexpectedly" in d.summary and "Empty" not in d.summary, d.summary


def test_a_worker_killed_by_signal_before_the_empty_s_report_stays_host_oom(tmp_path):
    # dev 887's shape: the SIGCHLD handler's report of a worker killed by the kernel, chained under the poll's Empty
    text = torch_report(TORCH[0], [
        '  File "/opt/conda/lib/python3.10/multiprocessing/queues.py", line 113, in get',
        "    if not self._poll(timeout):",
        '  File "/opt/conda/lib/python3.10/site-packages/torch/utils/data/_utils/signal_handling.py", line 66, in handler',
        "    _error_if_any_worker_fails()",
        "RuntimeError: DataLoader worker (pid 51234) is killed by signal: Killed. ",
    ], torch_loader_raises(TORCH[0], "51234"))
    d = the_diagnosis(tmp_path, text)
    assert d.category == "host_oom", d.summary
