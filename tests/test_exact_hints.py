"""A sub-stream tests a parser's PREFILTER on a line with `re` only where Hyperscan could not answer
exactly: the prefilters Hyperscan compiles as they are (not anchored at the start) are scanned
together, once per line (scan.ExactHints). These tests hold that scan to `re.search` on every
fixture line and on generated text made of what the prefilters look for, and the records of a
sub-stream to those it gives with `re` alone.
"""

from __future__ import annotations

import random
import re

import pytest

from gangscope.parsers.errors import ErrorDetector
from gangscope.parsers.lines import Line, strip_rank_prefixes
from gangscope.parsers.steps import StepParser
from gangscope.pipeline.curate.scan import ExactHints, exact_hints_for
from gangscope.pipeline.curate.substream import LINE_PARSERS, SubStream
from fixture_text import fixture_lines

PATTERNS = [cls.PREFILTER for cls in LINE_PARSERS]
SEARCHES = [re.compile(p).search for p in PATTERNS]


def hints() -> ExactHints:
    found = exact_hints_for(tuple(PATTERNS))
    assert found is not None
    return found


def agrees(exact: ExactHints, text: str) -> bool:
    found = exact.of(text, exact.mask)
    if found is None:
        return True
    for i, search in enumerate(SEARCHES):
        if exact.mask >> i & 1 and bool(found >> i & 1) != (search(text) is not None):
            return False
    return True


def fixture_texts() -> list[str]:
    out = []
    for line in fixture_lines():
        out.append(line)
        message = line.split(" ", 3)[-1] if line[:4].isdigit() else line
        out.append(strip_rank_prefixes(message)[0])
    return out


def test_the_step_and_error_prefilters_are_answered_by_the_scan():
    mask = hints().mask
    assert mask >> LINE_PARSERS.index(StepParser) & 1
    assert mask >> LINE_PARSERS.index(ErrorDetector) & 1
    assert not all(mask >> i & 1 for i in range(len(PATTERNS))), "the trace prefilter (anchored) stays with re"


def test_only_the_wanted_prefilters_are_scanned():
    exact = hints()
    step, error = 1 << LINE_PARSERS.index(StepParser), 1 << LINE_PARSERS.index(ErrorDetector)
    text = "step=10 loss=0.5 RuntimeError: boom"
    assert exact.of(text, exact.mask) & (step | error) == step | error
    assert exact.of(text, step) == step
    assert exact.of(text, error) == error


def test_texts_the_scan_cannot_judge_are_left_to_re():
    exact = hints()
    assert exact.of("step=10 loss=0.5 \u00e9", exact.mask) is None
    assert exact.of("step=10\nloss=0.5", exact.mask) is None
    assert exact.of("step=10 \x1f loss=0.5", exact.mask) is None
    assert exact.of("step=10 loss=0.5", exact.mask) is not None


def test_every_fixture_text_gets_the_answer_of_re():
    exact = hints()
    texts = fixture_texts()
    judged = matched = 0
    for text in texts:
        assert agrees(exact, text), text
        found = exact.of(text, exact.mask)
        judged += found is not None
        matched += bool(found)
    assert judged > 10_000 and matched > 1_000


@pytest.mark.parametrize("seed", range(4))
def test_generated_text_gets_the_answer_of_re(seed):
    rng = random.Random(seed)
    exact = hints()
    pieces = ["step", "Step", "STEP", "iter", "Iteration", "iteration ", "batch", "Batch", "loss", "Loss", "'loss'",
              '"loss"', "=", ": ", ":", "/", "[", "]", "(", ")", "|", " | ", "0", "7", "12", "?", "K", "it/s", "s/it",
              "ms/step", "Epoch ", "Epochs = ", "ETA: ", "Total steps = ", "[Rank ", "[PG ", "Error", "Exception",
              " grad norm: ", "NAN |", "x", "_", " ", "  ", "\t", "\r", "\x0b", "\x0c", ", "]
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        assert agrees(exact, text), repr(text)


def test_a_sub_stream_gives_the_records_it_gave_with_re_alone():
    lines = [t for t in fixture_texts() if t][:60_000]
    fast, slow = SubStream(LINE_PARSERS), SubStream(LINE_PARSERS)
    assert fast.exact is not None
    slow.exact = None
    records = 0
    for seq, text in enumerate(lines):
        line = Line("2024-05-01T12:00:00.000000000Z", seq, text, None, None)
        a, b = fast.feed(line), slow.feed(line)
        assert [repr(r) for r in a] == [repr(r) for r in b], text
        records += len(a)
    assert records > 500
