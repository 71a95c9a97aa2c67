"""Fast paths of the framework held to the plain ones they replace: a record's time checked with
string tests (times.checked_utc) against the regex it replaced, and the local sink's batch per kind
(one NDJSON encode and one write for each kind of a batch) against writing record by record."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings, strategies as st

from gangscope.parsers import times
from gangscope.parsers.records import DiagnosisRecord, EpochRecord, ErrorRecord, StepRecord, TraceRecord
from gangscope.pipeline.sinks.local import LocalFolderSink

SETTINGS = settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))

_FRACTION_Z = re.compile(r"(?:\.[0-9]+)?Z")


def checked_utc_by_regex(ts: str) -> str | None:
    """checked_utc as it was: a `Z` time's fraction matched by a regex."""
    if ts[-1:] == "Z":
        ok = times.is_utc(ts[:19] + "Z")
        return ts if ok and _FRACTION_Z.fullmatch(ts, 19) is not None else None
    return times.checked_utc(ts)


HEADS = ["2024-05-01T12:00:00", "2024-02-30T12:00:00", "2024-05-01T24:00:00", "2024-05-01 12:00:00", "2024-05-01T12:00:0",
         "", "Z"]


@SETTINGS
@given(head=st.sampled_from(HEADS),
       tail=st.text(alphabet=st.sampled_from(list("0123456789.Zz:+-\u0663\u00b2 \n")), max_size=12))
def test_a_records_time_is_checked_as_the_regex_checked_it(head, tail):
    ts = head + tail
    if not ts:
        return
    assert times.checked_utc(ts) == checked_utc_by_regex(ts)


def test_a_fraction_of_other_digits_names_no_instant():
    assert times.checked_utc("2024-05-01T12:00:00.5Z") == "2024-05-01T12:00:00.5Z"
    assert times.checked_utc("2024-05-01T12:00:00.\u0663Z") is None
    assert times.checked_utc("2024-05-01T12:00:00.Z") is None
    assert times.checked_utc("2024-05-01T12:00:00Z") == "2024-05-01T12:00:00Z"


class Unencodable:
    """A value JSON cannot hold: the record carrying it is counted and skipped."""


def a_record(kind: int, n: int):
    time = f"2024-05-01T12:00:{n % 60:02d}Z"
    if kind == 0:
        return StepRecord(id=f"s{n}", time=time, step=n, loss=1.0 / (n + 1), metrics={"tps": float(n)})
    if kind == 1:
        return ErrorRecord(id=f"e{n}", time=time, category="nccl_error", message=f"error {n}")
    if kind == 2:
        return EpochRecord(id=f"p{n % 3}", time=time, epoch=float(n), progress=n / 100)  # updated in place: newest per id
    if kind == 3:
        return DiagnosisRecord(id=f"d{n % 2}", summary=f"diagnosis {n}")
    if kind == 4:
        return TraceRecord(id=f"t{n}", time=time, exception_type="ValueError", details={"x": Unencodable()})
    return TraceRecord(id=f"t{n}", time=time, exception_type="ValueError", text="Traceback\n  ValueError: x")


def written(batches: list[list], tmp_path, name: str, each: bool) -> tuple[dict, dict, list]:
    sink = LocalFolderSink(tmp_path / name)
    if each:  # the record-by-record path alone
        sink._write_by_kind = lambda folder, records: False  # type: ignore[method-assign]
    for batch in batches:
        sink.write(batch)
    counts = sink.close()
    files = {p.name: p.read_bytes() for p in sorted((tmp_path / name).iterdir())}
    return files, counts, sink.failures.summary()


@SETTINGS
@given(batches=st.lists(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 200)), max_size=30), max_size=6))
def test_a_batch_written_per_kind_makes_the_files_of_record_by_record(batches, tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("sink")
    made = [[a_record(kind, n) for kind, n in batch] for batch in batches]
    again = [[a_record(kind, n) for kind, n in batch] for batch in batches]
    assert written(made, tmp_path, "batched", each=False) == written(again, tmp_path, "each", each=True)


def test_a_record_that_cannot_be_encoded_is_counted_and_the_rest_of_its_batch_written(tmp_path):
    batch = [a_record(0, 1), a_record(4, 2), a_record(1, 3), a_record(2, 4)]
    files, counts, failures = written([batch], tmp_path, "out", each=False)
    assert counts["step"] == 1 and counts["error"] == 1 and counts["trace"] == 0 and counts["epoch"] == 1
    assert [f["count"] for f in failures] == [1]
    assert files["step.ndjson"].count(b"\n") == 1 and files["error.ndjson"].count(b"\n") == 1


def test_a_replay_runs_with_fewer_young_collections_and_leaves_the_thresholds_as_they_were(tmp_path):
    import gc

    from gangscope.pipeline.run import collector, replay

    log = tmp_path / "pods" / "team-a_train-0_0c6d1111-2222-3333-4444-555566667777" / "pytorch" / "0.log"
    log.parent.mkdir(parents=True)
    log.write_bytes(b"2024-05-01T12:00:00.1Z stdout F step 1/10 loss 2.5\n2024-05-01T12:00:01.2Z stderr F RuntimeError: NCCL error\n")
    before = gc.get_threshold()
    seen = []
    result = replay.run(replay.ReplayOptions(paths=[str(tmp_path / "pods")]), lambda batch: seen.append(gc.get_threshold()))
    assert gc.get_threshold() == before
    assert seen and all(young >= collector.MIN_YOUNG for young, _middle, _old in seen)
    assert result.curation.lines == 2
