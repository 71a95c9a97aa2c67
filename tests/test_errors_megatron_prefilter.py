"""ErrorDetector's prefilter and Megatron's iteration line (NVIDIA/Megatron-LM megatron/training/training.py
training_log: ' iteration N/ M | ... | lm loss: {:.6E} | loss scale: ... | grad norm: {:.3f} | ...'). The key
"| grad norm: " let every healthy iteration line through to the rule table (~1/6 of a Megatron step line's
curation); the rule megatron_grad_norm_nonfinite needs none of its own: 'grad norm: nan|inf|-inf' holds
the ": nan" / ": inf" / ": -inf" keys of loss_printed_nonfinite. The prefilter stays exact for it. Values
in the texts are ours (the layout is the fixture's, fixtures/dialects/megatron)."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings, strategies as st

from gangscope.parsers.errors import LINE_RULES, PREFILTER, detect

HERE = Path(__file__).resolve().parent
FIXTURES = sorted((HERE.parent / "fixtures" / "dialects" / "megatron").rglob("*.log"))
GRAD_NORM_RULE = next(r.pattern for r in LINE_RULES if r.name == "megatron_grad_norm_nonfinite")


def iteration_line(step: int, loss: str, grad_norm: str) -> str:
    return (f" [2026-11-30 04:41:19.416903] iteration {step:8d}/     100 | consumed samples: {step * 128:12d} | "
            f"elapsed time per iteration (ms): 1411.5 | learning rate: 3.000000E-05 | global batch size:   128 | "
            f"lm loss: {loss} | loss scale: 1.0 | grad norm: {grad_norm} | number of skipped iterations:   0 | "
            f"number of nan iterations:   0 |")


def test_healthy_iteration_lines_of_the_fixture_do_not_pass_the_prefilter():
    lines = [line.split(" F ", 1)[1] for path in FIXTURES for line in path.read_text().splitlines() if "| grad norm: " in line]
    assert lines
    healthy = [t for t in lines if detect(t) is None]
    assert healthy
    for text in healthy:
        assert re.search(PREFILTER, text) is None, text


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 10**7), st.floats(allow_nan=True, allow_infinity=True), st.floats(allow_nan=True, allow_infinity=True))
def test_an_iteration_line_passes_the_prefilter_exactly_when_a_rule_can_find_it(step, loss, grad_norm):
    text = iteration_line(step, f"{loss:.6E}", f"{grad_norm:.3f}")
    found = detect(text)
    if found is not None:  # every line the table finds passes the prefilter
        assert re.search(PREFILTER, text), text
    finite = loss == loss and grad_norm == grad_norm and abs(loss) != float("inf") and abs(grad_norm) != float("inf")
    assert (found is None) == finite
    if grad_norm != grad_norm or abs(grad_norm) == float("inf"):
        assert found[1] == "nan_loss"


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["| ", "grad norm: ", "nan", "inf", "-inf", "1.25", " |", " ", "|", "loss: ", "NAN", "x"]),
                max_size=8).map("".join))
def test_the_grad_norm_rule_never_matches_a_text_the_prefilter_refuses(text):
    if GRAD_NORM_RULE.search(text):
        assert re.search(PREFILTER, text), text
