"""A step line straight to its step parser: the one case of `ContainerCurator._logical` most step lines are.

A complete line of an ASCII block whose block-scan hints are the step parser's prefilter alone, and
exact on its text (`exact_from`: the rank prefixes end where the exact bits hold), reaches no other
parser (`SubStream.feed` feeds a closed parser only where its bit is hinted). Where its sub-stream
exists and holds no open record, and the step parser reads it whole (`StepParser.read_whole`: one
segment, no bar, no launcher head, a straight dialect or none), `_logical` and `SubStream.feed` come
down to: the Trainer folder's wait, the line's seq, the parser's `feed_read`, `_emit`. That is done
here, with no test of theirs repeated; any other line returns False with nothing changed, and goes
the whole way. tests/test_h19o_step_lines.py holds the two paths' records equal.

What it saves is the Python of those stages, ~10k instructions of a step line's 110-165k (callgrind,
2,000-line corpora per family: see the commit after 6cb11b0); the rest is the layout read, the
record, `_emit` (Trainer folder, redaction, stamp and id) and the block scan, which it keeps.
"""

from __future__ import annotations

from gangscope.parsers.lines import COMPOSE_BAR, COMPOSE_REACH, INNER_REACH, PREFIX_FIRST, TORCHX_MARK, TORCHX_REACH, Line, strip_rank_prefixes
from gangscope.parsers.steps import NOT_WHOLE, StepParser
from gangscope.pipeline.curate.substream import LINE_PARSERS, RuleFailed

# the step parser's place in the parser table (its bit in the block scan's hints)
STEP_INDEX = LINE_PARSERS.index(StepParser)
STEP_BIT = 1 << STEP_INDEX
_new_line = tuple.__new__


def feed_step_line(c, time: str, stream: str, text: str, exact_from: int, out: list) -> bool:
    """`c._logical(time, stream, text, out, hints=STEP_BIT, exact_from=exact_from)` where the line is
    the case above (True), else False and nothing done. `c` a ContainerCurator of `LINE_PARSERS`
    whose exact mask holds STEP_BIT (the caller's test)."""
    first = text[:1]
    if (first in PREFIX_FIRST or first.isdigit() or text.find("[rank", 1, INNER_REACH) > 0 or text[24:25] == "["
            or text.find(COMPOSE_BAR, 1, COMPOSE_REACH) > 0  # [h24d] docker compose's prefix (parsers/lines.py)
            or text.find(TORCHX_MARK, 1, TORCHX_REACH) > 0):  # [h25d] torchx's role/replica prefix (parsers/lines.py)
        size = len(text)
        body, rank, local_rank = strip_rank_prefixes(text)
        if exact_from < size - len(body):  # the hints are not exact on the stripped text
            return False
        key = (stream, rank, local_rank) if (rank is not None or local_rank is not None) else stream
    else:
        if exact_from < 0:
            return False
        body, rank, local_rank, key = text, None, None, stream
    sub = c.subs.get(key)
    if sub is None or sub.open_bits:
        return False
    parser = sub.parsers[STEP_INDEX]
    found = parser.read_whole(body)
    if found is NOT_WHOLE:
        return False
    # from here on, _logical's steps for this line, in its order
    if c.trainer_logs.bar_due is not None:
        c._bar_wait_ends(out)
    seq = c.next_seq(stream, time)
    sub.last_time = time
    try:
        records = parser.feed_read(found, _new_line(Line, (time, seq, body, rank, local_rank)))
    except Exception as exc:  # as SubStream.feed: the parser is replaced, the line counted as its failure
        records = c._rule_failed(RuleFailed([], sub._reset(parser, exc, None)), key, time, seq)
    if records:
        c._emit(records, stream, out)
    return True
