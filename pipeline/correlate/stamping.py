"""Stamping records with the attempt their time falls in."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from gangscope.parsers import times
from gangscope.pipeline.correlate.linking import get_field, set_field
from gangscope.pipeline.correlate.model import Attempt


def attempt_lookup(attempts_by_job: Mapping[str, list[Attempt]]) -> Callable[[str | None, str | None], int]:
    """A function (job, RFC 3339 time) -> the attempt number that time falls in.

    An attempt runs from its admission to the next admission, so that what its pods
    print while being torn down still belongs to it; times before the first admission
    belong to the first attempt; a job without admissions, or a record without a
    time, is attempt 1 (the first attempt's number when the job has one).
    """
    keys: dict[str, tuple[list[str], list[float], list[int]]] = {}
    first: dict[str, int] = {}
    for job, attempts in attempts_by_job.items():
        if attempts:
            first[job] = min(a.number for a in attempts)
        pairs = sorted((t, a.number) for a in attempts if (t := times.seconds(a.start)) is not None)
        if pairs:
            keys[job] = ([times.from_seconds(t)[:19] for t, _ in pairs], [t for t, _ in pairs], [n for _, n in pairs])

    def lookup(job: str | None, time: str | None) -> int:
        st = keys.get(job) if job else None
        if st is None:
            return first.get(job, 1) if job else 1
        if not time:
            return first[job]
        if time[-1] in "Zz" and len(time) >= 20:
            # Hot path: UTC times compare as text; a boundary is only ever a second wide.
            i = bisect.bisect_right(st[0], time[:19]) - 1
        else:
            t = times.seconds(time)
            if t is None:
                return first[job]
            i = bisect.bisect_right(st[1], t) - 1
        return st[2][max(i, 0)]

    return lookup


def assign_attempts(records: Iterable[Any], attempts_by_job: Mapping[str, list[Attempt]]) -> None:
    """Set each record's `attempt` to the attempt its time falls in (see `attempt_lookup`)."""
    lookup = attempt_lookup(attempts_by_job)
    for r in records:
        set_field(r, "attempt", lookup(get_field(r, "job"), get_field(r, "time")))
