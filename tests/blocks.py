"""Blocks of a log as the file source hands them to a curator (read_blocks: a block never ends
inside a line, nor with its newline), for tests that hold a block path to the line-by-line one."""

from __future__ import annotations


def cut(data: bytes, points: list[int]) -> list[bytes]:
    """`data` (whole lines, no trailing newline) cut into blocks at the newlines chosen by `points`."""
    lines = data.split(b"\n")
    bounds = sorted({p % len(lines) for p in points} - {0})
    blocks, start = [], 0
    for b in [*bounds, len(lines)]:
        blocks.append(b"\n".join(lines[start:b]))
        start = b
    return blocks
