"""Raw CRI blocks read without decoding them: which parsers could want a line, its time and stream,
whether it may continue an open record, the deadline text a line's time is compared with."""

from __future__ import annotations

import re
from typing import Callable

from gangscope.parsers import times
from gangscope.pipeline.curate.scan import BlockScanner, TextHints


def combined_prefilter(parser_classes: tuple[type, ...]) -> Callable[[str], object]:
    if not parser_classes:
        return lambda text: None
    return re.compile("|".join(f"(?:{cls.PREFILTER})" for cls in parser_classes)).search


_SCANNERS: dict[tuple[type, ...], BlockScanner | None] = {}
_TEXT_HINTS: dict[tuple[type, ...], TextHints | None] = {}


def text_hints_for(parser_classes: tuple[type, ...]) -> TextHints | None:
    """One compiled per-text scanner per parser table (see scan.TextHints)."""
    if parser_classes not in _TEXT_HINTS:
        _TEXT_HINTS[parser_classes] = TextHints.build([cls.PREFILTER for cls in parser_classes])
    return _TEXT_HINTS[parser_classes]


def scanner_for(parser_classes: tuple[type, ...]) -> BlockScanner | None:
    """One compiled block scanner per parser table (compiling takes milliseconds)."""
    if parser_classes not in _SCANNERS:
        _SCANNERS[parser_classes] = BlockScanner.build([cls.PREFILTER for cls in parser_classes])
    return _SCANNERS[parser_classes]




def skipped_from(stale: dict[bytes, int], pos: int) -> dict[bytes, int]:
    """Both streams stale from `pos` on, unless one already was from an earlier line."""
    if len(stale) == 2:
        return stale
    return {b"stdout": stale.get(b"stdout", pos), b"stderr": stale.get(b"stderr", pos)}


def time_and_stream_of(block: bytes, pos: int, end: int) -> tuple[bytes | None, bytes | None]:
    """(time, stream) of the CRI line at pos; the time only for a complete (F) line, the
    only kind whose time sets its stream's seq."""
    first = block.find(b" ", pos, end)
    if first < 0:
        return None, None
    second = block.find(b" ", first + 1, end)
    if second < 0:
        return None, None
    complete = block.startswith(b"F", second + 1, end)
    return (block[pos:first] if complete else None), block[first + 1 : second]


def newlines(block: bytes, start: int = 0, end: int | None = None) -> int:
    """block.count(b"\\n", start, end), in less time: CPython's bytes.count of one byte compares the bytes
    one by one (stringlib's countchar), bytes.replace finds them with memchr (over a 1 MiB block of the
    realistic corpus, ~5x less time for the one copy it makes)."""
    part = block if start == 0 and end is None else block[start:end]
    return len(part) - len(part.replace(b"\n", b""))


# torch's "[rankN]:" alone at the start of a line (parsers/lines.py strips it as rank N, no local
# rank, when no other bracket follows): the one sub-stream such a line can continue
_RANK_HEAD = re.compile(rb"\[rank(\d{1,9})\]: ?").match


def may_continue(block: bytes, pos: int, end: int, open_now: tuple[frozenset, frozenset, frozenset]) -> bool:
    """Whether the raw line at pos can belong to an open record: its stream has an open
    record, and (for records of a rank-prefixed sub-stream) it carries a prefix, that of an
    open sub-stream where the prefix is torch's plain `[rankN]:`."""
    line = block[pos:end] if end >= 0 else block[pos:]
    parts = line.split(b" ", 3)
    if len(parts) < 4:
        return True  # not plain CRI: let the line reader judge it
    plain, prefixed, ranked = open_now
    stream = parts[1]
    if stream in plain:
        return True
    if stream not in prefixed:
        return False
    return prefix_may_continue(parts[3], stream, ranked)


def prefix_may_continue(text: bytes, stream: bytes, ranked: frozenset) -> bool:
    """`may_continue` for the text of a line of a stream whose open records are all rank-prefixed:
    whether it carries a prefix that may be theirs."""
    if text[:5] == b"[rank":
        m = _RANK_HEAD(text)
        if m is not None and text[m.end() : m.end() + 1] != b"[":
            return (stream, int(m.group(1))) in ranked
    first = text[:1]
    # a rank prefix (parsers/lines.py): brackets, srun's padded task id, or torch's "[rankN]:" after a head
    return first == b"[" or first == b" " or first.isdigit() or text.find(b"[rank", 1, 512) > 0


# A deadline is compared with the first characters of a line's time, to the hundredth of a
# second ("2024-05-01T12:00:00.12"). Runtimes trim trailing zeros, so the text comparison can be
# off by less than that; it only decides when to ask the parsers, which judge exactly.
DEADLINE_CHARS = 22


def deadline_text(seconds: float) -> bytes:
    whole = int(seconds)
    hundredths = int((seconds - whole) * 100)
    return f"{times.utc_second(whole)}.{hundredths:02d}".encode()
