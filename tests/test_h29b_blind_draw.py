"""Rules from batch h29b of issue 16 (fixtures/eval README, "Batch h29b"): a blind draw with no project named, the
queries only a symptom as a user titles a thread.

Two classes of its misses show their cause in the log:
- rich's traceback panel whose title line the copy lost (an excerpt or a tail that starts inside the box): its frame
  lines ("│ <path>:<line> in <name> │", rich/traceback.py _render_stack) now start the trace as CPython's frame lines
  do when its header was cut off (parsers/traces.py START, trace_blocks._rendered / derender), so a box cut before its
  exception line is read by the frames it shows (rules.CUT_TRACEBACK_FRAMES) and one that closes by its exception line;
- ElasticDL's master on a worker pod whose phase turned Failed ("Got event MODIFIED, phase Failed for pod: <pod>",
  elasticdl/python/master k8s_worker_manager.py / pod_manager.py _event_cb): a launcher's word that a worker failed, the
  failure where nothing follows it (rules.TEARDOWN_AT_THE_END; parsers/errors.py elasticdl_pod_failed).
The lines below are rebuilt from the libraries' format strings with our values, not copied from the fixtures."""

from __future__ import annotations

import re

import pytest

from diagnose_in_process import the_diagnosis
from rule_reference import detected, found

from gangscope.parsers import errors

PREFILTER = re.compile(errors.PREFILTER)
W = 96  # the panel's inner width in these samples


def row(text: str = "") -> str:
    """One line inside rich's panel: its border, the text padded to the width, its right border."""
    return "│ " + text.ljust(W) + " │"


def frame(path: str, line: int, name: str, code: list[tuple[int, str]], at: int) -> list[str]:
    """A frame as rich/traceback.py _render_stack draws it: "path:line in name", then the code with "❱" on the line."""
    out = [row(f"{path}:{line} in {name}"), row()]
    for n, src in code:
        out.append(row(("❱ " if n == at else "  ") + f"{n:4d} │ {src}"))
    out.append(row())
    return out


TRAIN = frame("/srv/jobs/seg/train.py", 212, "train_one_epoch",
              [(210, "for step, batch in enumerate(loader):"), (211, "│   images = batch['image'].cuda()"),
               (212, "│   loss = model(images)")], 211)  # fmt: skip
NEXT_DATA = frame("/opt/venv/lib/python3.11/site-packages/torch/utils/data/dataloader.py", 1346, "_next_data",
                  [(1344, "│   │   │   else:"), (1345, "│   │   │   │   del self._task_info[idx]"),
                   (1346, "│   │   │   │   return self._process_data(data)")], 1346)  # fmt: skip
SAVE = frame("/opt/venv/lib/python3.11/site-packages/torch/serialization.py", 652, "save",
             [(650, "│   if _use_new_zipfile_serialization:"), (651, "│   │   with _open_zipfile_writer(f) as opened_zipfile:"),
              (652, "│   │   │   _save(obj, opened_zipfile, pickle_module, pickle_protocol, _disable_byteorder_record)")], 652)  # fmt: skip
MODEL = frame("/srv/jobs/seg/model.py", 88, "forward",
              [(87, "x = self.encoder(x)"), (88, "return self.head(x)")], 88)  # fmt: skip
END = "╰" + "─" * (W + 2) + "╯"
STEPS = "".join(f"epoch 2 step {s}/500 loss 0.{70 - s // 10:02d}\n" for s in range(100, 160, 20))


def box(*parts: list[str]) -> str:
    return "\n".join(line for part in parts for line in part) + "\n"


@pytest.mark.parametrize(
    "text, category",
    [
        # the copy starts inside the panel (its title and first frames lost) and is cut in the DataLoader's frames
        (box([row()], TRAIN, NEXT_DATA[:-2]), "dataloader_error"),
        # ... or in torch.save's: the checkpoint's save raised
        (STEPS + box([row()], TRAIN, SAVE), "checkpoint_error"),
        # near misses: frames that name no operation, cut: an exception was raised, the text does not say which (as before)
        (STEPS + box(TRAIN, MODEL), "unknown"),
        # the panel closes and the exception line follows: the exception's own line is the answer (as before)
        (STEPS + box(TRAIN, MODEL, [END]) + "RuntimeError: CUDA error: an illegal memory access was encountered\n", "cuda_error"),
        (box(TRAIN, NEXT_DATA, [END]) + "KeyError: Caught KeyError in DataLoader worker process 1.\n", "dataloader_error"),
        # a rich table (Lightning's RichModelSummary draws "│" columns), then steps: no traceback, the run goes on
        ("┃   ┃ Name    ┃ Type    ┃ Params ┃\n│ 0 │ encoder │ ResNet  │ 11.2 M │\n│ 1 │ head    │ Conv2d  │  1.3 K │\n"
         + STEPS, "running"),
    ],
)  # fmt: skip
def test_a_rich_panel_without_its_title(tmp_path, text, category):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary


ELASTICDL = "I0302 14:19:{:02d}.{:06d} 140316069484288 k8s_worker_manager.py:128] Got event {}, phase {} for pod: edl-mnist-worker-{}"


@pytest.mark.parametrize(
    "line, hit",
    [
        (ELASTICDL.format(23, 498604, "MODIFIED", "Failed", 0), ("elasticdl_pod_failed", "unknown")),
        # pod_manager.py's form (no glog head: the master's logger through Python logging)
        ("[2021-01-11 08:02:51,112] [INFO] [pod_manager.py:371:_event_cb] Got event MODIFIED, phase Failed for pod: "
         "elasticdl-job-worker-3", ("elasticdl_pod_failed", "unknown")),
        # near misses: the other phases are no failure, nor another library's "Got event" line
        (ELASTICDL.format(23, 498604, "ADDED", "Pending", 0), None),
        (ELASTICDL.format(23, 498604, "MODIFIED", "Running", 1), None),
        (ELASTICDL.format(23, 498604, "MODIFIED", "Succeeded", 1), None),
        ("Got event: phase Failed detected in the widget tree", None),
    ],
)  # fmt: skip
def test_elasticdls_pod_event(line, hit):
    assert found(line) == hit
    if hit is not None:
        assert PREFILTER.search(line) is not None  # the pipeline's cheap test lets the line through
        assert detected(line) == hit


FAILED = "".join(ELASTICDL.format(23, 498604 + 20000 * i, "MODIFIED", "Failed", 0) + "\n" for i in range(3))


@pytest.mark.parametrize(
    "text, category",
    [
        # the master's word that worker-0 failed, nothing after it: the attempt failed, the log does not say why
        (ELASTICDL.format(20, 100000, "MODIFIED", "Running", 0) + "\n" + FAILED, "unknown"),
        # near misses: the worker relaunched and the job trains on: no failure
        (FAILED + ELASTICDL.format(40, 0, "ADDED", "Pending", 2) + "\n" + ELASTICDL.format(41, 0, "MODIFIED", "Running", 2)
         + "\n" + STEPS, "running"),
        # a worker's own failure in the log is the cause, whatever the master says after it
        ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 15.77 GiB of "
         "which 1.02 GiB is free.\n" + FAILED, "cuda_oom"),
        # phases that are no failure, alone: still running
        (ELASTICDL.format(20, 100000, "ADDED", "Pending", 0) + "\n" + ELASTICDL.format(21, 0, "MODIFIED", "Running", 0) + "\n",
         "running"),
    ],
)  # fmt: skip
def test_a_failed_worker_pod_is_the_last_word_only(tmp_path, text, category):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary
