"""The HF Trainer under torchrun --tee, real runs (fixtures/runs/hf_tee_*, fixtures/generate/hf_runs.py).

Its logs dicts (stdout) and its bar (stderr) reach the pod log through two pipes and torchrun's two tee
threads, so a dict may come before the bar's first numbered state, and the bar's redraws after a write
may run ahead of the dicts; max_steps is set, so steps per epoch does not divide the bar's total.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from gangscope.pipeline.run.cli import main
from gangscope.parsers.lines import Line
from gangscope.parsers.records import ErrorRecord, StepRecord
from gangscope.parsers.steps import NONFINITE_GRAD_RUN, StepParser, TrainerLogFolder

RUNS = Path(__file__).resolve().parent.parent / "fixtures" / "runs"
HF_RUNS = ["hf_tee_sigkill", "hf_tee_nan"]


def replay(run: str, tmp_path: Path) -> Path:
    out = tmp_path / run
    assert main(["replay", str(RUNS / run), "--out", str(out), "--no-progress"]) == 0
    return out


def ndjson(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("run", HF_RUNS)
def test_every_trainer_dict_gets_the_step_the_trainer_logged_it_at(run, tmp_path):
    manifest = json.loads((RUNS / run / "manifest.json").read_text())
    (truth,) = manifest["steps"].values()  # global rank 0 logs; one dict per step (logging_steps=1)
    steps = ndjson(replay(run, tmp_path) / "step.ndjson")
    assert [s["step"] for s in steps] == list(range(1, truth["count"] + 1))
    assert {s["total_steps"] for s in steps} == {truth["total_steps"]}
    assert steps[-1]["step"] == truth["last_step"]
    assert steps[-1]["loss"] == pytest.approx(truth["last_loss"], abs=1e-3)  # the Trainer prints 4 significant digits


def test_a_grad_norm_that_stays_nan_under_the_trainer_is_nan_loss_at_its_first_step(tmp_path):
    manifest = json.loads((RUNS / "hf_tee_nan" / "manifest.json").read_text())
    (d,) = ndjson(replay("hf_tee_nan", tmp_path) / "diagnosis.ndjson")
    assert (d["outcome"], d["category"]) == ("failed", "nan_loss") == (manifest["label"]["outcome"], manifest["label"]["category"])
    assert d["first_failure"]["rank"] == manifest["label"]["first_failure"]["rank"] == 0
    assert "at step 2" in d["summary"]  # the first dict with grad_norm nan, not the last step printed


def test_sigkilled_rank_under_the_trainer_is_host_oom_on_rank_1(tmp_path):
    (d,) = ndjson(replay("hf_tee_sigkill", tmp_path) / "diagnosis.ndjson")
    assert (d["category"], d["first_failure"]["rank"]) == ("host_oom", 1)


# ---------------------------------------------------------------- the folder, line by line

DICTS = [f"{{'loss': '3.9', 'grad_norm': '0.5', 'learning_rate': '0.0005', 'epoch': '{e}'}}"
         for e in ("0.03125", "0.0625", "0.09375", "0.125")]


def bar(n: int, total: int = 20) -> str:
    return f"{100 * n // total:3d}%|█         | {n}/{total} [00:00<00:00, 30.00it/s]"


def through(folder: TrainerLogFolder, parsers: dict, *items: tuple[str, str]) -> list:
    """(stream, text) pairs through one StepParser per stream, records through `folder` as they come."""
    out = []
    for i, (stream, text) in enumerate(items):
        p = parsers.setdefault(stream, StepParser())
        recs = p.feed(Line(f"2024-05-01T12:00:{i:02d}Z", 0, text))[1]
        for r in recs:
            r.stream = stream
        out += folder.add(recs, bar_may_come=any(q.open for q in parsers.values()))
    return out


def test_one_redraw_alone_does_not_decide_the_steps_per_epoch():
    # 32 steps per epoch, max_steps 20: the first dict (epoch 1/32) comes after the bar was redrawn at 2 (the
    # redraw at 1 lost): 64 fits that dict alone, and would number step 20 as 40.
    folder, parsers = TrainerLogFolder(), {}
    clear = [("stderr", ""), ("stderr", " " * 40), ("stderr", "")]
    items = [("stderr", bar(1)), *clear, ("stderr", bar(2)), ("stdout", DICTS[0])]
    for n in range(3, 6):
        items += [*clear, ("stderr", bar(n))]
    items += [("stdout", d) for d in DICTS[1:]]
    got = through(folder, parsers, *items)
    got += folder.close()
    for p in parsers.values():
        got += folder.add(p.close())
    assert [r.step for r in got if isinstance(r, StepRecord)] == [1, 2, 3, 4]


def test_dicts_before_the_bars_first_step_wait_for_it_once_the_bar_is_drawn_at_0():
    folder, parsers = TrainerLogFolder(), {}
    clear = [("stderr", ""), ("stderr", " " * 40), ("stderr", "")]
    got = through(folder, parsers, ("stderr", "  0%|          | 0/20 [00:00<?, ?it/s]"), ("stdout", DICTS[0]),
                  ("stdout", DICTS[1]))
    assert got == []  # the bar is there: its numbered states will tell the steps
    got = through(folder, parsers, *clear, ("stderr", bar(1)), *clear, ("stderr", bar(2)), *clear, ("stderr", bar(3)))
    got += folder.close()
    assert [r.step for r in got if isinstance(r, StepRecord)][:2] == [1, 2]


def nan_grad_dicts(n: int) -> list[str]:
    return [f"{{'loss': '0', 'grad_norm': 'nan', 'learning_rate': '0.0005', 'epoch': '{e}'}}" for e in range(n)]


def test_a_run_of_nonfinite_grad_norms_is_one_nan_loss_error_at_its_first_line():
    p = StepParser()
    recs = []
    for i, text in enumerate(nan_grad_dicts(NONFINITE_GRAD_RUN + 5)):
        recs += p.feed(Line(f"2024-05-01T12:00:{i:02d}Z", 0, text))[1]
    errors = [r for r in recs if isinstance(r, ErrorRecord)]
    assert [(e.category, e.time) for e in errors] == [("nan_loss", "2024-05-01T12:00:00Z")]


def test_a_few_overflowing_fp16_steps_are_no_nan_loss():
    # GradScaler skips an overflowing step and halves its scale: the first steps may log inf, then finite ones
    p = StepParser()
    texts = nan_grad_dicts(NONFINITE_GRAD_RUN - 1) + [DICTS[0]] + nan_grad_dicts(NONFINITE_GRAD_RUN - 1)
    recs = []
    for i, text in enumerate(texts):
        recs += p.feed(Line(f"2024-05-01T12:00:{i:02d}Z", 0, text))[1]
    assert not [r for r in recs if isinstance(r, ErrorRecord)]
