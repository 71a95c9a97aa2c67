"""h19q: the after-curation paths that take a batch at once give what the record-by-record
paths gave: id fingerprints (parsers/id_set.fingerprints), summary.json's counts
(RecordCounts.add_records, as Replay.deliver calls it), and the report's per-record passes
(render._attempt_spans, errors_by_category) against the code they replaced, kept here."""

from hypothesis import given, settings, strategies as st

from gangscope.parsers import times
from gangscope.parsers.id_set import fingerprint, fingerprints
from gangscope.parsers.records import ErrorRecord, EventRecord, StepRecord
from gangscope.pipeline.report import render
from gangscope.pipeline.run.record_counts import RecordCounts

# ids as records have them (hex digests) and as a hostile input could: short, signed, 0x-prefixed,
# with underscores or blanks (int(x, 16) takes those), not hex at all
_hex = st.text(alphabet="0123456789abcdefABCDEF", min_size=15, max_size=24)
_odd = st.builds(lambda a, b: a + b, st.sampled_from(["", "-", "+", " ", "0x", "_", "-0x", "\t"]),
                 st.text(alphabet="0123456789abcdef_ xg-", max_size=20))
_ids = st.one_of(_hex, _odd, st.text(max_size=20))


@settings(max_examples=300, deadline=None)
@given(st.lists(_ids, max_size=50))
def test_fingerprints_are_each_ids_fingerprint(ids):
    assert fingerprints(ids) == [fingerprint(i) for i in ids]


def test_fingerprints_of_signed_and_prefixed_ids_are_hashed_as_fingerprint_does():
    ids = ["-" + "a" * 20, "+" + "b" * 20, " 0x" + "c" * 20, "0" * 15, "f" * 15, "_".join("abcdef") + "abcdef"]
    assert fingerprints(ids) == [fingerprint(i) for i in ids]


_kinds = st.sampled_from(["step", "error", "event"])


def _record(kind, record_id):
    return {"step": StepRecord, "error": ErrorRecord, "event": EventRecord}[kind](id=record_id)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.tuples(_kinds, st.one_of(_hex, st.sampled_from(["a", "b", "-" + "1" * 16]))), max_size=30),
                max_size=8),
       st.sampled_from([1, 3, 16, 1 << 18]))
def test_counts_of_batches_are_the_counts_record_by_record(batches, buffer):
    one, batched = RecordCounts(buffer=buffer), RecordCounts(buffer=buffer)
    for batch in batches:
        records = [_record(kind, i) for kind, i in batch]
        for r in records:
            one.add(r.id, r.kind)
        batched.add_records(records)
    assert batched.counts() == one.counts()


# -- the report's passes, against the code they replaced (render.py at b290b00) --------------------

def _spans_before(kinds):
    spans = {}
    for kind, records in kinds.items():
        for r in records:
            t = times.seconds(r.time) if r.time else None
            if t is None:
                continue
            span = spans.setdefault(r.attempt, {"first": t, "last": t, "workers": set()})
            span["first"], span["last"] = min(span["first"], t), max(span["last"], t)
            if kind != "event" and (r.rank is not None or r.pod):
                span["workers"].add((r.pod, r.rank))
    return spans


def _errors_before(errors):
    groups = {}
    for e in sorted(errors, key=lambda e: e.time or ""):
        g = groups.setdefault(e.category, {"category": e.category, "count": 0, "ranks": set(), "pods": set(),
                                           "first": e.time, "example": e.line or e.message})
        g["count"] += 1
        if e.rank is not None:
            g["ranks"].add(e.rank)
        if e.pod:
            g["pods"].add(e.pod)
    out = []
    for g in groups.values():
        g["ranks"] = render._ranks_text(sorted(g["ranks"]))
        g["pods"] = sorted(g["pods"])
        out.append(g)
    return sorted(out, key=lambda g: -g["count"])


_times = st.one_of(st.none(), st.just(""), st.just("not a time"),
                   st.builds(lambda s, ms, z: f"2026-03-14T09:{s // 60:02d}:{s % 60:02d}{ms}{z}",
                             st.integers(0, 3599), st.sampled_from(["", ".5", ".123456"]),
                             st.sampled_from(["Z", "+02:00", "-00:30"])))
_fields = st.fixed_dictionaries({"time": _times, "attempt": st.integers(1, 3), "rank": st.one_of(st.none(), st.integers(0, 4)),
                                 "pod": st.one_of(st.none(), st.just(""), st.sampled_from(["p0", "p1"])),
                                 "category": st.sampled_from(["cuda_oom", "nccl_timeout", "unknown"]),
                                 "line": st.sampled_from(["", "a line"]), "message": st.sampled_from(["", "a message"])})


def _of(kind, f):
    common = {k: f[k] for k in ("time", "attempt", "rank", "pod")}
    if kind == "error":
        return ErrorRecord(**common, category=f["category"], line=f["line"], message=f["message"])
    return {"step": StepRecord, "event": EventRecord}[kind](**common)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_kinds, _fields), max_size=40))
def test_attempt_spans_and_error_groups_are_what_they_were(drawn):
    kinds = {}
    for kind, f in drawn:
        kinds.setdefault(kind, []).append(_of(kind, f))
    assert render._attempt_spans(kinds) == _spans_before(kinds)
    errors = kinds.get("error", [])
    assert render.errors_by_category(errors) == _errors_before(errors)


def test_a_time_before_the_first_and_after_the_last_move_the_span():
    t = "2026-03-14T09:00:{:02d}Z"
    steps = [StepRecord(time=t.format(s), rank=0, pod="p") for s in (30, 10, 50, 20)]
    span = render._attempt_spans({"step": steps})[1]
    assert (span["first"], span["last"]) == (times.seconds(t.format(10)), times.seconds(t.format(50)))


def _line_chart_before(steps, field, label, unit=""):
    """render.line_chart's series and axis at b290b00 (the time axis's origin read for every chart)."""
    from collections import defaultdict
    import math
    series = defaultdict(list)
    by_step = all(s.step is not None for s in steps if getattr(s, field, None) is not None)
    t_first = min((times.seconds(s.time) for s in steps if s.time and times.seconds(s.time) is not None), default=0.0)
    for s in steps:
        value = getattr(s, field, None)
        if by_step:
            x = s.step
        else:
            t = times.seconds(s.time) if s.time else None
            x = t - t_first if t is not None else None
        if value is None or x is None or not math.isfinite(value):
            continue
        series[(s.attempt, s.rank if s.rank is not None else s.pod)].append((float(x), float(value)))
    return dict(series), by_step


_step_fields = st.fixed_dictionaries({"time": _times, "step": st.one_of(st.none(), st.integers(0, 50)),
                                      "loss": st.one_of(st.none(), st.integers(-50, 50).map(lambda i: i / 10), st.just(float("nan"))),
                                      "rank": st.one_of(st.none(), st.integers(0, 2)), "attempt": st.integers(1, 2)})


@settings(max_examples=300, deadline=None)
@given(st.lists(_step_fields, max_size=30))
def test_line_chart_draws_what_it_drew(drawn):
    steps = [StepRecord(**f) for f in drawn]
    series, by_step = _line_chart_before(steps, "loss", "loss")
    chart = render.line_chart(steps, "loss", "loss")
    if not series:
        assert chart is None
        return
    assert chart["x_label"] == ("step" if by_step else "seconds since the first step")
    xs = [x for points in series.values() for x, _ in points]
    # the drawn x range is the reference's (the series kept are the longest, at most MAX_SERIES)
    if len(series) <= render.MAX_SERIES:
        assert chart["x_min"] == render.format_number(min(xs)) and chart["x_max"] == render.format_number(max(xs))
