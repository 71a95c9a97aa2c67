"""A loss that went NaN/Inf and stayed so to the end of the log (pipeline/diagnose/nonfinite_tail.py).

Texts in the formats the sources print: the HF Trainer's logs dict (its logging_nan_inf_filter logs
the loss 0.0 for a window of NaN losses), nanoGPT's `iter N: loss L, time Tms, mfu M%` line.
"""

from __future__ import annotations

from diagnose_in_process import the_diagnosis


def hf(loss, grad, epoch):
    return f"{{'loss': {loss}, 'grad_norm': {grad}, 'learning_rate': 2e-05, 'epoch': {epoch}}}\n"


HEAD = hf(0.4127, 1.3012, 0.1) + hf(0.3981, 0.9954, 0.2)


def test_trainer_grad_norm_nan_with_the_filtered_loss_to_the_end_is_a_divergence(tmp_path):
    d = the_diagnosis(tmp_path, HEAD + hf(0.0, "nan", 0.3) + hf(0.0, "nan", 0.4), "filtered")
    assert d.category == "nan_loss"
    assert "grad norm NaN/Inf with the loss logged as 0.0 (2 last reports)" in d.summary


def test_one_filtered_report_at_the_end_is_not_enough(tmp_path):
    d = the_diagnosis(tmp_path, HEAD + hf(0.3712, 0.8801, 0.3) + hf(0.0, "nan", 0.4), "once")
    assert d.category == "running"


def test_the_filtered_loss_that_comes_back_finite_is_no_divergence(tmp_path):
    text = HEAD + hf(0.0, "nan", 0.3) + hf(0.0, "nan", 0.4) + hf(0.3655, 0.9127, 0.5)
    assert the_diagnosis(tmp_path, text, "back").category == "running"


def test_a_nan_grad_norm_beside_a_finite_moving_loss_is_a_skipped_step_not_a_divergence(tmp_path):
    text = HEAD + hf(0.3712, "nan", 0.3) + hf(0.3604, "nan", 0.4)
    assert the_diagnosis(tmp_path, text, "skipped").category == "running"


def test_step_lines_whose_last_two_losses_are_nan_are_a_divergence(tmp_path):
    lines = [f"iter {i}: loss {3.9 - i / 1000:.4f}, time 1043.27ms, mfu 16.02%\n" for i in range(100, 150, 10)]
    lines += ["iter 150: loss nan, time 987.31ms, mfu 16.31%\n", "iter 160: loss nan, time 985.02ms, mfu 16.55%\n"]
    d = the_diagnosis(tmp_path, "".join(lines), "iters")
    assert d.category == "nan_loss"
    assert "150" in d.summary


def test_one_nan_loss_the_run_comes_back_from_is_no_failure(tmp_path):
    # the step parser's own non-finite error (parsers/steps.py NONFINITE_LOSS) is a cause only when
    # no finite loss of its stream follows it: here training goes on with finite losses
    text = HEAD + hf("nan", 1.1021, 0.3) + hf(0.3688, 0.9512, 0.4) + hf(0.3597, 0.9034, 0.5)
    assert the_diagnosis(tmp_path, text, "recovered").category == "running"


def test_one_nan_loss_as_the_last_report_is_still_a_failure(tmp_path):
    d = the_diagnosis(tmp_path, HEAD + hf(0.3688, 0.9512, 0.3) + hf("nan", 1.1021, 0.4), "last")
    assert d.category == "nan_loss"
