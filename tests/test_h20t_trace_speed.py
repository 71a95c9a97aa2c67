"""Issue 19 (h20t): the File-line cache of trace_blocks and SubStream.due from open_bits give what
the uncached reads give."""

import msgspec

from gangscope.parsers import trace_blocks
from gangscope.parsers.lines import Line
from gangscope.parsers.trace_blocks import parse_block
from gangscope.pipeline.curate.substream import LINE_PARSERS, SubStream

TB = [
    "Traceback (most recent call last):",
    '  File "/workspace/train.py", line 212, in <module>',
    "    main()",
    '  File "/workspace/train.py", line 80, in main  ',
    "    loss.backward()",
    '  File "<string>", line 3',
    "    ^",
    "RuntimeError: boom",
]


def test_frames_read_the_same_from_the_cache():
    trace_blocks._FRAME_OF.clear()
    first = msgspec.to_builtins(parse_block(TB))
    assert TB[1] in trace_blocks._FRAME_OF and trace_blocks._FRAME_OF[TB[2]] is None
    again = parse_block(TB)
    assert msgspec.to_builtins(again) == first
    assert [f["function"] for f in first["frames"]] == ["<module>", "main", None]
    # new Frame objects each time: a redaction of one trace's frames leaves the other's
    other = parse_block(TB)
    other.frames[0].file = "masked"
    assert parse_block(TB).frames[0].file == "/workspace/train.py"


def test_frame_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(trace_blocks, "_FRAME_LINES", 3)
    trace_blocks._FRAME_OF.clear()
    for n in range(10):
        parse_block(["Traceback (most recent call last):", f'  File "/a.py", line {n}, in f', "ValueError: x"])
        assert len(trace_blocks._FRAME_OF) <= 3
    long = '  File "/' + "a" * 600 + '.py", line 1, in f'
    rec = parse_block(["Traceback (most recent call last):", long, "ValueError: x"])
    assert rec.frames[0].line == 1 and long not in trace_blocks._FRAME_OF


def _old_due(sub):
    from gangscope.parsers import times
    if not sub.last_time:
        return None
    quiet = [p.quiet_s for _bit, p in sub.expiring if p.open]
    if not quiet:
        return None
    last = times.seconds(sub.last_time)
    return None if last is None else last + min(quiet)


def test_due_from_open_bits_matches_the_open_parsers():
    sub = SubStream(LINE_PARSERS)
    t = "2024-05-01T12:00:00.100000000Z"
    for i, text in enumerate(TB[:5] + ["RuntimeError: boom", "more of the message"]):
        sub.last_time = t
        sub.feed(Line(t, i, text))
        assert sub.due() == _old_due(sub)
    sub.expire("2024-05-01T12:10:00.000000000Z")
    assert sub.due() == _old_due(sub) is None
