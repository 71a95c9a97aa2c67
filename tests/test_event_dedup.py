"""Replay finds the repeats of its event records on disk (pipeline/correlate/event_dedup.py) with
the rule the decoder and the stream applied in memory: the first copy read, over all files in
order, is the record; a primary copy after a primary copy of the same id in the same file is a
`duplicate`."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from gangscope.parsers.events import Skip, decode_event_stream
from gangscope.parsers.id_set import IdSet
from gangscope.pipeline.correlate.event_book import EventStream
from gangscope.pipeline.correlate.event_dedup import RepeatedEvents, is_dropped
from gangscope.pipeline.curate.events import every_event_of_lines

TS = "2026-01-01T00:00:{:02d}Z"


def in_memory(copies: list[tuple[str, int, bool]]) -> tuple[list[int], int]:
    """The rule as the decoder (one IdSet a file, marked for primary copies) and the stream (one
    IdSet across files) applied it: the positions kept, and the duplicates."""
    across, kept, duplicates = IdSet(), [], 0
    per_file: dict[int, IdSet] = {}
    for position, (rid, file, primary) in enumerate(copies):
        seen = per_file.setdefault(file, IdSet())
        if rid in seen:
            if primary and seen.marked(rid):
                duplicates += 1
            if primary:
                seen.mark(rid)
            continue
        if primary:
            seen.mark(rid)
        else:
            seen.add(rid)
        if across.add(rid):
            kept.append(position)
    return kept, duplicates


COPIES = st.lists(st.tuples(st.sampled_from([f"{i:016x}" for i in range(12)] + ["not-hex", "", "é"]),
                            st.integers(0, 3), st.booleans()), max_size=200)


@settings(max_examples=300, deadline=None)
@given(COPIES, st.integers(1, 8))
def test_repeats_found_on_disk_are_those_found_in_memory(copies, buffer):
    """Any ids, files and kinds of copy, spilled every `buffer` copies: the same copies dropped
    and the same duplicates as the sets in memory."""
    copies.sort(key=lambda c: c[1])  # files are read one after the other
    repeats = RepeatedEvents(buffer=buffer)
    for rid, file, primary in copies:
        repeats.note(rid, file, primary)
    dropped, duplicates = repeats.settle()
    kept = [p for p in range(len(copies)) if not is_dropped(dropped, p)]
    assert (kept, duplicates) == in_memory(copies)


def _event(uid: int, count: int, second: int) -> str:
    return json.dumps({
        "kind": "Event", "apiVersion": "v1",
        "metadata": {"name": f"w-{uid % 3}.{uid:x}", "namespace": "a", "uid": f"u{uid}"},
        "involvedObject": {"kind": "Pod", "name": f"w-{uid % 3}", "namespace": "a", "labels": {"job-name": "j"}},
        "reason": "BackOff", "message": f"m {uid}", "type": "Warning", "count": count,
        "firstTimestamp": TS.format(0), "lastTimestamp": TS.format(second)})


def _pod(name: str, second: int) -> str:
    return json.dumps({
        "kind": "Pod", "apiVersion": "v1",
        "metadata": {"name": name, "namespace": "a", "uid": f"p-{name}", "labels": {"job-name": "j"}},
        "spec": {"nodeName": "n1"},
        "status": {"phase": "Running", "conditions": [
            {"type": "Ready", "status": "True", "lastTransitionTime": TS.format(second)}]}})


FILES = st.lists(st.lists(st.one_of(
    st.builds(_event, st.integers(0, 5), st.integers(1, 3), st.integers(1, 59)),
    st.builds(_pod, st.sampled_from(["w-0", "w-1"]), st.integers(1, 59)),
), max_size=25), min_size=1, max_size=3)


@settings(max_examples=150, deadline=None)
@given(FILES)
def test_the_stream_keeps_the_records_and_counts_the_duplicates_the_decoder_did(files):
    """Event files with repeated occurrences (a count that grows gives its first occurrence
    again, derived), snapshots repeating their conditions, the same lines in several files: the
    stream keeps the same records in the same order, and counts the decoder's duplicates."""
    across, expected, duplicates = IdSet(), [], 0
    for lines in files:
        for item in decode_event_stream(lines):
            if isinstance(item, Skip):
                duplicates += item.reason == "duplicate"
            elif across.add(item.id):
                expected.append(item.id)
    stream = EventStream()
    for file, lines in enumerate(files):
        for item in every_event_of_lines(lines):
            if not isinstance(item, Skip):
                stream.add(item, file)
    assert stream.settle() == duplicates
    assert stream.count == len(expected)
    stream.cut()
    assert [r.id for r in stream.stamped()] == expected
    stream.close()


def test_replay_counts_a_repeated_occurrence_once_and_writes_the_record_once(tmp_path):
    """An exporter that delivered one occurrence twice in a file, and the file given twice: each
    record written once, the repeat within each file counted (2), the second file's first copies
    dropped silently, as the decoder and the stream did in memory; nothing counted unreadable."""
    from gangscope.pipeline.run import replay

    events = tmp_path / "events.ndjson"
    events.write_text("\n".join([_event(1, 1, 5), _event(1, 1, 5), _event(2, 1, 6)]) + "\n")
    written: list = []
    result = replay.run(replay.ReplayOptions(paths=[], events=[str(events), str(events)]), written.extend)
    assert sorted(r.message for r in written if r.kind == "event") == ["m 1", "m 2"]
    assert result.repeated_events == 2
    assert result.summary()["skipped_events"] == 0 and result.exit_code == 0
