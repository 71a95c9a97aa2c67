"""The one-sentence summary, audited (h31f, issue 16: "`summary` names the cause, the rank and the proof in one sentence;
wrappers unwrapped").

bench/summary_audit.py checks what each failed attempt's summary SAYS (tests/test_diagnose_summary_text.py checks that it
reads as one sentence). Here its checks are assertions: over every labeled real run (fixtures/runs) and over the dev logs
labeled before this session (ids up to 1261), every summary passes them, but for the few classes left alone (KNOWN_LEFT,
fixtures/eval/README.md "The one-sentence summary, audited (h31f)"). At 512da37, 609 of the 761 failed attempts' summaries
of this sample failed a check (400 of them only for want of the final period), 30 after; the classes fixed each have a test
below on a real run or log, and each check is shown able to fail. On 512da37 51 of this file's 74 tests fail.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.summary_audit import CHECKS, diagnoses_of, problems

ROOT = Path(__file__).resolve().parent.parent
RUNS = ROOT / "fixtures" / "runs"
DEV = ROOT / "fixtures" / "eval" / "dev"

#: Summaries that still fail a check, by class (left alone, the README's section says why): dev id -> the check.
KNOWN_LEFT = {
    # a step line's own words, "loss is not finite at step N (<dialect> step line)" (parsers/steps.py): the line is the
    # evidence, the summary quotes gangscope's reading of it
    # [h32h] fixed (the summary quotes the step line: tests/test_h32h_summaries.py) but 160: a grad norm NaN/Inf with the loss
    # logged as 0.0 (nonfinite_tail), whose evidence is a step record's text, no line of the log
    "160": "proof",
    # a traceback cut before its exception line whose last line is itself cut to a few characters, or is only a header
    "374": "proof", "423": "proof", "445": "proof", "458": "proof", "552": "proof", "906": "proof", "1183": "proof",
    "1187": "proof",
    # an exception cut inside its traceback whose frames name an operation (endings.raised_inside): the frame it names is
    # read from the frames, the evidence shows the trace's head and tail
    "794": "proof",
    # mp.spawn's wrapper whose child's traceback is cut: gangscope's "a worker failed; its traceback is cut"
    "349": "proof", "792": "proof", "1066": "proof",
    # the message quoted is a chained cause or a sub-exception the evidence excerpt does not show
    # [h32h] fixed: 480, 611, 1012 (the trace's excerpt shows the quoted link)
    # torchrun's box body read as a message ("rank : 10 (local_rank: 2) exitcode : -6 ... error_file: <N/A> ...")
    # [h32h] fixed: 280 (said in words: "torchrun's failure box says rank 10 exited with code -6: ...")
    # a PodGroup's "cannot find enough sibling pods" (Volcano): a pods_ready_timeout in the scheduler's words
    "1199": "category",
}
# [h34i] fixed (tests/test_h34i_summaries.py): 423, 1183, 1187 (a short last line quoted with the line above it), 794 (the frame
# quoted as printed, shown in the excerpt), 349, 792, 1066 (mp.spawn's wrapper line quoted); left: 374, 445, 458, 552, 906 (only a
# traceback header, or a header and a few characters: nothing to quote but the header, which "unwrapped" forbids; the summary
# says the text does not say which exception), 160
for _fixed in ("423", "1183", "1187", "794", "349", "792", "1066"):
    del KNOWN_LEFT[_fixed]
# [h32h] fixed: chained, exception_group, ptl_sigterm_torch2_1 (the quoted link is in the trace's excerpt), hf_tee_nan,
# nan_loss (the step line quoted); left: hang (a stop short of the run's end: its step and epoch records keep no line to quote)
KNOWN_LEFT_RUNS = {"hang": "proof"}


def _dev_sample() -> list[str]:
    labels = json.loads((DEV / "labels.json").read_text())
    return [str(label["id"]) for label in labels if int(label["id"]) <= 1261]


def _checks_failed(path: Path) -> set[str]:
    return {p.split(":")[0] for d in diagnoses_of(path) for p in problems(d)}


@pytest.mark.parametrize("run", sorted(p.name for p in RUNS.iterdir() if (p / "manifest.json").is_file()))
def test_every_labeled_run_s_summary_passes_the_audit(run):
    failed = _checks_failed(RUNS / run)
    assert failed <= {KNOWN_LEFT_RUNS.get(run)} - {None}, [d["summary"] for d in diagnoses_of(RUNS / run)]


def test_the_dev_logs_summaries_pass_the_audit_but_the_classes_left_alone():
    wrong = {}
    for ident in _dev_sample():
        failed = _checks_failed(DEV / f"{ident}.log")
        if failed - ({KNOWN_LEFT[ident]} if ident in KNOWN_LEFT else set()):
            wrong[ident] = sorted(failed)
    assert wrong == {}
    assert len(_dev_sample()) >= 890


# ---------------------------------------------------------------- each check can fail

GOOD = {"category": "python_exception", "summary": "rank 1 in pod p raised at step 3: KeyError: 'fallback_lr'.",
        "first_failure": {"pod": "p", "rank": 1}, "evidence": [{"text": "[rank1]: KeyError: 'fallback_lr'"}]}


def _with(**kw) -> dict:
    return {**GOOD, **kw}


def test_a_good_summary_passes_every_check():
    assert problems(GOOD) == []


@pytest.mark.parametrize("check, d", [
    ("one sentence", _with(summary="rank 1 in pod p raised at step 3: KeyError: 'fallback_lr'")),
    ("one sentence", _with(summary="rank 1 in pod p raised at step 3:\nKeyError: 'fallback_lr'.")),
    ("one sentence", _with(summary="rank 1 in pod p raised at step 3: KeyError: \"fallback_lr'.")),
    ("category", _with(category="cuda_oom")),
    ("grounded", _with(category="host_oom", summary="rank 1 in pod p was killed for host memory (SIGKILL / OOM killer): "
                                                     "MemoryError.", evidence=[{"text": "MemoryError"}])),
    ("grounded", _with(category="dataloader_error", summary="rank 1 in pod p lost a DataLoader worker: KeyError: 'fallback_lr'.")),
    ("rank", _with(first_failure={"pod": "p", "rank": 2})),
    ("rank", _with(first_failure={"pod": "q", "rank": 1})),
    ("proof", _with(evidence=[{"text": "RuntimeError: could not build the learning-rate schedule"}])),
    ("unwrapped", _with(summary="rank 1 in pod p raised at step 3: [rank1]: KeyError: 'fallback_lr'.")),
    ("unwrapped", _with(summary="rank 1 in pod p crashed: ChildFailedError root cause: rank 1 exited with code 1.")),
    ("unwrapped", _with(summary="rank 1 in pod p raised: 2025-12-31 07:22:37.807117: KeyError: 'fallback_lr'.")),
    ("length", _with(summary="rank 1 in pod p raised at step 3: KeyError: 'fallback_lr' " + "and more " * 50 + ".")),
    ("HTML-safe", _with(summary="rank 1 in pod p raised at step 3: KeyError: 'fallback_lr'\x1b.")),
])
def test_each_check_can_fail(check, d):
    assert check in CHECKS
    assert check in {p.split(":")[0] for p in problems(d)}, problems(d)


# ---------------------------------------------------------------- the classes fixed, on real runs and logs

def _summary(path: Path) -> str:
    (d,) = diagnoses_of(path)
    return d["summary"]


def test_a_memory_error_is_an_allocation_that_failed_not_a_kill():
    text = _summary(RUNS / "host_memory_error")  # Python's bare MemoryError under RLIMIT_AS
    assert "ran out of host memory (an allocation failed) at step 3: MemoryError" in text
    assert "killed" not in text.split(";")[0] and "SIGKILL" not in text


def test_torch_s_cpu_allocator_failure_names_the_size_it_could_not_allocate():
    text = _summary(RUNS / "host_alloc_fail")  # c10 alloc_cpu.cpp: "DefaultCPUAllocator: can't allocate memory: ..."
    assert "ran out of host memory (an allocation of 67108864 bytes failed)" in text and "SIGKILL" not in text


def test_a_sigkill_is_still_a_kill():
    assert "was killed for host memory (SIGKILL / OOM killer) at step 4: failed (exitcode: -9)" in _summary(RUNS / "sigkill")
    assert "was killed for host memory" in _summary(RUNS / "dataloader_worker_killed")  # "is killed by signal: Killed."


def test_an_exception_raised_while_the_dataloader_fetched_in_process_is_no_lost_worker():
    text = _summary(RUNS / "hf_collator_ragged")  # the Trainer's collate_fn raised under num_workers=0
    assert "failed while the DataLoader fetched a batch in the training process (no worker)" in text
    assert "lost a DataLoader worker" not in text


def test_a_worker_s_exception_is_said_as_such():
    text = _summary(RUNS / "dataloader_worker_exception")  # "Caught KeyError in DataLoader worker process 0."
    assert "failed in a DataLoader worker (it raised) at step 4: KeyError" in text


def test_the_suspect_of_a_collective_timeout_is_named_with_its_pod_and_the_timeout_s_line_quoted():
    text = _summary(RUNS / "collective_timeout")
    assert "rank 3 in pod collective-timeout-worker-1 is the suspect" in text
    assert "; the timeout's line: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/" in text


def test_torchrun_s_box_is_said_in_words():
    text = _summary(DEV / "031.log")
    assert text == "rank 0 in pod 031 crashed: torchrun's root-cause box says rank 0 exited with code 1."


def test_a_traceback_header_inside_a_message_and_a_line_s_time_are_taken_off():
    assert _summary(DEV / "002.log").endswith("of binary: /data/u1/miniconda3/envs/ft/bin/python.")  # agent's traceback after it
    assert _summary(DEV / "1254.log").endswith("diverged (loss NaN/Inf): train_loss nan.")  # "2025-12-31 07:22:37.807117: "


def test_a_cut_traceback_shows_its_last_frame():
    text = _summary(DEV / "342.log")
    assert '; the last frame it shows: File "...' in text and 'train_multigpu.py", line 1, in <module>.' in text


def test_a_stall_names_the_pod_and_an_overflow_quotes_its_line():
    assert _summary(DEV / "836.log").startswith("progress of the job (a worker in pod 836) stopped")
    assert "; first: Gradient overflow. Skipping step" in _summary(DEV / "1013.log")


@pytest.mark.parametrize("text, want", [("a b", "a b."), ("a b.", "a b."), ("a b...", "a b..."), ("a b:", "a b."),
                                        ("GLHF!", "GLHF!"), ("a b; ", "a b."), ("", "")])
def test_a_summary_ends_once(text, want):
    from gangscope.pipeline.diagnose.summary import sentence  # (here: the module imports at 512da37, which has none)

    assert sentence(text) == want
