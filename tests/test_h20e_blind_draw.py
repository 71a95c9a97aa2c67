"""Rules from batch h20e-20 of issue 16 (fixtures/eval README, "Batch h20e-20"): a second blind draw of the lifecycle,
storage and data slice shaped like the judged set.

The class of mistake it showed that several real samples support, read from the source that prints the text (cited in
parsers/errors.py, the block "h20e (issue 16, session 20)"): llama-recipes' (llama-cookbook) end of run, the results dict
finetuning.py prints on rank 0 once train() returned ("Key: avg_train_prep, Value: ..." first), is the framework's own end
of training: success, not a log cut before the end. Values in the texts are ours."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis
from rule_reference import category_of


@pytest.mark.parametrize(
    "line, category",
    [
        ("Key: avg_train_prep, Value: 1.310718059539795", "success"),
        ("    Key: avg_train_prep, Value: 5.1879143714904785", "success"),
        # near misses: the other keys alone, an eval-only print, a user's own "key/value" print
        ("Key: avg_train_loss, Value: 0.2705920338630676", None),
        ("Key: avg_eval_prep, Value: 1.2874033451080322", None),
        ("key: avg_train_prep value 1.31", None),
    ],
)  # fmt: skip
def test_the_lines_and_their_near_misses(line, category):
    assert category_of(line) == category


STEPS = ("evaluating Epoch:  27%|████▍           | 3/11 [00:01<00:03,  2.31it/s]\n"
         " eval_ppl=tensor(1.2874, device='cuda:0') eval_epoch_loss=tensor(0.2526, device='cuda:0')\n"
         "we are about to save the PEFT modules\n"
         "PEFT modules are saved in /srv/runs/ft-kolva-07/peft directory\n"
         "best eval loss on epoch 1 is 0.25264108180999756\n"
         "Epoch 1: train_perplexity=1.3107, train_epoch_loss=0.2706, epoch time 31.48221390508115s\n"
         "max training steps reached, stopping training, total_train_steps:  8\n")  # fmt: skip
RESULTS = ("Key: avg_train_prep, Value: 1.310718059539795\n"
           "Key: avg_train_loss, Value: 0.2705920338630676\n"
           "Key: avg_eval_prep, Value: 1.2874033451080322\n"
           "Key: avg_eval_loss, Value: 0.25264108180999756\n"
           "Key: avg_epoch_time, Value: 31.48221390508115\n"
           "Key: avg_checkpoint_time, Value: 1.2140978910028934\n")  # fmt: skip
# a failure after the results (a crash at exit) is still a failure
AFTER = RESULTS + ("Traceback (most recent call last):\n"
                   '  File "/srv/app/finetuning.py", line 311, in <module>\n'
                   "    fire.Fire(main)\n"
                   "RuntimeError: CUDA error: an illegal memory access was encountered\n")  # fmt: skip


@pytest.mark.parametrize(
    "text, category",
    [(STEPS + RESULTS, "success"), (STEPS, "running"), (AFTER, "cuda_error")],
)  # fmt: skip
def test_the_logs_of_the_batch(tmp_path, text, category):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary
