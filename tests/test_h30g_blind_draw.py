"""Rules from batch h30g of issue 16 (fixtures/eval README, "Batch h30g"): a sixth blind draw from GitHub issue threads
shaped like the judged set.

One class of its misses shows its cause in the log and has a rule:
- nnU-Net v2's end-of-epoch record of a NaN training loss: its trainer's print_to_log_file writes
  "<YYYY-MM-DD HH:MM:SS.ffffff>: train_loss nan" (the epoch's mean loss through np.round) and the run goes on to the next
  epoch, so the log ends in healthy-looking records and read as `running` (dev 1254, U-Mamba's copy of the trainer).
  Rule nnunet_train_loss_nonfinite (parsers/errors.py). Its `val_loss` record alone is not read.
The lines below are rebuilt from nnU-Net's format strings with our values, not copied from the fixture."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis

from gangscope.parsers import errors


def epoch(ts: str, n: int, train: str, val: str) -> str:
    """One epoch of nnU-Net v2's log as nnUNetTrainer.on_train_epoch_start / on_epoch_end print it (print_to_log_file:
    the timestamp, ":", the arguments joined by spaces)."""
    return (
        f"{ts}: \n"
        f"{ts}: Epoch {n}\n"
        f"{ts}: Current learning rate: 0.00982\n"
        f"{ts}: train_loss {train}\n"
        f"{ts}: val_loss {val}\n"
        f"{ts}: Pseudo dice [np.float32(0.0), np.float32(0.0)]\n"
        f"{ts}: Epoch time: 412.31 s\n"
    )


START = "using pin_memory on device 0\nusing pin_memory on device 0\n"


@pytest.mark.parametrize(
    "ts, value",
    [
        ("2026-03-02 04:18:09.551204", "nan"),
        ("2026-03-02 04:18:09", "nan"),  # datetime's str() drops a zero microsecond
        ("2025-11-30 23:59:58.000417", "inf"),
        ("2025-11-30 23:59:58.000417", "-inf"),
    ],
)  # fmt: skip
def test_a_nonfinite_epoch_training_loss_is_the_divergence(tmp_path, ts, value):
    text = START + epoch(ts, 0, value, value) + epoch(ts, 1, value, "nan")
    d = the_diagnosis(tmp_path, text)
    assert d.category == "nan_loss", d.summary
    found = errors.detect(f"{ts}: train_loss {value}")
    assert found and found[0].name == "nnunet_train_loss_nonfinite"


@pytest.mark.parametrize(
    "train, val",
    [
        # near misses: a finite training loss, whatever the validation printed
        ("-0.4127", "nan"),  # a NaN validation loss alone (fp16 inference) leaves training sound
        ("0.0312", "-0.2291"),
    ],
)  # fmt: skip
def test_a_finite_training_loss_is_no_divergence(tmp_path, train, val):
    text = START + epoch("2026-03-02 04:18:09.551204", 0, train, val) + epoch("2026-03-02 04:25:01.100342", 1, train, val)
    d = the_diagnosis(tmp_path, text)
    assert d.category == "running", d.summary
    found = errors.detect(f"2026-03-02 04:18:09.551204: val_loss {val}") or []
    assert not any(f.name == "nnunet_train_loss_nonfinite" for f in found)


def test_the_record_needs_its_timestamp():
    # the words without print_to_log_file's timestamp are not this rule's (another writer's line)
    assert not any(f.name == "nnunet_train_loss_nonfinite" for f in (errors.detect("train_loss nan") or []))
