"""Epoch progress, stalls and stragglers from step records (parsers/progress.py)."""

from __future__ import annotations

import json
import math
from datetime import datetime, timedelta, timezone

import pytest

from gangscope.parsers.lines import Line
from gangscope.parsers.progress import ProgressTracker, RankProgress, find_stragglers
from gangscope.parsers.records import EpochRecord, SignalRecord, StepRecord
from gangscope.parsers.steps import StepParser

from test_steps import FIXTURE_DIRS, fixture_ranks

T0 = datetime(2024, 5, 1, 12, 0, 0, tzinfo=timezone.utc)


def at(seconds: float) -> str:
    return (T0 + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def steps_from(lines: list[tuple[float, str]]) -> list[StepRecord]:
    """Parse (seconds, text) lines of one stream into step records."""
    p = StepParser()
    out = []
    for i, (t, text) in enumerate(lines):
        out += p.feed(Line(at(t), i, text))[1]
    return out + p.close()


def track(records, **params):
    tracker = RankProgress(**params)
    out = []
    for r in records:
        out += tracker.add(r)
    return out, tracker


def epochs(records) -> list[EpochRecord]:
    return [r for r in records if isinstance(r, EpochRecord)]


def signals(records) -> list[SignalRecord]:
    return [r for r in records if isinstance(r, SignalRecord)]


MEGATRON = " iteration {:8d}/     100 | consumed samples: {:12d} | elapsed time per iteration (ms): 1000.0 | learning rate: 3.000000E-05 | lm loss: 5.000000E+00 | loss scale: 1.0 |"


def megatron(step: int) -> str:
    return MEGATRON.format(step, step * 128)


# ---------------------------------------------------------------- epoch records


def test_first_step_gives_an_epoch_record():
    out, _ = track(steps_from([(0, megatron(1))]))
    assert [(e.step, e.total_steps, e.progress) for e in epochs(out)] == [(1, 100, 0.01)]


def test_progress_is_the_global_step_over_its_total():
    out, tracker = track(steps_from([(i, megatron(i)) for i in (1, 50)]))
    assert epochs(out)[-1].progress == 0.5


def test_small_advances_do_not_emit_until_the_progress_step():
    out, _ = track(steps_from([(i, megatron(i)) for i in range(1, 11)]), progress_step=0.05)
    assert [e.step for e in epochs(out)] == [1, 6]


def test_progress_going_back_and_forth_emits_nothing_new():
    out, _ = track(steps_from([(i, megatron(s)) for i, s in enumerate([50, 49, 50, 49, 50])]))
    assert [e.step for e in epochs(out)] == [50]


def test_finish_always_emits_the_last_state():
    out, tracker = track(steps_from([(i, megatron(i)) for i in range(1, 4)]), progress_step=0.5)
    last = tracker.finish()
    assert [e.step for e in epochs(out)] == [1] and [e.step for e in epochs(last)] == [3]


def test_plain_loop_steps_within_epochs_give_progress_across_epochs():
    lines = [(i, f"epoch {e}/3 step {s}/20 loss 0.5000") for i, (e, s) in enumerate([(1, 10), (1, 20), (2, 10)])]
    out, tracker = track(steps_from(lines))
    last = epochs(tracker.finish())[-1]
    assert (last.epoch, last.total_epochs, last.step, last.total_steps) == (1.5, 3, 30, 60)
    assert last.progress == pytest.approx(0.5)


def test_completing_an_epoch_emits_a_record():
    lines = [(0, "epoch 1/3 step 19/20 loss 0.5000"), (1, "epoch 1/3 step 20/20 loss 0.5000"), (2, "epoch 2/3 step 1/20 loss 0.5000")]
    out, _ = track(steps_from(lines), progress_step=0.5)
    assert [e.epoch for e in epochs(out)] == [pytest.approx(0.95), 1.0]


def test_completed_epochs_of_a_keras_run():
    bar = "\r" + "\r".join(f"{n:2d}/40 ━━━━━━━━━━━━━━━━━━━━ 0s 50ms/step - loss: 0.5000" for n in (20, 40)) + "\n"
    lines = [(0, "Epoch 1/2"), (1, bar), (2, "Epoch 2/2"), (3, bar)]
    _, tracker = track(steps_from(lines))
    last = tracker.finish()[-1]
    assert (math.floor(last.epoch), last.total_epochs, last.step, last.total_steps, last.progress) == (2, 2, 80, 80, 1.0)


def test_global_steps_learn_the_epoch_length_at_an_epoch_change():
    lines = [(i, f"epoch: {e} | step: {s} | loss: 0.5") for i, (e, s) in enumerate([(1, 10), (1, 20), (2, 30), (2, 40), (3, 60)])]
    _, tracker = track(steps_from(lines))
    assert tracker.finish()[-1].epoch == 3.0


def test_trainer_fractional_epoch_gives_the_number_of_epochs():
    recs = steps_from([(0, "{'loss': '5.015', 'grad_norm': '1.474', 'learning_rate': '0.002063', 'epoch': '1'}")])
    recs[0].step, recs[0].total_steps = 10, 20  # as fold_trainer_logs numbers it from the bar
    _, tracker = track(recs)
    last = tracker.finish()[-1]
    assert (last.epoch, last.total_epochs, last.progress) == (1.0, 2, 0.5)


def test_unknown_length_gives_no_progress():
    _, tracker = track(steps_from([(0, "step=10 loss=2.31 lr=1e-4"), (1, "step=20 loss=2.21 lr=1e-4")]))
    last = tracker.finish()[-1]
    assert (last.step, last.progress, last.eta_s) == (20, None, None)


# ---------------------------------------------------------------- ETA


def test_eta_from_the_recent_rate_of_the_lines_own_times():
    out, _ = track(steps_from([(i * 2.0, megatron(i)) for i in range(1, 51)]))
    assert epochs(out)[-1].eta_s == pytest.approx(100.0)  # 50 steps left at 2 s each


def test_eta_is_the_bars_own_estimate_when_times_cannot_tell():
    bar = "\r".join(f" {n * 5}%|█         | {n}/20 [00:0{n}<00:{40 - 2 * n:02d},  0.50it/s]" for n in (1, 2))
    out, _ = track(steps_from([(0, bar)]))
    assert epochs(out)[-1].eta_s == 36.0


def test_eta_is_zero_when_done():
    out, _ = track(steps_from([(0, megatron(99)), (1, megatron(100))]))
    assert epochs(out)[-1].eta_s == 0.0


# ---------------------------------------------------------------- stalls


def test_late_step_after_a_regular_rhythm_is_a_stall():
    lines = [(i * 10, megatron(i)) for i in range(1, 11)] + [(700, megatron(11))]
    out, _ = track(steps_from(lines), stall_factor=5.0)
    [stall] = signals(out)
    assert (stall.signal, stall.step, stall.value, stall.baseline) == ("stall", 10, 600.0, 10.0)
    assert stall.time == at(100)


def test_short_gap_is_no_stall_however_fast_the_steps():
    lines = [(i * 0.01, megatron(i)) for i in range(1, 11)] + [(5.0, megatron(11))]
    out, _ = track(steps_from(lines), stall_factor=5.0, min_stall_s=30.0)
    assert signals(out) == []


def test_regular_steps_are_no_stall():
    out, tracker = track(steps_from([(i * 3, megatron(i)) for i in range(1, 30)]))
    assert signals(out) == [] and signals(tracker.finish()) == []


def test_too_little_history_judges_no_stall():
    out, _ = track(steps_from([(0, megatron(1)), (10, megatron(2)), (1000, megatron(3))]), min_intervals=5)
    assert signals(out) == []


def test_log_ending_long_after_the_last_step_is_a_stall():
    _, tracker = track(steps_from([(i * 10, megatron(i)) for i in range(1, 11)]))
    [stall] = signals(tracker.finish(at(600.0)))
    assert stall.step == 10 and stall.value == 500.0


def test_rank_that_stopped_while_its_peers_went_on_is_stalled_at_the_end():
    tracker = ProgressTracker()
    for rank, last in ((0, 40), (1, 10)):
        for r in steps_from([(i * 10, megatron(i)) for i in range(1, last + 1)]):
            r.job, r.rank = "llm/gpt", rank
            tracker.add(r)
    stalls = signals(tracker.finish())
    assert [(s.rank, s.step) for s in stalls] == [(1, 10)]


# ---------------------------------------------------------------- one tracker for many ranks


def test_tracker_keeps_ranks_apart_and_stamps_their_identity():
    tracker = ProgressTracker()
    out = []
    for rank, step in ((0, 10), (1, 20)):
        [r] = steps_from([(0, megatron(step))])
        r.job, r.pod, r.rank = "llm/gpt", f"gpt-worker-{rank}", rank
        out += tracker.add(r)
    assert [(e.job, e.pod, e.rank, e.step) for e in epochs(out)] == [("llm/gpt", "gpt-worker-0", 0, 10), ("llm/gpt", "gpt-worker-1", 1, 20)]


# ---------------------------------------------------------------- stragglers


def step_times(times_by_rank: dict[int, list[float]], job: str = "llm/gpt") -> list[StepRecord]:
    return [
        StepRecord(job=job, rank=rank, step=i + 1, step_time_s=t, time=at(i))
        for rank, times in times_by_rank.items()
        for i, t in enumerate(times)
    ]


def test_rank_slower_than_its_peers_at_the_same_steps_is_one_straggler_signal():
    recs = step_times({0: [1.0] * 10, 1: [1.02] * 10, 2: [1.0] * 3 + [2.5] * 7, 3: [0.98] * 10})
    [s] = find_stragglers(recs)
    assert (s.signal, s.rank, s.step, s.value, s.baseline, s.job) == ("straggler", 2, 4, 2.5, 1.0, "llm/gpt")
    assert "7 of 10 steps" in s.message


def test_similar_ranks_have_no_straggler():
    assert find_stragglers(step_times({0: [1.0] * 10, 1: [1.1] * 10, 2: [0.95] * 10})) == []


def test_a_few_slow_steps_are_not_a_straggler():
    assert find_stragglers(step_times({0: [1.0] * 10, 1: [1.0] * 8 + [3.0] * 2}), min_steps=3) == []


def test_a_rank_slow_at_a_few_steps_of_many_is_jitter_not_a_straggler():
    # a busy host: rank 0 1.6x its peers at 8 of 30 steps (fixtures/runs/straggler, 4 ranks on 2 cores)
    jitter = [0.011] * 22 + [0.018] * 8
    recs = step_times({0: jitter, 1: [0.011] * 30, 2: [0.010] * 30, 3: [0.21] * 30})
    assert [s.rank for s in find_stragglers(recs)] == [3]


def test_ranks_of_different_jobs_are_not_peers():
    recs = step_times({0: [1.0] * 5}, job="a") + step_times({1: [3.0] * 5}, job="b")
    assert find_stragglers(recs) == []


def test_throughput_stands_in_for_a_missing_step_time():
    recs = [
        StepRecord(job="j", rank=rank, step=s, throughput=tput, throughput_unit="tokens/s", time=at(s))
        for s in range(1, 6)
        for rank, tput in ((0, 1000.0), (1, 1000.0), (2, 400.0))
    ]
    assert [s.rank for s in find_stragglers(recs)] == [2]


# ---------------------------------------------------------------- real fixtures


@pytest.mark.parametrize("dialect_dir", FIXTURE_DIRS, ids=[d.name for d in FIXTURE_DIRS])
def test_fixture_progress_matches_what_the_run_did(dialect_dir):
    manifest = json.loads((dialect_dir / "manifest.json").read_text())
    ranks = fixture_ranks(dialect_dir)
    for key, expected in manifest["steps"].items():
        if not expected["count"]:
            continue
        records = ranks[key]
        tracker = RankProgress()
        for r in records:
            tracker.add(r)
        last = tracker.finish()[-1]
        assert last.step == expected["last_step"], key
        if expected.get("epochs") is not None and any(r.epoch is not None for r in records):
            assert last.epoch is not None and math.floor(last.epoch) == expected["epochs"], key
        # every fixture run finished: where its log gives the total, the progress is whole; where
        # it does not, there is no progress to give (or, if worked out some other way, whole too)
        if expected["total_steps"] is not None:
            assert last.progress == 1.0, key
        else:
            assert last.progress in (None, 1.0), key
