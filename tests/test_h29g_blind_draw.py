"""Rules from batch h29g of issue 16 (fixtures/eval README, "Batch h29g"): a blind draw from speech, video, 3D, graph,
RL, science and recsys threads.

Three classes of its misses show their cause in the log:
- a trainer's progress record whose loss is the running mean of the epoch (fatchord's WaveRNN / Tacotron trainers and the
  projects built on them, Real-Time-Voice-Cloning's vocoder and synthesizer): one NaN/Inf record is the divergence
  (parsers/errors.py wavernn_running_loss_nonfinite), where a plain loop's one printed NaN stays a warning;
- the TTS trainers' clean-up line, printed only from their exception / KeyboardInterrupt handlers (" ! Run is removed from",
  " ! Run is kept in"): the run stopped before its end (tts_run_folder_cleanup, a summary), and coqui's Trainer's own word
  for the interrupt (coqui_trainer_interrupted);
- torch's RandomSampler refusing a dataset of no samples (`num_samples=0`): a dataset error (trace rule empty_dataset_sampler).
The lines below are rebuilt from the libraries' format strings with our values, not copied from the fixtures."""

from __future__ import annotations

import re

import pytest

from diagnose_in_process import the_diagnosis
from rule_reference import found

from gangscope.parsers import errors

PREFILTER = re.compile(errors.PREFILTER)


@pytest.mark.parametrize(
    "line",
    [
        # RTVC's vocoder (stream() wraps the record in braces after a carriage return), NaN and Inf
        "{| Epoch: 2 (311/1402) | Loss: nan | 3.1 steps/s | Step: 1k | }",
        "{| Epoch: 7 (12/1402) | Loss: inf | 3.4 steps/s | Step: 9k | }",
        # fatchord's train_wavernn.py / train_tacotron.py and RTVC's synthesizer: "E/N" epochs, "#.4" / "#.2" formats
        "| Epoch: 4/250 (88/640) | Loss: nan | 0.87 steps/s | Step: 2k | ",
        # a copy cut after the loss
        "| Epoch: 1/50 (5/900) | Loss: nan",
    ],
)  # fmt: skip
def test_a_running_mean_loss_record_that_went_nonfinite(line):
    assert found(line) == ("wavernn_running_loss_nonfinite", "nan_loss")
    assert PREFILTER.search(line) is not None


@pytest.mark.parametrize(
    "line, rule",
    [
        # the same record with a finite loss: no failure
        ("{| Epoch: 2 (311/1402) | Loss: 0.3127 | 3.1 steps/s | Step: 1k | }", None),
        ("| Epoch: 4/250 (88/640) | Loss: 1.024 | 0.87 steps/s | Step: 2k | ", None),
        # another loop's loss printed NaN: the plain-print warning as before (one line can be a skipped step)
        ("Epoch: 2 | Loss: nan | lr: 0.0001", "loss_printed_nonfinite"),
        # a validation line of the same shape is not the record
        ("| Epoch: 2 | Val Loss: nan |", "loss_printed_nonfinite"),
    ],
)  # fmt: skip
def test_running_mean_near_misses(line, rule):
    assert (found(line) or (None,))[0] == rule


RTVC_START = ("Found 120034 samples\n"
              "+------------+--------+--------------+\n"
              "| Batch size |   LR   | Sequence Len |\n"
              "+------------+--------+--------------+\n"
              "|    100     | 0.0001 |     1000     |\n"
              "+------------+--------+--------------+\n"
              " \n")  # fmt: skip


@pytest.mark.parametrize(
    "tail, category",
    [
        # one record, NaN (dev 1141's shape): the running mean went NaN, the divergence
        ("{| Epoch: 1 (640/1180) | Loss: nan | 2.1 steps/s | Step: 0k | }\n", "nan_loss"),
        # finite records then the NaN one, on one line as a terminal's carriage returns leave them
        ("{| Epoch: 1 (1/1180) | Loss: 4.5512 | 2.0 steps/s | Step: 0k | }\r{| Epoch: 1 (2/1180) | Loss: nan | 2.0 steps/s "
         "| Step: 0k | }\n", "nan_loss"),
        # near miss: finite records only, cut: running
        ("{| Epoch: 1 (640/1180) | Loss: 3.9021 | 2.1 steps/s | Step: 0k | }\n", "running"),
    ],
)  # fmt: skip
def test_the_record_in_a_log(tmp_path, tail, category):
    d = the_diagnosis(tmp_path, RTVC_START + tail)
    assert d.category == category, d.summary


@pytest.mark.parametrize(
    "line",
    [
        " ! Run is removed from /home/tts/Models/LJSpeech/ljspeech-ddc-March-02-2023_10+14AM-4f2a9c1",
        " ! Run is kept in /srv/runs/vits_vctk-May-11-2024_03+22PM-0000000",
        "\t ! Run is removed from /data/tts/Models/tacotron-July-01-2020_08+00AM",  # the oldest scripts' tab
        # coqui Trainer's logger (its own handler prints the message alone; a basic format puts the level first)
        "INFO:trainer.generic_utils: ! Run is removed from /srv/runs/xtts_ft-June-03-2025_11+40AM-b2c1d3e".split(":", 2)[2],
    ],
)  # fmt: skip
def test_the_tts_trainers_cleanup_line(line):
    assert found(line) == ("tts_run_folder_cleanup", "unknown")  # a warning, a failure as the last word
    assert PREFILTER.search(line) is not None


@pytest.mark.parametrize(
    "line",
    [
        "Run is removed from the queue when it finishes",  # prose, no "!"
        " ! Run is being prepared",  # another word after "Run is"
        "# ! Run is removed from <path> when no checkpoint exists",  # a comment quoting it, not at the margin
    ],
)  # fmt: skip
def test_cleanup_near_misses(line):
    assert (found(line) or ("",))[0] != "tts_run_folder_cleanup"


TTS_START = (" > Using CUDA:  True\n"
             " > Number of GPUs:  1\n"
             " > Experiment folder: /srv/tts/Models/LJSpeech/ljspeech-ddc-March-02-2023_10+14AM-4f2a9c1\n"
             " > Setting up Audio Processor...\n"
             " | > sample_rate:22050\n")  # fmt: skip
CLEANUP = " ! Run is removed from /srv/tts/Models/LJSpeech/ljspeech-ddc-March-02-2023_10+14AM-4f2a9c1\n"


@pytest.mark.parametrize(
    "text, category",
    [
        # the clean-up line, then the copy's cut (dev 1128's shape): it stopped before its end, the cause not shown
        (TTS_START + CLEANUP, "unknown"),
        # the exception handler's traceback after it says why: the exception wins over the summary
        (TTS_START + CLEANUP + "Traceback (most recent call last):\n"
         '  File "TTS/bin/train_tacotron.py", line 690, in <module>\n'
         "    main(args)\n"
         '  File "/opt/tts/TTS/utils/audio.py", line 107, in load_wav\n'
         "    x, sr = sf.read(filename)\n"
         "RuntimeError: CUDA out of memory. Tried to allocate 120.00 MiB (GPU 0; 10.76 GiB total capacity; 9.61 GiB already "
         "allocated; 21.12 MiB free; 9.80 GiB reserved in total by PyTorch)\n", "cuda_oom"),
        # coqui Trainer's interrupt: its own word before the clean-up line, preempted
        (TTS_START + " > Keyboard interrupt detected.\n > Saving model before exiting...\n" + CLEANUP, "preempted"),
        # near miss: the same start-up, no clean-up line: running
        (TTS_START, "running"),
    ],
)  # fmt: skip
def test_the_cleanup_line_in_a_log(tmp_path, text, category):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary


def test_the_handlers_traceback_cut_after_the_cleanup_line_is_the_answer(tmp_path):
    # dev 886's shape: the clean-up line, then traceback.print_exc()'s traceback cut before its exception line
    text = (TTS_START + CLEANUP + "Traceback (most recent call last):\n"
            '  File "train.py", line 676, in <module>\n'
            "    main(args)\n"
            '  File "train.py", line 591, in main\n'
            "    global_step, epoch)\n"
            '  File "/srv/tts/TTS/tra\n')  # fmt: skip
    d = the_diagnosis(tmp_path, text)
    assert d.category == "unknown"
    assert "traceback cut before its exception line" in d.summary, d.summary


SAMPLER = ("Traceback (most recent call last):\n"
           '  File "/opt/proj/train.py", line 38, in train_model\n'
           "    loader = DataLoader(dataset, batch_size=batch_size, num_workers=workers, shuffle=True)\n"
           '  File "/opt/venv/lib/python3.10/site-packages/torch/utils/data/dataloader.py", line 351, in __init__\n'
           "    sampler = RandomSampler(dataset, generator=generator)  # type: ignore[arg-type]\n"
           '  File "/opt/venv/lib/python3.10/site-packages/torch/utils/data/sampler.py", line 107, in __init__\n'
           '    raise ValueError(f"num_samples should be a positive integer value, but got num_samples={{self.num_samples}}")\n'
           "ValueError: num_samples should be a positive integer value, but got num_samples={}\n")  # fmt: skip


@pytest.mark.parametrize(
    "value, after, category",
    [
        ("0", "", "dataloader_error"),  # an empty dataset
        ("0", "Task 0 died with exit code 1\n", "dataloader_error"),  # demucs's launcher line after it (dev 1140's shape)
        # near misses: a num_samples the user passed wrong is the user's configuration, as before
        ("-1", "", "python_exception"),
        ("1000.0", "", "python_exception"),
        ("0.5", "", "python_exception"),
    ],
)  # fmt: skip
def test_an_empty_dataset_refused_by_the_sampler(tmp_path, value, after, category):
    d = the_diagnosis(tmp_path, "Experiment musdb=train\n" + SAMPLER.format(value) + after)
    assert d.category == category, d.summary
