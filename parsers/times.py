"""RFC 3339 times: the one place that reads them and writes them.

Read: `YYYY-MM-DD(T|t| )HH:MM:SS[.fraction](Z|z|+HH:MM|-HH:MM|+HHMM|-HHMM)`, RFC 3339
section 5.6 with the allowances of its notes (lower case, a space for the `T`) and the
offset without a colon that some shippers write; any number of fraction digits. A time
without a zone names no instant: every reader here returns None for it, as for anything
unreadable (no exceptions). Written: always UTC, `YYYY-MM-DDTHH:MM:SS[.fraction]Z`.

Pure: no clock, no I/O. `seconds` and `to_utc` are on the per-line path: the seconds of a
date and time of day are computed once and remembered, since log lines come many to a second.

Timestamps in a log format's own syntax (glog's `I1201 12:00:00.123`, Python logging's
`2024-01-01 12:00:00,123`) are read by the parser of that format, not here.
"""

from __future__ import annotations

import math
import re
from datetime import date
from typing import NamedTuple

_TIME = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt ]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?"
    r"(?:[Zz]|([+-])([0-9]{2}):?([0-9]{2}))\Z"
)
_EPOCH_DAY = date(1970, 1, 1).toordinal()
_CACHE_SIZE = 100_000

# "YYYY-MM-DDTHH:MM:SS" as written (before its offset) -> its seconds since the epoch, read as UTC
_LOCAL_SECONDS: dict[str, int] = {}
# whole seconds since the epoch -> "YYYY-MM-DDTHH:MM:SS" in UTC
_UTC_TEXT: dict[int, str] = {}


class Instant(NamedTuple):
    """A time read: whole seconds since the epoch (UTC) and the digits of its fraction as written."""

    whole: int
    fraction: str


def parse(ts: str | None) -> Instant | None:
    """The instant an RFC 3339 time names; None when absent, unreadable or without a zone."""
    if not ts:
        return None
    m = _TIME.match(ts)
    if m is None:
        return None
    y, mo, d, h, mi, s, fraction, sign, oh, om = m.groups()
    head = ts[:19]
    local = _LOCAL_SECONDS.get(head)
    if local is None:
        hour, minute, second = int(h), int(mi), int(s)
        if hour > 23 or minute > 59 or second > 59:
            return None
        try:
            day = date(int(y), int(mo), int(d)).toordinal() - _EPOCH_DAY
        except ValueError:
            return None
        local = day * 86400 + hour * 3600 + minute * 60 + second
        if len(_LOCAL_SECONDS) >= _CACHE_SIZE:
            _LOCAL_SECONDS.clear()
        _LOCAL_SECONDS[head] = local
    if sign is not None:
        hours, minutes = int(oh), int(om)
        if hours > 23 or minutes > 59:
            return None
        offset = hours * 3600 + minutes * 60
        local = local - offset if sign == "+" else local + offset
    return Instant(local, fraction or "")


def seconds(ts: str | None) -> float | None:
    """Seconds since the epoch of an RFC 3339 time (for arithmetic; ids keep the text); None
    when absent or unreadable."""
    if not ts:
        return None
    whole = _LOCAL_SECONDS.get(ts[:19])
    if whole is not None and ts[-1] == "Z":  # the usual case: a second seen before, in UTC
        # (the key holds 19 characters: what follows is "Z", or "." + fraction digits + "Z")
        if len(ts) == 20:
            return float(whole)
        if ts[19] == ".":
            digits = ts[20:-1]
            if digits.isdigit() and digits.isascii():
                return whole + float(ts[19:-1])  # ".123" reads as "0.123" does
    instant = parse(ts)
    if instant is None:
        return None
    return instant.whole + float("0." + instant.fraction) if instant.fraction else float(instant.whole)


_LEADING = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?)([Zz]|[+-][0-9]{2}:?[0-9]{2})?")


def leading_seconds(ts: str | None) -> float | None:
    """Seconds since the epoch of the date and time `ts` starts with, whatever follows them
    (read as UTC when no zone follows); None when it starts with none.

    Only for judging how long a stream has been quiet: a line whose time field is damaged
    (`2024-05-01T12:09:00\ufffd`) still tells that minutes went by. Everywhere else, `seconds`.
    """
    t = seconds(ts)
    if t is not None or not ts:
        return t
    m = _LEADING.match(ts)
    if m is None:
        return None
    return seconds(m.group(1) + (m.group(2) or "Z"))


def to_utc(ts: str | None) -> str | None:
    """The time in UTC with a `Z`, its fraction kept as written; None when unreadable.

    A time that already ends in `Z` is returned as it is, unchecked: this runs for every
    record, and ids are made of the text the log wrote.
    """
    if ts is None:
        return None
    if ts.endswith("Z"):
        return ts
    instant = parse(ts)
    if instant is None:
        return None
    return format_instant(instant)


_VALID_HEADS: dict[str, bool] = {}  # `YYYY-MM-DDTHH:MM:SS` -> whether it names a time (the same second recurs)


def is_utc(time: str) -> bool:
    """Whether a time ending in `Z` is RFC 3339 (`YYYY-MM-DDTHH:MM:SS[.digits]Z`, a real date and
    time of day): its second checked once, its fraction each time."""
    head = time[:19]
    ok = _VALID_HEADS.get(head)
    if ok is None:
        if len(_VALID_HEADS) >= 4096:
            _VALID_HEADS.clear()
        ok = _VALID_HEADS[head] = parse(head + "Z") is not None
    if not ok:
        return False
    tail = time[19:-1]
    return not tail or (tail[0] == "." and len(tail) > 1 and tail.isascii() and tail[1:].isdigit())


def checked_utc(ts: str) -> str | None:
    """`to_utc` for a record's time, a `Z` time checked as `is_utc` does: the UTC text, or None when
    the time names no instant. One call per record: a `Z` time's second is looked up (checked
    once per distinct second), its fraction (`.` and ASCII digits, or none) tested; any other time
    is parsed."""
    if ts[-1:] == "Z":
        head = ts[:19]
        ok = _VALID_HEADS.get(head)
        if ok is None:
            ok = is_utc(head + "Z")
        # a valid head is ASCII: the whole time is where its fraction is
        if ok and (len(ts) == 20 or ts[19] == "." and ts[20:-1].isdigit() and ts.isascii()):
            return ts
        return None
    instant = parse(ts)
    return None if instant is None else format_instant(instant)


def normalized(ts: str | None) -> str | None:
    """The time in UTC with a `Z`, the trailing zeros of its fraction trimmed; None when unreadable."""
    instant = parse(ts)
    if instant is None:
        return None
    return format_instant(Instant(instant.whole, instant.fraction.rstrip("0")))


def format_instant(instant: Instant) -> str | None:
    """`YYYY-MM-DDTHH:MM:SS[.fraction]Z`; None outside years 1-9999."""
    base = utc_second(instant.whole)
    if base is None:
        return None
    return f"{base}.{instant.fraction}Z" if instant.fraction else base + "Z"


def from_seconds(t: float, *, fixed: bool = False) -> str | None:
    """Seconds since the epoch as an RFC 3339 UTC time, to the microsecond (rounded half to
    even, as `datetime.fromtimestamp`). `fixed`: always six fraction digits; otherwise the
    trailing zeros are trimmed and a whole second has no fraction. None when out of range."""
    try:
        fraction, whole = math.modf(t)
        micro = round(fraction * 1e6)
        whole_s = int(whole)
    except (ValueError, OverflowError):  # nan, inf
        return None
    if micro >= 1_000_000:
        whole_s, micro = whole_s + 1, micro - 1_000_000
    elif micro < 0:
        whole_s, micro = whole_s - 1, micro + 1_000_000
    digits = f"{micro:06d}" if fixed else f"{micro:06d}".rstrip("0")
    return format_instant(Instant(whole_s, digits))


def utc_second(whole: int) -> str | None:
    """`YYYY-MM-DDTHH:MM:SS` (UTC, no zone) of whole seconds since the epoch; None outside years 1-9999."""
    text = _UTC_TEXT.get(whole)
    if text is None:
        days, rest = divmod(whole, 86400)
        try:
            day = date.fromordinal(days + _EPOCH_DAY)
        except (ValueError, OverflowError):
            return None
        hour, rest = divmod(rest, 3600)
        minute, second = divmod(rest, 60)
        text = f"{day.year:04d}-{day.month:02d}-{day.day:02d}T{hour:02d}:{minute:02d}:{second:02d}"
        if len(_UTC_TEXT) >= _CACHE_SIZE:
            _UTC_TEXT.clear()
        _UTC_TEXT[whole] = text
    return text
