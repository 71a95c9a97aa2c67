"""Rules from batch h31b of issue 16 (fixtures/eval README, "Batch h31b"): a third blind draw with no project named, the
queries only a symptom or a pasted line as a user titles a thread.

One class of its misses shows its cause in the log: faceswap's own out-of-GPU-memory message. Its trainer catches the
backend's device-memory error (TensorFlow's ResourceExhaustedError, torch's OutOfMemoryError, PlaidML's allocation
failure) and raises FaceswapError("You do not have enough GPU memory available to train the selected model at the
selected settings. You can try a number of things:\\n1) ..."); the launcher logs it line by line at ERROR
(deepfakes/faceswap plugins/train/trainer/_base.py, lib/cli/launcher.py ScriptExecutor.execute_script). The library's
exception is not printed, so the message is the cause: cuda_oom (parsers/errors.py faceswap_gpu_oom).
The lines below are rebuilt from faceswap's format strings with our values, not copied from the fixture."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis
from rule_reference import detected, found

# faceswap's lib/logger.py format: "%(asctime)s %(processName)-15s %(threadName)-15s %(module)-15s %(funcName)-25s
# %(levelname)-8s %(message)s", datefmt "%m/%d/%Y %H:%M:%S"
HEAD = "03/17/2022 21:04:55 MainProcess     MainThread      launcher        execute_script            ERROR    "
MESSAGE = ("You do not have enough GPU memory available to train the selected model at the selected settings. You can try a "
           "number of things:")
HINTS = (
    "1) Close any other application that is using your GPU (web browsers are particularly bad for this).",
    "2) Lower the batchsize (the amount of images fed into the model each iteration).",
    "3) Try enabling 'Mixed Precision' training.",
    "4) Use a more lightweight model, or select the model's 'LowMem' option (in config) if it has one.",
)
# the trainer's loss print (_base.py _print_loss: f"[{timestamp}] [#{iterations:05d}] Loss A: ..., Loss B: ...")
LOSSES = "".join(f"[21:04:{10 + i:02d}] [#{i + 1:05d}] Loss A: 0.{412 - i:03d}17, Loss B: 0.{388 - i:03d}40\n" for i in range(8))


@pytest.mark.parametrize(
    "line, hit",
    [
        # the launcher's line (older releases log under the module "cli"), and the message alone as the GUI shows it
        (HEAD + MESSAGE, ("faceswap_gpu_oom", "cuda_oom")),
        (HEAD.replace("launcher        ", "cli             ") + MESSAGE, ("faceswap_gpu_oom", "cuda_oom")),
        ("ERROR    " + MESSAGE, ("faceswap_gpu_oom", "cuda_oom")),
        # PlaidML's (AMD) wording of the same message: the same words before "at the selected settings"
        (HEAD + "You do not have enough GPU memory available to train the selected model at the selected settings. You can "
         "try a number of things:", ("faceswap_gpu_oom", "cuda_oom")),
        # near misses: the numbered hints after it are no failure of their own, nor a sentence about memory
        (HEAD + HINTS[0], None),
        (HEAD + HINTS[1], None),
        (HEAD + HINTS[3], None),
        ("You do not have enough GPU memory? Try a smaller batch size first.", None),
        ("Note: you do not have enough GPU memory available to train two models at once on this card", None),
    ],
)  # fmt: skip
def test_faceswaps_gpu_memory_line(line, hit):
    assert found(line) == hit


def test_the_line_passes_the_detectors_prefilter():
    assert detected(HEAD + MESSAGE) == ("faceswap_gpu_oom", "cuda_oom")


@pytest.mark.parametrize(
    "text, category",
    [
        # the run's loss prints, then the launcher's message and its hints: the GPU's memory ran out
        (LOSSES + "".join(HEAD + line + "\n" for line in (MESSAGE, *HINTS)), "cuda_oom"),
        # the threaded trainer's form: the thread's exception caught, then the message
        (LOSSES + "03/17/2022 21:04:55 MainProcess     MainThread      train           _end_thread               CRITICAL Error "
         "caught! Exiting...\n03/17/2022 21:04:55 MainProcess     MainThread      multithreading  join                      "
         "ERROR    Caught exception in thread: '_training_0'\n" + HEAD + MESSAGE + "\n" + HEAD + HINTS[0] + "\n", "cuda_oom"),
        # the message at the first step, before any loss print
        ("".join(HEAD + line + "\n" for line in (MESSAGE, *HINTS)), "cuda_oom"),
        # near misses: the hints alone (the message cut off) and a run whose loss prints go on say nothing of memory
        (LOSSES + "".join(HEAD + line + "\n" for line in HINTS), "running"),
        (LOSSES, "running"),
    ],
)  # fmt: skip
def test_faceswaps_message_is_the_cause(tmp_path, text, category):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary


def test_a_cuda_oom_traceback_before_it_stays_cuda_oom(tmp_path):
    text = (LOSSES + "Traceback (most recent call last):\n  File \"/opt/faceswap/plugins/train/trainer/_base.py\", line 244, "
            "in train_one_step\n    loss = self._model.model.train_on_batch(model_inputs, y=model_targets)\n"
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a total capacity of 7.79 GiB "
            "of which 301.44 MiB is free.\n" + HEAD + MESSAGE + "\n")
    d = the_diagnosis(tmp_path, text)
    assert d.category == "cuda_oom", d.summary
