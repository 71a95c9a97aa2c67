"""Rules of helper h16i (issue 16): XLA's rendezvous watchdog, a stall report of the h16g kind.

XLA (openxla/xla xla/service/rendezvous.cc AwaitAndLogIfStuck) logs that a thread waiting for its peers
"may be stuck" (a stall report: a hang when nothing moves after it), that it is "unstuck" after all (the
stall resolved: no hang), or that its termination timeout ran out and it exits (a hang that ended the
process). Written from dev 279 (fixtures/eval README) and the source's three wordings. Values in the texts are ours."""

from __future__ import annotations

import re

import pytest

from gangscope.parsers.errors import PREFILTER, detect
from diagnose_in_process import the_diagnosis

STUCK_2022 = "2026-03-02 11:20:01.512993: E external/xla/xla/service/rendezvous.cc:31] This thread has been waiting for 10 seconds and may be stuck:"
STUCK = ("2026-03-02 11:20:01.512993: E external/xla/xla/service/rendezvous.cc:38] This thread has been waiting for "
         "`initialize clique for rank 3; clique=devices=[0,1,2,3]; stream=0; run_id=77120` for 10 seconds and may be "
         "stuck. Expected 4 threads to join the rendezvous, but not all of them arrived on time.")  # fmt: skip
STUCK_ID = ("E0302 11:20:01.513000 77120 rendezvous.cc:120] [id=2] This thread has been waiting for `thunk initialization "
            "completion for device ordinal 1` for 20 seconds and may be stuck. All 8 threads joined the rendezvous, however "
            "the leader has not marked the rendezvous as completed. Leader can be deadlocked inside the rendezvous callback.")  # fmt: skip
UNSTUCK_2022 = ("2026-03-02 11:20:14.100311: E external/xla/xla/service/rendezvous.cc:36] Thread is unstuck! Warning above was a "
                "false-positive. Perhaps the timeout is too short.")  # fmt: skip
UNSTUCK = ("E0302 11:20:14.100000 77120 rendezvous.cc:142] [id=2] This thread is unstuck waiting for `initialize clique for "
           "rank 3` after 13.412s. Threads joined rendezvous with significant delay, system can be overloaded and theads make "
           "progess at different rate. Warning above was a false-positive. Perhaps the timeout is too short.")  # fmt: skip
TERMINATED_2022 = ("2026-03-02 11:40:01.600000: E external/xla/xla/service/rendezvous.cc:41] Termination timeout of 1200 seconds "
                   "exceeded. Exiting to ensure a consistent program state.")  # fmt: skip
TERMINATED = ("F0302 11:40:01.600000 77120 rendezvous.cc:170] [id=2] Termination timeout for `initialize clique for rank 3` of "
              "1200 seconds exceeded. Exiting to ensure a consistent program state. Expected 4 threads to join the rendezvous, "
              "but only 3 of them arrived on time.")  # fmt: skip


def rule_and_category(line: str) -> tuple[str, str] | None:
    found = detect(line)
    return (found[0].name, found[1]) if found is not None else None


@pytest.mark.parametrize(
    "line, rule",
    [
        (STUCK_2022, "xla_rendezvous_stuck"),
        (STUCK, "xla_rendezvous_stuck"),
        (STUCK_ID, "xla_rendezvous_stuck"),
        (UNSTUCK_2022, "xla_rendezvous_unstuck"),
        (UNSTUCK, "xla_rendezvous_unstuck"),
        (TERMINATED_2022, "xla_rendezvous_terminated"),
        (TERMINATED, "xla_rendezvous_terminated"),
    ],
)
def test_xla_rendezvous_watchdog_lines_are_hang(line, rule):
    assert re.search(PREFILTER, line)
    assert rule_and_category(line) == (rule, "hang")


@pytest.mark.parametrize(
    "line",
    [
        "This thread has been waiting for the lock for a while",  # no seconds, no "may be stuck"
        "Termination timeout of the job set to 600 seconds",
        "the worker thread is unstuck now",
    ],
)
def test_lines_like_the_xla_watchdog_are_not_it(line):
    found = rule_and_category(line)
    assert found is None or not found[0].startswith("xla_rendezvous")


STEPS = "".join(f"step {i} loss {2.5 - i / 100:.4f}\n" for i in range(1, 9))


def test_an_xla_rendezvous_stall_with_nothing_after_it_is_a_hang(tmp_path):
    text = STEPS + STUCK + "\n" + STUCK.replace("rank 3;", "rank 0;")[:150] + "\n"  # the second line cut, as pastes are
    d = the_diagnosis(tmp_path, text)
    assert d.category == "hang"
    assert "may be stuck" in d.summary


def test_an_xla_stall_the_watchdog_called_a_false_positive_is_no_hang(tmp_path):
    for unstuck in (UNSTUCK, UNSTUCK_2022):
        text = STEPS + STUCK + "\n" + unstuck + "\n"
        assert the_diagnosis(tmp_path, text).category == "running", unstuck


def test_an_xla_stall_training_went_on_from_is_no_hang(tmp_path):
    assert the_diagnosis(tmp_path, STUCK_2022 + "\n" + STEPS).category == "running"


def test_xla_s_termination_timeout_is_a_hang_that_ended_the_process(tmp_path):
    text = STEPS + STUCK + "\n" + TERMINATED + "\n"
    d = the_diagnosis(tmp_path, text)
    assert (d.category, d.outcome) == ("hang", "failed")
    assert "Termination timeout" in str(d.evidence)


def test_a_failure_after_an_xla_stall_warning_is_the_diagnosis(tmp_path):
    text = STEPS + STUCK + "\n" + (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 88, in <module>\n'
        "    state = train_step(state, batch)\n"
        "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 8.00GiB.\n"
    )  # fmt: skip
    assert the_diagnosis(tmp_path, text).category != "hang"
