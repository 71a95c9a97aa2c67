"""The prefilter of horovod's stalled-rank line (rule horovod_stalled_rank, horovod/common/stall_inspector.cc
`N: [ops]`): ": [" followed by a Horovod op name before any bracket, not ": [" alone, which let every
`"layerN": [` of a JSON config dump through the block scan (~5 % of a realistic replay's CPU in exact_lines
callbacks). It stays exact: every line the rule's pattern finds passes it. Values in the texts are ours."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings, strategies as st

from gangscope.parsers.errors import LINE_RULES, PREFILTER, detect


def rule_and_category(line: str) -> tuple[str, str] | None:
    found = detect(line)
    return (found[0].name, found[1]) if found is not None else None


# --- horovod's stalled-rank line: the prefilter no longer takes every ": [" (JSON dumps), and stays exact


HOROVOD_STALLED = re.compile(next(r.pattern.pattern for r in LINE_RULES if r.name == "horovod_stalled_rank"))


@pytest.mark.parametrize(
    "line",
    [
        '  "layer1": [64, 128, 3, 3],',
        '{"model": {"blocks": [{"dim": 512, "heads": [8, 8]}], "dropout": [0.1, 0.1]}}',
        "0: [1, 2, 3]",
        "'milestones': [30, 60, 90], 'gamma': 0.1",
    ],
)
def test_json_and_config_lists_do_not_pass_the_prefilter(line):
    assert re.search(PREFILTER, line) is None


@pytest.mark.parametrize(
    "line",
    [
        "5: [horovod_allreduce.0, horovod_allreduce.1, horovod_allreduce.10 ...]",
        "0!: [DistributedSGD_Allreduce/cond/HorovodAllreduce_grads_0]",
        "[1,0]<stderr>:3: [allreduce.layer1.weight, allreduce.layer2.weight, HOROVOD_ALLGATHER_0 ...]",
        "  12: [grads_0, grads_1, HorovodBroadcast_conv1_kernel_0]",
    ],
)
def test_horovod_stalled_rank_lines_pass_the_prefilter_and_match(line):
    assert re.search(PREFILTER, line)
    text = line.split("<stderr>:", 1)[-1]
    assert rule_and_category(text) == ("horovod_stalled_rank", "hang")


@pytest.mark.parametrize(
    "text",
    [
        "3: [horovod_allreduce.0]",
        "3: [a, b, c, Horovod_x",  # cut before its "]"
        "3: [a: [b, horovod_y]",  # ": [" inside a name: the last one before the op name is found
        "0!: [x, y]",
        "3: [a[0], horovod_z]",
        "3: [",
    ],
)
def test_the_horovod_prefilter_finds_every_line_the_rule_finds(text):
    # the prefilter is exact: a line the rule's pattern matches always passes it
    if HOROVOD_STALLED.search(text):
        assert re.search(PREFILTER, text), text


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["3", "0", "!", ": [", ":", " ", "[", "]", ", ", "horovod_allreduce.1", "Horovod",
                                 "HOROVOD_X", "grads_0", '"layer": [', "\n", "a"]), max_size=8).map("".join))
def test_the_horovod_prefilter_is_exact_on_generated_lines(text):
    if HOROVOD_STALLED.search(text):
        assert re.search(PREFILTER, text), text
