"""ContainerCurator._sync_stream looks back from one line of a stream to the one before it by a
search for the stream's CRI marker, not line by line (issue 19): the same state as the line-by-line
walk it replaced (kept here as the reference), on random blocks of mixed streams, partial chunks,
markers inside texts and runs of equal times, with the look-back bound small enough to be hit."""

from __future__ import annotations

import random

import pytest

from gangscope.pipeline.curate import container as container_module
from gangscope.pipeline.curate.container import ContainerCurator
from gangscope.pipeline.curate.stats import CurationStats
from gangscope.pipeline.sources.files import PodIdentity


def walk_line_by_line(last_time: dict, last_seq: dict, block: bytes, pos: int, stream: bytes, skipped_from: int,
                      time: bytes | None, limit: int) -> None:
    """The look-back of 27d1d67, one line at a time."""
    p = pos - 1
    first_ts = None
    run = 0
    done = reached = False
    steps = 0
    marker = b" " + stream + b" F"
    want = None if time is None else time.decode("utf-8", "replace")
    while steps < limit:
        if p < skipped_from:
            reached = True
            break
        start = block.rfind(b"\n", 0, p) + 1
        space = block.find(b" ", start, p)
        end, p = p, start - 1
        steps += 1
        if space < 0 or not block.startswith(marker, space, end):
            continue
        ts = block[start:space].decode("utf-8", "replace")
        if first_ts is None:
            first_ts = ts
            if want is not None and ts != want:
                done = True
                break
        elif ts == first_ts:
            run += 1
        else:
            done = True
            break
    if first_ts is None:
        return
    name = stream.decode()
    if not done and reached and last_time.get(name) == first_ts:
        run += last_seq[name] + 1
    last_time[name] = first_ts
    last_seq[name] = run


def random_block(rng: random.Random) -> bytes:
    lines = []
    t = 0
    for _ in range(rng.randint(0, 40)):
        if rng.random() < 0.6:
            t += 1
        stream = rng.choice(["stdout", "stderr", "stdout", "stdout"])
        tag = rng.choice(["F", "F", "F", "P"])
        text = rng.choice(["x", "a stdout F b", "stderr F", "", " stdout F ", "plain"])
        kind = rng.random()
        if kind < 0.05:
            lines.append("")  # an empty line
        elif kind < 0.1:
            lines.append(f"garbage{text}")
        else:
            lines.append(f"T{t:03d} {stream} {tag} {text}")
    return "\n".join(lines).encode()


@pytest.mark.parametrize("limit", [1, 2, 3, 5, 10_000])
def test_sync_stream_same_state_as_the_line_walk(monkeypatch, limit):
    monkeypatch.setattr(container_module, "SEQ_LOOKBACK_LINES", limit)
    rng = random.Random(limit)
    curator = ContainerCurator(PodIdentity("ns", "pod"), "cri", CurationStats())
    checked = 0
    for _ in range(3000):
        block = random_block(rng)
        starts = [0] + [i + 1 for i, b in enumerate(block) if b == 10]
        pos = rng.choice(starts + [len(block) + 1])
        skipped = rng.choice([s for s in starts if s <= pos] or [0])
        stream = rng.choice([b"stdout", b"stderr"])
        time = rng.choice([None, b"T001", b"T002", b"T005"])
        state = ({"stdout": rng.choice(["T001", "T002", None])}, {"stdout": rng.randint(0, 3)})
        if rng.random() < 0.5:
            state[0]["stderr"], state[1]["stderr"] = "T001", 1
        curator.last_time, curator.last_seq = dict(state[0]), dict(state[1])
        want_time, want_seq = dict(state[0]), dict(state[1])
        walk_line_by_line(want_time, want_seq, block, pos, stream, skipped, time, limit)
        curator._sync_stream(block, pos, stream, skipped, time)
        assert (curator.last_time, curator.last_seq) == (want_time, want_seq), (block, pos, stream, skipped, time)
        checked += 1
    assert checked == 3000
