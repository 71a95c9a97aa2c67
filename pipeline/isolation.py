"""Isolation at stage boundaries: one bad input never loses the run.

A failure inside one unit of work (a file, one parser on one line, one record, one job's
correlation, one attempt's diagnosis, one report section, one record a sink cannot take) is
caught where it happens, counted in a `StageFailures` ledger, and the run goes on without
that unit. The ledger counts by (stage, exception type) and keeps the first few examples of
each with where they happened (file and position, record id, job and attempt); its memory is
bounded whatever fails, ledgers merge (worker processes hand theirs back), and `summary()` is
what summary.json shows.

A stage guards a coarse unit with `unit_of_work` (a context manager)::

    with unit_of_work(failures, "correlate", job=job) as unit:
        attempts = cut(job)
    if unit.failed:
        attempts = []

and a unit on the hot path (a line, a record) with an inline `try`/`except Exception`
whose `except` branch calls `failures.add(...)`: a `try` costs nothing in CPython 3.11+
while nothing raises, and no object is made per line.

A leaf: imports nothing from the pipeline (only the redactor of `parsers`, lazily).
"""

from __future__ import annotations

import os
import sys
from typing import Any

# The stages, in the order data flows through them (and summary.json lists them).
STAGES = ("sources", "curate", "correlate", "diagnose", "sinks", "report")
_STAGE_ORDER = {stage: i for i, stage in enumerate(STAGES)}

MESSAGE_CHARS = 200  # an example's exception message is cut here


class StageFailures:
    """Failures caught at stage boundaries: a count per (stage, exception type), and the first
    `max_examples` examples of each.

    Bounded: at most `max_kinds` distinct (stage, error) pairs are kept apart; further ones are
    counted under (stage, "other"). Entries are plain data (str, int, lists and dicts of them),
    so a ledger pickles, and `from_summary(summary())` rebuilds it.
    """

    max_examples = 3
    max_kinds = 64

    __slots__ = ("entries",)

    def __init__(self) -> None:
        self.entries: dict[tuple[str, str], dict[str, Any]] = {}

    # -- counting -------------------------------------------------------------------------

    def add(self, stage: str, error: BaseException | str, *, file: str | None = None, position: Any = None,
            **where: Any) -> None:
        """Count one failure of `stage`.

        Parameters: `error` the exception caught (or its type name); `file` the input file (or
        source) it concerns; `position` where in it (a line number, byte offset, Kafka offset or
        the line's time and seq); `where` more coordinates (`record`, `job`, `attempt`, `parser`,
        `section`...), None values left out.
        """
        name = error if isinstance(error, str) else type(error).__name__
        entry = self._entry(stage, name)
        entry["count"] += 1
        if len(entry["examples"]) < self.max_examples:
            example: dict[str, Any] = {"file": file, "position": position}
            # a skip's detail quotes its input (an events file's `kind`, a label's name): masked
            example.update((k, redacted(v) if type(v) is str else v) for k, v in where.items() if v is not None)
            if isinstance(error, BaseException):
                example["message"] = _message(error)
                at = origin(error)
                if at:
                    example["at"] = at
            entry["examples"].append(example)

    def _entry(self, stage: str, error: str) -> dict[str, Any]:
        entry = self.entries.get((stage, error))
        if entry is None:
            if len(self.entries) >= self.max_kinds:
                error = "other"
                entry = self.entries.get((stage, error))
            if entry is None:
                entry = self.entries[(stage, error)] = {"stage": stage, "error": error, "count": 0, "examples": []}
        return entry

    def merge(self, other: "StageFailures | None") -> "StageFailures":
        """Add another ledger's counts and examples (examples past `max_examples` are dropped)."""
        if other is None:
            return self
        for entry in other.entries.values():
            mine = self._entry(entry["stage"], entry["error"])
            mine["count"] += entry["count"]
            room = self.max_examples - len(mine["examples"])
            if room > 0:
                mine["examples"].extend(dict(e) for e in entry["examples"][:room])
        return self

    def take(self) -> "StageFailures":
        """What was counted since the last `take` (a new ledger); this one is emptied.
        For a service that turns counts into metrics as they come."""
        taken = StageFailures()
        taken.entries, self.entries = self.entries, {}
        return taken

    # -- reading ---------------------------------------------------------------------------

    @property
    def total(self) -> int:
        return sum(entry["count"] for entry in self.entries.values())

    def __bool__(self) -> bool:
        return bool(self.entries)

    def __len__(self) -> int:
        return self.total

    def by_stage(self) -> dict[str, int]:
        """Failures per stage, in stage order."""
        out: dict[str, int] = {}
        for entry in self.summary():
            out[entry["stage"]] = out.get(entry["stage"], 0) + entry["count"]
        return out

    def summary(self) -> list[dict[str, Any]]:
        """For summary.json: [{"stage", "error", "count", "examples": [{"file", "position", ...}]}],
        in stage order, then by error name."""
        ordered = sorted(self.entries.values(), key=lambda e: (_STAGE_ORDER.get(e["stage"], len(STAGES)), e["stage"], e["error"]))
        return [{"stage": e["stage"], "error": e["error"], "count": e["count"],
                 "examples": [dict(x) for x in e["examples"]]} for e in ordered]

    def lines(self) -> list[str]:
        """One line per stage, for a person (stderr): what failed, how often, and the first place."""
        out = []
        for stage, count in self.by_stage().items():
            entries = [e for e in self.summary() if e["stage"] == stage]
            errors = ", ".join(f"{e['error']} x{e['count']}" for e in entries)
            first = next((x for e in entries for x in e["examples"]), None)
            where = f"; first at {describe_place(first)}" if first else ""
            noun = "failure" if count == 1 else "failures"
            out.append(f"{stage}: {count:,} {noun} caught and skipped ({errors}){where}")
        return out

    @classmethod
    def from_summary(cls, summary: list[dict[str, Any]]) -> "StageFailures":
        ledger = cls()
        for e in summary:
            entry = ledger._entry(e["stage"], e["error"])
            entry["count"] += int(e["count"])
            entry["examples"].extend(dict(x) for x in e.get("examples", ())[: cls.max_examples])
        return ledger

    def __repr__(self) -> str:
        return f"StageFailures({self.by_stage()})"

    # pickling with __slots__ and no __dict__
    def __getstate__(self):
        return self.entries

    def __setstate__(self, state) -> None:
        self.entries = state


class unit_of_work:
    """Guards one unit of work of a stage: an exception (not KeyboardInterrupt, SystemExit or
    GeneratorExit) raised inside is counted in `failures` and swallowed; `failed` is then the
    exception, for the caller's fallback.

    Parameters: `failures` the ledger (None: nothing is caught); `stage` one of STAGES; `file`,
    `position` and `where` as for `StageFailures.add`.
    """

    __slots__ = ("failures", "stage", "file", "position", "where", "failed")

    def __init__(self, failures: StageFailures | None, stage: str, *, file: str | None = None, position: Any = None,
                 **where: Any):
        self.failures = failures
        self.stage = stage
        self.file = file
        self.position = position
        self.where = where
        self.failed: Exception | None = None

    def __enter__(self) -> "unit_of_work":
        return self

    def __exit__(self, typ, exc, tb) -> bool:
        if exc is None or self.failures is None or not isinstance(exc, Exception):
            return False
        self.failed = exc
        self.failures.add(self.stage, exc, file=self.file, position=self.position, **self.where)
        return True


def record_place(record: Any) -> dict[str, Any]:
    """Where a record came from, as `StageFailures.add` takes it: its pod and container, its
    line's time, stream and seq, its kind, id, job and attempt (duck-typed: any may be missing).
    A record does not know its file (`source` is the envelope's format): pod, container and the
    line's time and seq name the line."""
    get = getattr
    time, stream, seq = get(record, "time", None), get(record, "stream", None), get(record, "seq", None)
    pod = get(record, "pod", None)
    return {
        "file": None,
        "position": f"line at {time} ({stream} #{seq})" if time or stream else None,
        "pod": f"{get(record, 'namespace', None)}/{pod}" if pod else None,
        "container": get(record, "container", None),
        "record": get(record, "kind", None) or type(record).__name__,
        "id": get(record, "id", None) or None,
        "job": get(record, "job", None),
        "attempt": get(record, "attempt", None),
    }


def failures_of(holder: Any) -> StageFailures:
    """The ledger a stats object carries as `failures` (made on first use: an object restored from
    an older checkpoint has none)."""
    ledger = getattr(holder, "failures", None)
    if ledger is None:
        ledger = StageFailures()
        holder.failures = ledger
    return ledger


def origin(exc: BaseException) -> str | None:
    """Where the exception was raised, as `module.py:function` of the innermost frame (the
    file's name only: paths differ between machines)."""
    tb = exc.__traceback__
    if tb is None:
        return None
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    return f"{os.path.basename(code.co_filename)}:{code.co_name}"


def frames_of(exc: BaseException) -> list[tuple[str, str]]:
    """(module file name, function) of each frame the exception went through, outermost first."""
    out = []
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        out.append((os.path.basename(code.co_filename), code.co_name))
        tb = tb.tb_next
    return out


def describe_place(example: dict[str, Any]) -> str:
    """An example's place in a few words: `file position (job attempt N)`."""
    parts = [str(example[k]) for k in ("file", "position") if example.get(k) is not None]
    for key in ("pod", "container", "parser", "record", "section"):
        if example.get(key) is not None:
            parts.append(f"{key} {example[key]}")
    if example.get("job") is not None and not str(example.get("position") or "").startswith(str(example["job"])):
        parts.append(f"job {example['job']}" + (f" attempt {example['attempt']}" if example.get("attempt") is not None else ""))
    return " ".join(parts) or "?"


def _message(exc: BaseException) -> str:
    """The exception's message, first line, cut short, with secrets masked (a message can quote
    the log text that made it fail). Masked before the cut, so a secret the cut would split is
    still seen whole (within a window of 4 cuts: the cost stays bounded)."""
    return redacted(str(exc).split("\n", 1)[0][:4 * MESSAGE_CHARS])[:MESSAGE_CHARS]


def redacted(text: str) -> str:
    """`text` with its secrets masked by the configured redactor (parsers/redact.py, a site's
    patterns included): for the rooms that show an error's text but may not import the parsers,
    such as the dashboard showing what OpenSearch answered (an answer can quote what was sent)."""
    if not text:
        return text
    redact = sys.modules.get("gangscope.parsers.redact")
    if redact is None:
        try:
            from gangscope.parsers import redact
        except Exception:  # the ledger must work even where the redactor cannot load
            return text
    try:
        return redact.redact_text(text)
    except Exception:
        return "(message withheld: the redactor failed on it)"
