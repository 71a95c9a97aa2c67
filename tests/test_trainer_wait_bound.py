"""HF Trainer dicts that nothing numbers wait for steps-per-epoch at most `max_waiting` at a time.

Every dict re-weighed all that waited: a pod whose dicts never decide S was quadratic in time
and memory (8k dicts 5.7 s, 32k 118 s of `gangscope replay`). Bounded, the dicts go on
unnumbered, as they would at the end, and nothing is lost.
"""

import random

from gangscope.parsers.steps import TrainerLogFolder, fold_trainer_logs
from test_steps import feed_folder, parse

BAR = " 1%|          | 7/1009 [00:03<07:10,  2.33it/s]"  # 1009 is prime: S is 1 or 1009


def undecidable_dicts(n: int) -> list[str]:
    rng = random.Random(7)
    out = []
    for _ in range(n):
        epoch = round(rng.uniform(0.01, 0.25), 4)  # x = epoch * 1009 < 253: "whole" within 1e-3 * x < 0.26
        while abs(epoch * 1009 - round(epoch * 1009)) < 0.3:
            epoch = round(rng.uniform(0.01, 0.25), 4)
        out.append("{'loss': %.4f, 'grad_norm': 1.25, 'learning_rate': 1e-05, 'epoch': %s}" % (rng.random(), epoch))
    return out


def test_dicts_that_never_decide_wait_at_most_max_waiting_and_all_come_out_unnumbered():
    dicts = undecidable_dicts(700)
    folder = TrainerLogFolder(max_waiting=64)
    out = feed_folder(folder, BAR)
    most_waiting = 0
    for d in dicts:
        out += feed_folder(folder, d)
        most_waiting = max(most_waiting, len(folder.snapshot().logs))
    out += folder.close()
    assert most_waiting <= 64
    got = [(r.step, r.loss) for r in out if r.dialect == "hf_trainer"]
    assert len(got) == 700 and all(step is None for step, _ in got)
    whole = fold_trainer_logs(parse(BAR, *dicts))  # all at once, no bound: the same answer
    assert sorted(got, key=lambda t: t[1]) == sorted(((r.step, r.loss) for r in whole if r.dialect == "hf_trainer"), key=lambda t: t[1])


def test_giving_up_survives_a_snapshot():
    folder = TrainerLogFolder(max_waiting=8)
    feed_folder(folder, BAR, *undecidable_dicts(20))
    again = TrainerLogFolder(max_waiting=8)
    again.restore(folder.snapshot())
    assert again.snapshot() == folder.snapshot() and folder.snapshot().gave_up
    assert [r.step for r in feed_folder(again, undecidable_dicts(21)[-1])] == [None]  # goes on at once
