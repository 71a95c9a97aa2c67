"""StepParser.read_whole tests a line's marks once per layout (issue 19): the same answer as the
tests it made on every line (kept below as the reference, as of 0ff5f1e), on texts of step lines,
marks, launcher heads, blanks, non-ASCII digits and long lines, each read after others of its
layout. Values in the lines are ours."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from gangscope.parsers import steps
from gangscope.parsers.dialects import ShapeCache
from gangscope.parsers.steps import NOT_WHOLE, StepParser, _LAUNCHER, _OPENING_IDS


def reference_read_whole(parser: StepParser, text: str):
    """read_whole as of 0ff5f1e."""
    if parser._block is not None or parser._bar_lines or not text or text.isspace():
        return NOT_WHOLE
    if "\x1b" in text or "\r" in text or "\b" in text or "%|" in text or "_mem " in text:
        return NOT_WHOLE
    first = text[0]
    if (first == "[" or "0" <= first <= "9") and _LAUNCHER(text):
        return NOT_WHOLE
    found = parser._cache.fields(text)
    if found is not None and found[1] is not None and id(found[0]) in _OPENING_IDS:
        return NOT_WHOLE
    return found


_PIECES = [
    "step=12 loss=1.25 lr=3.00e-04", "{'loss': 2.4952, 'grad_norm': 0.2320, 'learning_rate': 2.9980e-04, 'epoch': 0.01}",
    " iteration      328/   20000 | consumed samples:       167936 | elapsed time per iteration (ms): 1099.0 | "
    "learning rate: 3.000000E-04 | global batch size:   512 | lm loss: 2.139822E+00 | loss scale: 65536.0 | grad norm: 1.414 |",
    "[titan] 2024-05-01 12:00:00,756 - root - INFO - step: 22  loss:  2.48196  memory: 61.34GiB(77.41%)  tps: 3,853  mfu: 41.2%",
    "[2024-05-01 12:00:00,524] [INFO] [logging.py:96:log_dist] [Rank 0] step=297, skipped=0, lr=[0.000295545], mom=[(0.9, 0.999)]",
    " 1%|          | 386/20000 [01:36<81:43,  4.00it/s]", "Epoch 1/3", "      Epoch    GPU_mem   box_loss", "12: ", "[1,3]<stdout>: ",
    "[1,3]<stderr>:", "\x1b[31m", "\r", "\b", "   ", "\t", "\u0663", "\uff15", "step ", "0", "7", ": ", "[", "x" * 600, "\u00e9" * 400,
    "loss=nan", "iter 5: loss 2.3456, time 45.67ms",
]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=4).map("".join), min_size=1, max_size=6),
       st.lists(st.integers(0, 9), min_size=1, max_size=8))
def test_read_whole_is_what_it_was(texts, digits):
    """Each text, then the same text with other ASCII digits (the same layout), read by a parser of a cache of
    its own and by the reference of another: the same answers, the same fields."""
    steps._WHOLE.clear()
    fast, slow = StepParser(ShapeCache()), StepParser(ShapeCache())
    table = str.maketrans("0123456789", "".join(str(digits[i % len(digits)]) for i in range(10)))
    for text in texts:
        for t in (text, text.translate(table), text):
            got, want = fast.read_whole(t), reference_read_whole(slow, t)
            assert (got is NOT_WHOLE) == (want is NOT_WHOLE), t
            if got is not NOT_WHOLE:
                assert (got is None) == (want is None), t
                if got is not None:
                    assert got[0] is want[0] and got[1] == want[1], t


def test_an_open_parser_reads_nothing_whole():
    parser = StepParser(ShapeCache())
    parser._bar_lines = True
    assert parser.read_whole("step=1 loss=2.0") is NOT_WHOLE
    assert StepParser(ShapeCache()).read_whole("") is NOT_WHOLE
