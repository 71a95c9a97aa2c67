"""Where a partition's committed offset stands, and where a new owner starts reading it.

A multi-line record still open (a traceback whose end has not come, a partial line) started at an
offset before the partition's next one. With its state checkpointed at the next offset
(pipeline/run/checkpoint.py), the offset committed is the next one: the new owner restores the
checkpoint and goes on, and a SIGTERM leaves nothing read uncommitted. The offset an owner without
a usable checkpoint (none, another schema) must read again from, the first line of the oldest open
record, goes with the commit as its metadata (`{"open_from": N}`); without a checkpoint the
committed offset is that first line itself, as before.
"""

from __future__ import annotations

import json

from kafka.structs import OffsetAndMetadata


def commit_point(next_offset: int, open_positions: list[int], checkpointed: bool) -> OffsetAndMetadata:
    """The offset to commit for a partition read up to `next_offset` whose open records started at
    `open_positions`; `checkpointed`: its state at `next_offset` is saved."""
    open_from = min([next_offset, *open_positions])
    if checkpointed and open_from < next_offset:
        return OffsetAndMetadata(next_offset, json.dumps({"open_from": open_from}), -1)
    return OffsetAndMetadata(open_from, "", -1)


def resume_point(committed) -> tuple[int | None, int | None]:
    """(the committed offset, where to read from without a checkpoint) of what `committed(tp,
    metadata=True)` returned (an OffsetAndMetadata, an int from an older client, or None)."""
    if committed is None:
        return None, None
    offset = getattr(committed, "offset", committed)
    if not isinstance(offset, int) or offset < 0:
        return None, None
    try:
        open_from = json.loads(getattr(committed, "metadata", "") or "{}").get("open_from")
    except (ValueError, AttributeError):
        open_from = None
    if not isinstance(open_from, int) or not 0 <= open_from <= offset:
        open_from = offset
    return offset, open_from
