"""Step lines -> step records, per dialect (parsers/steps.py, parsers/dialects.py).

Lines are real output (fixtures/dialects/) or built from the format strings in the
library sources cited in parsers/dialects.py, with our own values.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from gangscope.parsers import dialects
from gangscope.parsers.dialects import PREFILTER, ShapeCache
from gangscope.parsers.lines import Line, strip_rank_prefixes
from gangscope.parsers.records import ErrorRecord, StepRecord
from gangscope.parsers.steps import StepParser, TrainerLogFolder, fold_trainer_logs

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "dialects"
_PREFILTER = re.compile(PREFILTER).search


def parse_all(*texts: str, rank: int | None = None, parser: StepParser | None = None):
    """Feed texts as one stream the way the pipeline does (prefilter unless open), then close: every record."""
    p = parser or StepParser()
    out = []
    for i, text in enumerate(texts):
        if p.open or _PREFILTER(text):
            out += p.feed(Line(f"2024-05-01T12:00:{i:02d}Z", 0, text, rank))[1]
    return out + p.close()


def parse(*texts: str, rank: int | None = None, parser: StepParser | None = None):
    """The step records of `parse_all`."""
    return [r for r in parse_all(*texts, rank=rank, parser=parser) if isinstance(r, StepRecord)]


def one(*texts: str, **kw):
    recs = parse(*texts, **kw)
    assert len(recs) == 1, recs
    return recs[0]


# ---------------------------------------------------------------- Hugging Face Trainer


def test_trainer_logs_dict_with_formatted_values_is_a_step_without_a_step_number():
    r = one("{'loss': '5.366', 'grad_norm': '1.257', 'learning_rate': '0.00075', 'epoch': '0.2'}")
    assert (r.dialect, r.step, r.loss, r.grad_norm, r.learning_rate, r.epoch) == ("hf_trainer", None, 5.366, 1.257, 0.00075, 0.2)


def test_trainer_logs_dict_of_older_releases_keeps_the_learning_rate_as_printed():
    r = one("{'loss': 0.5514, 'grad_norm': 60.71231007728378, 'learning_rate': 4.366166304940326e-06, 'epoch': 0.09}")
    assert r.learning_rate == 4.366166304940326e-06 and r.grad_norm == 60.71231007728378


def test_trainer_nan_loss_is_kept():
    # SPEC rev. 2: a NaN field is null and named in `nonfinite` (msgspec would write a NaN as a bare null and the
    # divergence would vanish from the index), so this test asserted the NaN itself before
    r = one("{'loss': nan, 'grad_norm': nan, 'learning_rate': 0.001, 'epoch': 0.02}")
    assert (r.loss, r.grad_norm, r.learning_rate, r.nonfinite) == (None, None, 0.001, ["loss", "grad_norm"])


def test_trainer_extra_numbers_become_metrics():
    r = one("{'loss': '2.205', 'grad_norm': '2.641', 'learning_rate': '0.0001333', 'mean_token_accuracy': '0.6839', 'epoch': '2'}")
    assert r.metrics == {"mean_token_accuracy": 0.6839}


@pytest.mark.parametrize(
    "text",
    [
        "{'train_runtime': '13.79', 'train_samples_per_second': '11.6', 'train_steps_per_second': '1.45', 'train_loss': '4.951', 'epoch': '2'}",
        "{'eval_loss': '4.952', 'eval_runtime': '0.0991', 'eval_samples_per_second': '161.5', 'eval_steps_per_second': '20.18', 'epoch': '1'}",
    ],
    ids=["train summary", "eval"],
)
def test_trainer_summary_and_eval_dicts_are_not_steps(text):
    assert parse(text) == []


# ---------------------------------------------------------------- tqdm bars

BAR = "\r".join(
    [
        "  0%|          | 0/20 [00:00<?, ?it/s]",
        "  5%|▌         | 1/20 [00:00<00:18,  1.03it/s]",
        " 10%|█         | 2/20 [00:01<00:09,  1.92it/s]",
        " 10%|█         | 2/20 [00:01<00:09,  1.95it/s]",
        " 15%|█▌        | 3/20 [00:01<00:08,  2.10it/s]",
    ]
)


def test_bar_gives_one_record_per_step_with_its_last_state():
    recs = parse(BAR)
    assert [(r.step, r.total_steps, r.throughput, r.throughput_unit) for r in recs] == [
        (1, 20, 1.03, "it/s"),
        (2, 20, 1.95, "it/s"),
        (3, 20, 2.10, "it/s"),
    ]


def test_bar_at_zero_is_not_a_step():
    assert parse("  0%|          | 0/500 [00:00<?, ?it/s]") == []


def test_bar_slower_than_one_step_per_second_gives_step_time():
    r = one("  8%|██▌                           | 1999/24128 [1:52:09<20:27:23,  3.33s/it]")
    assert (r.step, r.step_time_s, r.throughput) == (1999, 3.33, None)
    assert r.metrics == {"elapsed_s": 6729.0, "eta_s": 73643.0}


def test_bars_with_another_total_in_the_stream_are_not_training_steps():
    recs = parse(BAR, "100%|██████████| 2/2 [00:00<00:00, 28.78it/s]\x1b[A")
    assert [r.step for r in recs] == [1, 2, 3]


def test_log_line_written_right_after_a_bar_state_is_read_too():
    text = (
        "  8%|██▌                           | 1999/24128 [1:52:09<20:27:23,  3.33s/it]"
        "[2021-11-26 03:07:16,494] [INFO] [logging.py:69:log_dist] [Rank 0] step=2000, skipped=1995, lr=[0.001, 0.001], mom=[0.0, 0.0]"
    )
    assert [(r.dialect, r.step) for r in parse(text)] == [("tqdm", 1999), ("deepspeed", 2000)]


# ---------------------------------------------------------------- the Trainer's dicts numbered from its bar

# fixtures/dialects/hf_trainer: the bar on stderr (one logical line), the dicts on stdout
TRAINER_BAR = "\r".join(
    [
        "",
        "  5%|▌         | 1/20 [00:00<00:18,  1.03it/s]",
        " 10%|█         | 2/20 [00:01<00:09,  1.92it/s]",
        " " * 46,
        "",
        " 10%|█         | 2/20 [00:01<00:09,  1.92it/s]",
        " 15%|█▌        | 3/20 [00:01<00:08,  2.10it/s]",
        " 20%|██        | 4/20 [00:01<00:05,  2.70it/s]",
        " " * 46,
        "",
        " 20%|██        | 4/20 [00:01<00:05,  2.70it/s]",
    ]
)
TRAINER_DICTS = (
    "{'loss': '5.366', 'grad_norm': '1.257', 'learning_rate': '0.00075', 'epoch': '0.2'}",
    "{'loss': '5.328', 'grad_norm': '1.395', 'learning_rate': '0.00225', 'epoch': '0.4'}",
)


def test_trainer_dicts_take_the_step_their_write_redrew_the_bar_at():
    records = parse(*TRAINER_DICTS) + parse(TRAINER_BAR)
    folded = fold_trainer_logs(records)
    assert [(r.dialect, r.step, r.total_steps, r.loss, r.throughput) for r in folded] == [
        ("hf_trainer", 2, 20, 5.366, 1.92),
        ("hf_trainer", 4, 20, 5.328, 2.70),
    ]


def test_write_that_does_not_fit_the_dicts_epoch_is_skipped():
    bar = TRAINER_BAR + "\r" + " " * 46 + "\r\r" + " 20%|██        | 4/20 [00:01<00:05,  2.70it/s]\r 30%|███       | 6/20 [00:02<00:06,  2.25it/s]\r" + " " * 46 + "\r\r 30%|███       | 6/20 [00:02<00:06,  2.25it/s]"
    dicts = TRAINER_DICTS + ("{'loss': '5.233', 'grad_norm': '1.466', 'learning_rate': '0.002812', 'epoch': '0.6'}",)
    folded = fold_trainer_logs(parse(*dicts) + parse(bar))
    assert [r.step for r in folded] == [2, 4, 6]


def test_trainer_dicts_wait_for_the_bar_when_it_comes_later():
    folder = TrainerLogFolder()
    assert folder.add(parse(*TRAINER_DICTS)) == []
    assert [r.step for r in folder.add(parse(TRAINER_BAR))] == [2, 4]
    assert folder.close() == []


# transformers trainer.py _inner_training_loop's plan (INFO, the examples' explicit format), then PrinterCallback's dicts
# (disable_tqdm: no bar at all). 375 steps over 3 epochs: 125 per epoch, logging_steps 10.
PLAN = (
    "[INFO|trainer.py:2128] 2024-05-01 12:00:00,123 >> ***** Running training *****",
    "[INFO|trainer.py:2129] 2024-05-01 12:00:00,123 >>   Num Epochs = 3",
    "[INFO|trainer.py:2133] 2024-05-01 12:00:00,123 >>   Gradient Accumulation steps = 1",
    "[INFO|trainer.py:2134] 2024-05-01 12:00:00,123 >>   Total optimization steps = 375",
)
PRINTED = (
    "{'loss': 2.3141, 'grad_norm': 1.9310795068740845, 'learning_rate': 4.8e-05, 'epoch': 0.08}",
    "{'loss': 2.1025, 'grad_norm': 1.5412, 'learning_rate': 4.6e-05, 'epoch': 0.16}",
)


def feed_folder(folder: TrainerLogFolder, *texts: str) -> list:
    """Each text through a StepParser of one stream, its records through `folder` as they come: what `add` returned."""
    p = StepParser()
    out = []
    for i, text in enumerate(texts):
        if p.open or _PREFILTER(text):
            out += folder.add(p.feed(Line(f"2024-05-01T12:00:{i:02d}Z", 0, text))[1])
    return out + folder.add(p.close())


def test_trainer_dicts_without_a_bar_are_numbered_from_the_runs_plan_as_they_come():
    folder = TrainerLogFolder()
    assert feed_folder(folder, *PLAN) == []  # the plan is no record of its own
    first = feed_folder(folder, PRINTED[0])  # released at once: nothing waits for a bar that never comes
    assert [(r.step, r.total_steps, r.loss) for r in first] == [(10, 375, 2.3141)]
    assert [r.step for r in feed_folder(folder, PRINTED[1])] == [20]
    assert folder.close() == []


def test_unsloth_banner_is_a_plan_too():
    folder = TrainerLogFolder()
    banner = ("   \\   /|    Num examples = 1,000 | Num Epochs = 3 | Total steps = 375",)
    assert [r.step for r in feed_folder(folder, *banner, *PRINTED)] == [10, 20]


def test_plan_the_epochs_contradict_leaves_the_dicts_to_the_bar():
    # max_steps=330 with 125 steps per epoch prints "Num Epochs = 3": 330 / 3 = 110 would put epoch 0.08 at step 8.8
    folder = TrainerLogFolder()
    plan = (PLAN[1], PLAN[3].replace("375", "330"))
    assert feed_folder(folder, *plan, *PRINTED) == []
    assert [(r.step, r.loss) for r in folder.close()] == [(None, 2.3141), (None, 2.1025)]


def test_plan_and_a_late_bar_agree_and_the_bar_records_are_dropped():
    folder = TrainerLogFolder()
    numbered = feed_folder(folder, *PLAN, *PRINTED)
    bar = " 5%|▌         | 20/375 [00:10<03:00,  1.97it/s]"
    assert [r.step for r in numbered] == [10, 20] and feed_folder(folder, bar) == [] and folder.close() == []


def test_bar_without_trainer_dicts_keeps_its_records():
    folder = TrainerLogFolder()
    recs = folder.add(parse(BAR)) + folder.close()
    assert [r.step for r in recs] == [1, 2, 3] and all("tqdm_writes" not in r.metrics for r in recs)


def test_bar_split_into_lines_by_torchrun_tee_still_marks_the_writes():
    # fixtures/dialects/hf_trainer_torchrun: torchrun --tee turns every "\r" into a line break
    bar_lines = [
        "[default0]: 20%|██        | 2/10 [00:00<00:00,  8.04it/s]",
        "[default0]:" + " " * 46,
        "[default0]:",
        "[default0]: 20%|██        | 2/10 [00:00<00:00,  8.04it/s][default0]:",
        "[default0]: 30%|███       | 3/10 [00:00<00:00,  8.39it/s][default0]:",
    ]
    p = StepParser()
    records = []
    for i, raw in enumerate(bar_lines):
        text, rank, local_rank = strip_rank_prefixes(raw)
        if p.open or _PREFILTER(text):
            records += p.feed(Line(f"2024-05-01T12:00:{i:02d}Z", 0, text, rank, local_rank))[1]
    records += p.close()
    dicts = parse("{'loss': '5.371', 'grad_norm': '0.9808', 'learning_rate': '0.00075', 'epoch': '0.2'}")
    assert [(r.step, r.loss) for r in fold_trainer_logs(dicts + records)] == [(2, 5.371)]


# ---------------------------------------------------------------- PyTorch Lightning

LIGHTNING_EPOCH_0 = "\r".join(
    [
        "",
        "Epoch 0:   0%|          | 0/12 [00:00<?, ?it/s]",
        "Epoch 0:   8%|▊         | 1/12 [00:00<00:00, 24.53it/s]",
        "Epoch 0:   8%|▊         | 1/12 [00:00<00:00, 24.32it/s, v_num=0, train_loss=0.712]",
        "Epoch 0:  17%|█▋        | 2/12 [00:00<00:00, 26.74it/s, v_num=0, train_loss=0.712]",
        "Epoch 0:  17%|█▋        | 2/12 [00:00<00:00, 26.64it/s, v_num=0, train_loss=0.693]",
    ]
)


def test_lightning_bar_gives_global_steps_with_the_loss_of_its_last_state():
    recs = parse(LIGHTNING_EPOCH_0)
    assert [(r.epoch, r.step, r.loss, r.throughput) for r in recs] == [(0, 1, 0.712, 24.32), (0, 2, 0.693, 26.64)]
    assert recs[1].metrics["epoch_step"] == 2 and recs[1].metrics["epoch_steps"] == 12
    assert "v_num" not in recs[1].metrics


def test_lightning_later_epochs_count_on_from_the_earlier_ones():
    r = one("Epoch 2: 100%|██████████| 12/12 [00:00<00:00, 55.33it/s, v_num=0, train_loss=0.0571, val_loss=0.263]")
    assert (r.step, r.loss, r.metrics["val_loss"]) == (36, 0.0571, 0.263)


def test_lightning_validation_and_sanity_bars_are_not_steps():
    assert parse(
        "Sanity Checking DataLoader 0:  50%|█████     | 1/2 [00:00<00:00, 160.53it/s]",
        "Validation DataLoader 0:  33%|███▎      | 1/3 [00:00<00:00, 160.53it/s]\x1b[A",
    ) == []


def test_lightning_rich_final_frame_is_one_step_with_its_wrapped_metrics():
    # fixtures/dialects/lightning_rich: rich prints the last frame once when there is no terminal
    r = one(
        "Epoch 2/2  ━━━━━━━━━━━━━━━━━ 12/12 0:00:00 • 0:00:00 41.38it/s v_num: 0.000     ",
        "                                                               train_loss: 0.057",
        "                                                               val_loss: 0.188  ",
    )
    assert (r.dialect, r.step, r.epoch, r.total_epochs, r.loss, r.throughput) == ("lightning_rich", 36, 2, 3, 0.057, 41.38)
    assert r.metrics["val_loss"] == 0.188


# ---------------------------------------------------------------- Keras


def _keras(n: int, loss: float) -> str:
    return f"\x1b[1m{n:2d}/40\x1b[0m \x1b[32m━━━━━━━━━━\x1b[0m\x1b[37m━━━━━━━━━━\x1b[0m \x1b[1m1s\x1b[0m 54ms/step - accuracy: 0.7336 - loss: {loss:.4f}"


def test_keras_bar_takes_its_epoch_from_the_header_and_counts_global_steps():
    bar = "\b" * 10 + "\r" + _keras(1, 1.0906) + "\b" * 80 + "\r" + _keras(40, 0.5211) + "\n"
    recs = parse("Epoch 2/3", bar)
    assert [(r.epoch, r.total_epochs, r.step, r.total_steps, r.loss, r.step_time_s) for r in recs] == [
        (2, 3, 41, 120, 1.0906, 0.054),
        (2, 3, 80, 120, 0.5211, 0.054),
    ]


def test_keras_verbose_2_line_is_a_step():
    r = one("Epoch 1/3", "40/40 - 2s - 52ms/step - accuracy: 0.7414 - loss: 0.5211 - val_accuracy: 0.8500 - val_loss: 0.3713")
    assert (r.step, r.loss, r.step_time_s, r.metrics["val_loss"], r.metrics["elapsed_s"]) == (40, 0.5211, 0.052, 0.3713, 2.0)


def test_keras_2_bar_with_eta_is_a_step():
    r = one("Epoch 1/30", " 61/82 [=====================>........] - ETA: 37s - loss: 0.6016 - accuracy: 0.9260")
    assert (r.step, r.loss, r.metrics["eta_s"]) == (61, 0.6016, 37.0)


# ---------------------------------------------------------------- Megatron-LM, DeepSpeed, torchtitan, NeMo, fairseq, Composer

MEGATRON = (
    " [2026-11-30 04:14:34.724316] iteration        5/     100 | consumed samples:          640 | elapsed time per iteration (ms): 1312.4 |"
    " throughput per GPU (TFLOP/s/GPU): 57.1 | learning rate: 3.000000E-05 | global batch size:   128 | lm loss: 9.656202E+00 |"
    " loss scale: 1.0 | grad norm: 2.941 | number of skipped iterations:   0 | number of nan iterations:   0 |"
)


def test_megatron_iteration_line():
    r = one(MEGATRON)
    assert (r.step, r.total_steps, r.loss, r.learning_rate, r.grad_norm) == (5, 100, 9.656202, 3e-05, 2.941)
    assert r.step_time_s == pytest.approx(1.3124)
    assert r.metrics["throughput per GPU (TFLOP/s/GPU)"] == 57.1 and r.metrics["loss scale"] == 1.0


def test_megatron_validation_line_is_not_a_step():
    assert parse(" validation loss at iteration 100 | lm loss value: 3.503689E+00 | lm loss PPL: 3.323782E+01 | ") == []


def test_deepspeed_progress_line_takes_the_first_param_groups_lr_and_the_logging_rank():
    r = one("[2025-03-05 15:22:53,001] [INFO] [logging.py:96:log_dist] [Rank 0] step=52, skipped=0, lr=[2.8743668759751049e-06, 1.5954902673043201e-06], mom=[[0.8, 0.28], [0.6, 0.23]]")
    assert (r.step, r.rank, r.learning_rate, r.metrics) == (52, 0, 2.8743668759751049e-06, {"skipped": 0.0, "lr_group1": 1.5954902673043201e-06})


def test_deepspeed_throughput_timer_line():
    r = one("[2026-11-30 04:14:37,126] [INFO] [timer.py:264:stop] epoch=0/micro_step=120/global_step=60, RunningAvgSamplesPerSec=27.73626367793904, CurrSamplesPerSec=27.993142312486203, MemAllocated=2.13GB, MaxMemAllocated=5.67GB")
    assert (r.step, r.epoch, r.throughput, r.throughput_unit) == (60, 0, 27.993142312486203, "samples/s")
    assert r.metrics["micro_step"] == 120 and r.metrics["MemAllocated"] == 2.13


def test_deepspeed_wall_clock_breakdown_is_not_a_step():
    assert parse("[Rank 0] time (ms) | fwd: 55.11 | bwd: 113.81 | bwd_inner: 79.53 | bwd_allreduce: 10.03 | step: 18.25") == []


def test_lines_about_the_same_step_of_the_same_rank_merge():
    r = one("step=10 loss=2.31", "step=10 lr=1e-4 grad_norm=0.5")
    assert (r.step, r.loss, r.learning_rate, r.grad_norm) == (10, 2.31, 1e-4, 0.5)


def test_torchtitan_colored_step_line():
    r = one(
        "[titan] 2026-11-30 04:14:39,484 - root - INFO - \x1b[31mstep:  5  \x1b[32mloss:  6.82150  \x1b[38;2;180;60;0mgrad_norm:  0.7787  "
        "\x1b[38;2;54;234;195mmemory:  1.35GiB(1.42%)  \x1b[34mtps: 32,454  \x1b[36mtflops: 1.20  \x1b[35mmfu: 0.12%\x1b[39m"
    )
    assert (r.step, r.loss, r.grad_norm, r.throughput, r.throughput_unit) == (5, 6.8215, 0.7787, 32454.0, "tokens/s")
    assert r.metrics == {"memory_gib": 1.35, "memory_pct": 1.42, "tflops": 1.2, "mfu": 0.12}


def test_torchtitan_validation_is_not_a_step():
    assert parse("[titan] 2026-11-30 04:14:40,200 - root - INFO - \x1b[33mvalidate step: 40  \x1b[32mloss:  4.4019  \x1b[38;2;54;234;195mmemory:  1.35GiB(1.42%)  \x1b[34mtps: 81,203\x1b[39m") == []


def test_nemo_progress_printer_line():
    r = one("Training epoch 0, iteration 3/59 | lr: 0.00024 | consumed_samples: 128 | global_batch_size: 32 | global_step: 3 | reduced_train_loss: 9.674 | train_step_timing in s: 0.07611")
    # the 0-based iteration 3 of 0..59 is the 4th optimizer step of 60 (SPEC: `step` is the global optimizer step)
    assert (r.epoch, r.step, r.total_steps, r.loss, r.learning_rate, r.step_time_s) == (0, 4, 60, 9.674, 0.00024, 0.07611)


def test_nemo_validation_progress_is_not_a_step():
    assert parse("Validation: iteration 1/4", "Sanity checking Validation: iteration 1/2") == []


def test_fairseq_train_inner_line_counts_updates():
    r = one(
        "2026-11-30 04:14:43 | INFO | train_inner | epoch 001:     10 / 50 loss=11.104, nll_loss=10.204, ppl=1179.33, wps=42169, ups=11.63, "
        "wpb=3559.3, bsz=125.4, num_updates=10, lr=0.000125, gnorm=1.919, loss_scale=64, train_wall=1, gb_free=7, wall=1"
    )
    assert (r.epoch, r.step, r.loss, r.learning_rate, r.grad_norm, r.throughput, r.throughput_unit) == (1, 10, 11.104, 0.000125, 1.919, 42169.0, "words/s")
    assert r.metrics["epoch_step"] == 10 and r.metrics["nll_loss"] == 10.204


def test_fairseq_epoch_summary_and_validation_are_not_steps():
    assert parse(
        "2026-11-30 04:14:45 | INFO | train | epoch 002 | loss 5.927 | nll_loss 5.027 | ppl 32.61 | wps 42110.1 | ups 11.77 | num_updates 100 | lr 0.000316228",
        "2026-11-30 04:14:45 | INFO | valid | epoch 002 | valid on 'valid' subset | loss 5.827 | nll_loss 4.927 | ppl 30.43 | num_updates 100 | best_loss 5.827",
    ) == []


def test_composer_block_is_one_step():
    recs = parse(
        "[epoch=2][batch=5/20]:",
        "\t Train lr-DecoupledSGDW/group0: 0.0900",
        "\t Train throughput/samples_per_sec: 3175.9996",
        "\t Train time/batch: 24",
        "\t Train loss/train/total: 2.0909",
        "[Eval batch=1/5] Eval on eval data",
    )
    assert [(r.epoch, r.step, r.loss, r.learning_rate, r.throughput, r.throughput_unit) for r in recs] == [
        (2, 25, 2.0909, 0.09, 3175.9996, "samples/s")
    ]
    assert recs[0].metrics["Train time/batch"] == 24


def test_composer_parser_is_open_inside_a_block():
    p = StepParser()
    p.feed(Line("2024-05-01T12:00:00Z", 0, "[epoch=1][batch=1/20]:"))
    assert p.open
    p.feed(Line("2024-05-01T12:00:00Z", 1, "\t Train loss/train/total: 2.3338"))
    p.feed(Line("2024-05-01T12:00:01Z", 0, "epoch done"))
    assert not p.open


# ---------------------------------------------------------------- plain loops (generic)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("epoch 1/3 step 10/20 loss 0.4012", (1, 3, 10, 60, 0.4012, None)),
        ("Epoch [1/3], Step [10/20], Loss: 0.4012", (1, 3, 10, 60, 0.4012, None)),
        ("step=10 loss=0.4012 lr=0.0009755282581475769", (None, None, 10, None, 0.4012, 0.0009755282581475769)),
        ("2026-11-30 04:23:28,772 INFO epoch: 1 | step: 10 | loss: 0.4012 | lr: 9.455e-04 | step_time: 0.012s | samples/s: 1956.4", (1, None, 10, None, 0.4012, 9.455e-04)),
        ("11/30/2026 04:24:19 - INFO - __main__ - [RANK 0] step=5 loss=0.7230 lr=0.0009890738003669028", (None, None, 5, None, 0.723, 0.0009890738003669028)),
    ],
    ids=["slash", "brackets", "kv", "pipes", "accelerate logger"],
)
def test_plain_loop_forms(text, expected):
    r = one(text)
    assert (r.epoch, r.total_epochs, r.step, r.total_steps, r.loss, r.learning_rate) == expected
    assert r.dialect == "generic"


def test_plain_loop_nan_loss_is_a_step():
    r = one("epoch 1/3 step 7/20 loss nan")
    assert r.step == 7 and r.loss is None and r.nonfinite == ["loss"]  # SPEC rev. 2 (was: the NaN itself)


def test_plain_loop_counting_batches_is_a_step_when_it_has_a_loss():
    r = one("Epoch [1/10], Batch [100/500], Loss: 2.3012")
    assert (r.step, r.loss) == (100, 2.3012)


def test_data_loader_batch_line_is_not_a_step():
    p = StepParser()
    assert p.feed(Line("2024-05-01T12:00:00Z", 0, "batch 517 tokens 8123 padding 12%"))[1] + p.close() == []


def test_plain_loop_units_are_converted_and_named():
    r = one("2026-11-30 04:23:28,772 INFO epoch: 1 | step: 10 | loss: 0.4012 | lr: 9.455e-04 | step_time: 0.012s | samples/s: 1956.4")
    assert (r.step_time_s, r.throughput, r.throughput_unit) == (0.012, 1956.4, "samples/s")


def test_nanogpt_iteration_line():
    r = one("iter 100: loss 2.3456, time 45.67ms, mfu 12.34%")
    assert (r.step, r.loss, r.step_time_s, r.metrics) == (100, 2.3456, pytest.approx(0.04567), {"mfu": 12.34})


def test_plain_loop_steps_counted_within_epochs_become_global():
    recs = parse("epoch 1/3 step 20/20 loss 0.6909", "epoch 2/3 step 5/20 loss 0.5101")
    assert [(r.epoch, r.step, r.total_steps, r.metrics["epoch_step"]) for r in recs] == [(1, 20, 60, 20), (2, 25, 60, 5)]


def test_plain_loop_steps_that_go_on_across_epochs_stay_as_printed():
    recs = parse("epoch 1/3 step 20/60 loss 0.6909", "epoch 2/3 step 25/60 loss 0.5101", "epoch 2/3 step 30/60 loss 0.5")
    assert [r.step for r in recs] == [20, 25, 30]


def test_rank_of_the_launcher_prefix_is_kept():
    r = one("epoch: 1 | step: 5 | loss: 0.7281", rank=3)
    assert r.rank == 3


# ---------------------------------------------------------------- prose is not a step

PROSE = [
    "loss_scale: dynamic",
    "--max-steps 1000",
    "Using gradient accumulation steps = 4",
    "WARNING: loss is computed in fp32",
    "Namespace(epochs=3, lr=0.001, log_every=5, loss='cross_entropy', warmup_steps=5, max_steps=60)",
    "eval: epoch 1 val_loss 0.7409 (after step 20)",
    "saved checkpoint to /ckpt/step-000100 (epoch 1, step 100)",
    "Resuming from step 500, epoch 2",
    "step 3 of 10 done",
    "max_steps: 1000, save_steps: 500, loss_type: ce",
    "config: model=gpt2-tiny n_layer=2 total optimization steps=20 logging_steps=2 loss=causal-lm cross entropy",
    "step budget: 20 steps (2 epochs x 10 batches); eval loss is reported per epoch",
    "/work/train.py:109: UserWarning: gradient clipping is disabled; the loss may spike in the first steps",
    "Epoch 0, global step 12: 'val_loss' reached 0.39571 (best 0.39571), saving model to '/tmp/epoch=0-step=12.ckpt' as top 1",
    "`Trainer.fit` stopped: `max_steps=60` reached.",
    "[2026-11-30 04:14:35,860] [INFO] [config.py:1013:print]   gradient_accumulation_steps .. 2",
    "  steps_per_print .............................. 10",
    "[Rank 0] (after 5 iterations) memory (MB) | allocated: 21543.01 | max allocated: 52535.90 | reserved: 60112.06",
    "2026-11-30 04:14:45 | INFO | fairseq.checkpoint_utils | Saved checkpoint checkpoints/checkpoint2.pt (epoch 2 @ 100 updates, score 5.827)",
    "[titan] 2026-11-30 04:14:39,380 - root - INFO - Trainer is initialized with 16384 tokens per DP rank, gradient accumulation steps 1, total steps 40 (warmup 2)",
]


@pytest.mark.parametrize("text", PROSE)
def test_prose_about_steps_and_loss_gives_no_step(text):
    assert parse(text) == []


# ---------------------------------------------------------------- prefilter and cost


STEP_LINES = [
    TRAINER_DICTS[0],
    BAR,
    LIGHTNING_EPOCH_0,
    "Epoch 2/2  ━━━━━━━━━━━━━━━━━ 12/12 0:00:00 • 0:00:00 41.38it/s v_num: 0.000     ",
    "Epoch 1/3",
    _keras(5, 0.8),
    MEGATRON,
    "[2025-03-05 15:22:53,001] [INFO] [logging.py:96:log_dist] [Rank 0] step=52, skipped=0, lr=[2.8e-06], mom=[(0.9, 0.999)]",
    "[titan] 2026-11-30 04:14:39,484 - root - INFO - step:  5  loss:  6.82150  memory:  1.35GiB(1.42%)  tps: 32,454  mfu: 0.12%",
    "Training epoch 0, iteration 3/59 | lr: 0.00024 | reduced_train_loss: 9.674",
    "2026-11-30 04:14:43 | INFO | train_inner | epoch 001:     10 / 50 loss=11.104, num_updates=10, lr=0.000125",
    "[batch=1/100]:",
    "iter 100: loss 2.3456, time 45.67ms, mfu 12.34%",
]


@pytest.mark.parametrize("text", STEP_LINES)
def test_every_step_line_passes_the_prefilter(text):
    assert _PREFILTER(text)


@pytest.mark.parametrize(
    "text",
    [
        "2024-05-01 12:00:00 | INFO | trainer | checkpoint manager idle, next save in 1234 steps",
        "batch 517 tokens 8123 padding 12%",
        "Using gradient accumulation steps = 4",
        "--max-steps 1000",
        "WARNING: loss is computed in fp32",
        "    loss = model(batch).loss",
    ],
)
def test_prose_that_only_mentions_steps_does_not_pass_the_prefilter(text):
    assert not _PREFILTER(text)


def test_pyparsing_runs_once_per_line_shape():
    cache = ShapeCache()
    p = StepParser(cache)
    records = p.feed(Line("2024-05-01T12:00:00Z", 0, "epoch 1/3 step 1/50 loss 2.5000"))[1]
    first = cache.parses
    for i in range(1, 50):
        records += p.feed(Line("2024-05-01T12:00:00Z", i, f"epoch 1/3 step {i + 1}/50 loss {2.5 - i / 100:.4f}"))[1]
    records += p.close()
    assert len(records) == 50 and records[-1].loss == 2.01
    assert cache.parses == first


def test_repeated_prose_is_parsed_once():
    cache = ShapeCache()
    p = StepParser(cache)
    for i in range(20):
        p.feed(Line("2024-05-01T12:00:00Z", i, f"step {i} of the warmup: loss scale {2 ** i} is too high"))
    assert p.close() == [] and cache.parses <= 1


def test_prose_without_a_step_number_never_reaches_pyparsing():
    cache = ShapeCache()
    p = StepParser(cache)
    for text in ("Using gradient accumulation steps = 4", "WARNING: loss is computed in fp32", "loss_scale: dynamic"):
        p.feed(Line("2024-05-01T12:00:00Z", 0, text))
    assert cache.parses == 0


def test_every_dialect_cites_its_source():
    for d in dialects.DIALECTS:
        assert d.source, d.name


# ---------------------------------------------------------------- real fixtures


def _cri_lines(path: Path):
    """(time, stream, text) of a CRI file, P chunks joined with their F per stream."""
    partial: dict[str, list[str]] = {}
    for raw in path.read_bytes().split(b"\n"):
        if not raw:
            continue
        ts, stream, tag, text = raw.decode("utf-8", "replace").split(" ", 3)
        partial.setdefault(stream, []).append(text)
        if tag == "F":
            yield ts, stream, "".join(partial.pop(stream))


def _fixture_steps(path: Path) -> list:
    parsers: dict[tuple, StepParser] = {}
    seqs: dict[tuple, int] = {}
    records = []
    for ts, stream, raw in _cri_lines(path):
        text, rank, local_rank = strip_rank_prefixes(raw)
        key = (stream, rank, local_rank)
        p = parsers.setdefault(key, StepParser())
        seq = seqs[(stream, ts)] = seqs.get((stream, ts), -1) + 1
        if p.open or _PREFILTER(text):
            records += p.feed(Line(ts, seq, text, rank, local_rank))[1]
    for p in parsers.values():
        records += p.close()
    return fold_trainer_logs(records)


def fixture_ranks(dialect_dir: Path) -> dict[str, list]:
    """Step records of a fixture, keyed like its manifest: "<pod>/<rank>"."""
    got: dict[str, list] = {}
    for path in sorted(dialect_dir.glob("pods/*/*/*.log")):
        pod = path.parts[-3].split("_")[1]
        for r in _fixture_steps(path):
            rank = r.rank if r.rank is not None else r.local_rank  # one node per pod: local rank = rank
            got.setdefault(f"{pod}/{'null' if rank is None else rank}", []).append(r)
    return got


FIXTURE_DIRS = sorted(d for d in FIXTURES.glob("*") if (d / "manifest.json").exists()) if FIXTURES.exists() else []


@pytest.mark.parametrize("dialect_dir", FIXTURE_DIRS, ids=[d.name for d in FIXTURE_DIRS])
def test_fixture_steps_match_what_the_run_logged(dialect_dir):
    manifest = json.loads((dialect_dir / "manifest.json").read_text())
    got = fixture_ranks(dialect_dir)
    assert sorted(got) == sorted(k for k, v in manifest["steps"].items() if v["count"])
    for key, expected in manifest["steps"].items():
        recs = got.get(key, [])
        assert len(recs) == expected["count"], key
        if recs:
            assert recs[-1].step == expected["last_step"], key
            assert recs[-1].loss == expected["last_loss"], key
        assert [(r.step, r.loss) for r in recs] == [tuple(s[:2]) for s in expected["steps"]], key


def test_layout_cache_reads_what_a_cold_cache_reads_for_every_fixture_line():
    """A layout seen before is sliced at remembered offsets: the values must be those the
    tokenizer and the dialect grammars give a cache that never saw the layout."""
    warm = ShapeCache()
    lines = []
    for path in sorted((Path(__file__).parent.parent / "fixtures" / "dialects").rglob("*.log")):
        for raw in path.read_text(errors="replace").splitlines():
            text = raw.split(" ", 3)[-1]
            lines.extend(seg for seg in text.split("\r") if seg.strip())
    lines.append("epoch 1/3 step 17/5000 loss 2.5388")
    lines.append("epoch 2/3 step 99/5000 loss 1.0000")  # same layout, other digits
    compared = 0
    for seg in lines:
        warm.read(seg)
        again = warm.read(seg)  # from the layout level now
        cold = ShapeCache().read(seg)
        assert (again is None) == (cold is None), seg
        if cold is not None:
            assert again.dialect is cold.dialect and list(again.texts) == list(cold.texts), seg
            compared += 1
    assert compared > 300


def test_lightning_1x_main_bar_advancing_through_validation_is_not_training():
    # pytorch_lightning 1.9 tqdm_progress.py: main total = 40 train + 10 val batches; the main bar advances with the
    # val bar ("Validating") and, after a mid-epoch validation, counts the val batches it went through
    lines = [
        "Epoch 0:  40%|████      | 20/50 [00:10<00:20,  4.80it/s, loss=2.1, v_num=0]",
        "Validating:  50%|█████     | 5/10 [00:01<00:01,  8.00it/s]",
        "Epoch 0:  50%|█████     | 25/50 [00:11<00:19,  4.80it/s, loss=2.1, v_num=0]",
        "Validating: 100%|██████████| 10/10 [00:01<00:00,  8.00it/s]",
        "Epoch 0:  60%|██████    | 30/50 [00:11<00:19,  4.80it/s, loss=2.1, v_num=0]",
        "Epoch 0:  80%|████████  | 40/50 [00:12<00:10,  4.80it/s, loss=1.9, v_num=0]",
        "Epoch 1:  20%|██        | 10/50 [00:14<00:10,  4.80it/s, loss=1.7, v_num=0]",
    ]
    assert [(r.step, r.loss) for r in parse(*lines)] == [(20, 2.1), (30, 1.9), (50, 1.7)]


def test_lightning_2x_redraw_after_validation_stays_the_last_training_step():
    lines = [
        "Epoch 0: 100%|██████████| 40/40 [00:10<00:00,  4.00it/s, v_num=0, train_loss=0.290]",
        "Validation DataLoader 0: 100%|██████████| 10/10 [00:01<00:00,  8.00it/s]",
        "Epoch 0: 100%|██████████| 40/40 [00:11<00:00,  3.60it/s, v_num=0, train_loss=0.290, val_loss=0.396]",
        "Epoch 1:  25%|██▌       | 10/40 [00:12<00:30,  4.00it/s, v_num=0, train_loss=0.250, val_loss=0.396]",
    ]
    assert [r.step for r in parse(*lines)] == [40, 50]


# ---------------------------------------------------------------- a run of NaN losses: one nan_loss error record


def test_a_run_of_nan_losses_gives_one_nan_loss_error_at_its_first_step():
    lines = [f" iteration {it:8d}/    1000 | lm loss: {loss} | grad norm: 1.000 |" for it, loss in
             ((10, "2.500000E+00"), (20, "NAN"), (30, "NAN"), (40, "NAN"), (50, "2.400000E+00"), (60, "INF"))]
    recs = parse_all(*lines)
    errors = [r for r in recs if isinstance(r, ErrorRecord)]
    assert [(e.category, e.pattern, e.time) for e in errors] == [
        ("nan_loss", "nonfinite_loss", "2024-05-01T12:00:01Z"),  # the run 20..40
        ("nan_loss", "nonfinite_loss", "2024-05-01T12:00:05Z"),  # a new run after the finite loss at 50
    ]
    assert errors[0].line == lines[1] and "step 20" in errors[0].message
    assert [r.step for r in recs if isinstance(r, StepRecord)] == [10, 20, 30, 40, 50, 60]


def test_nan_loss_error_of_a_bar_quotes_the_state_that_printed_it():
    bar = "\r".join([
        "Epoch 0:  10%|#         | 5/50 [00:01<00:09,  4.80it/s, v_num=0, train_loss=2.340]",
        "Epoch 0:  12%|#         | 6/50 [00:01<00:09,  4.80it/s, v_num=0, train_loss=nan]",
        "Epoch 0:  14%|#         | 7/50 [00:01<00:09,  4.80it/s, v_num=0, train_loss=nan]",
    ])
    errors = [r for r in parse_all(bar) if isinstance(r, ErrorRecord)]
    assert len(errors) == 1 and errors[0].line == bar.split("\r")[1] and "step 6" in errors[0].message
