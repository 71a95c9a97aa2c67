"""Blocks of a log as the file source hands them to a curator (read_blocks: a block never ends
inside a line, nor with its newline), for tests that hold a block path to the line-by-line one, and
one curator fed such blocks."""

from __future__ import annotations

from gangscope.parsers.records import encode


def cut(data: bytes, points: list[int]) -> list[bytes]:
    """`data` (whole lines, no trailing newline) cut into blocks at the newlines chosen by `points`."""
    lines = data.split(b"\n")
    bounds = sorted({p % len(lines) for p in points} - {0})
    blocks, start = [], 0
    for b in [*bounds, len(lines)]:
        blocks.append(b"\n".join(lines[start:b]))
        start = b
    return blocks


def curate_blocks(cur, stats, blocks: list[bytes]) -> tuple[list[bytes], dict]:
    """Feed `blocks` to the curator `cur` and close it, no unit of work failing (`stats`: its CurationStats):
    the records' bytes and the stats' int counters."""
    out = []
    for block in blocks:
        out.extend(cur.feed_block(block))
    out.extend(cur.close())
    assert stats.failures.summary() == []
    counts = {k: v for k, v in vars(stats).items() if isinstance(v, int)}
    return [encode(r) for r in out], counts
