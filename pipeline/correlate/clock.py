"""RFC 3339 times as seconds since the epoch, and back, for the correlation room."""

from __future__ import annotations

import calendar
import re


_EPOCH_CACHE: dict[str, int] = {}
_TS = re.compile(r"(\d{4})-(\d\d)-(\d\d)[Tt ](\d\d):(\d\d):(\d\d)(\.\d+)?(Z|z|[+-]\d\d:?\d\d)?$")


def epoch(ts: str | None) -> float | None:
    """Seconds since the epoch for an RFC 3339 time (any offset); None when absent or unreadable."""
    if not ts:
        return None
    key = ts[:19]
    base = _EPOCH_CACHE.get(key)
    rest = ts[19:]
    if base is None or (rest and rest[0] not in ".Zz+-"):
        m = _TS.match(ts)
        if m is None:
            return None
        y, mo, d, h, mi, s = (int(g) for g in m.groups()[:6])
        try:
            base = calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0))
        except (ValueError, OverflowError):
            return None
        if len(_EPOCH_CACHE) > 100_000:
            _EPOCH_CACHE.clear()
        _EPOCH_CACHE[key] = base
    t = float(base)
    if rest:
        off = rest
        if rest[0] == ".":
            i = 1
            while i < len(rest) and rest[i].isdigit():
                i += 1
            t += float("0" + rest[:i]) if i > 1 else 0.0
            off = rest[i:]
        if off and off[0] in "+-":
            digits = off[1:].replace(":", "")
            if len(digits) == 4 and digits.isdigit():
                sign = 1 if off[0] == "+" else -1
                t -= sign * (int(digits[:2]) * 3600 + int(digits[2:]) * 60)
    return t


def iso(t: float) -> str:
    """An RFC 3339 UTC time ("...Z", microseconds at most, no trailing zeros) for seconds since the epoch."""
    import time as _time

    base = _time.strftime("%Y-%m-%dT%H:%M:%S", _time.gmtime(int(t)))
    frac = t - int(t)
    return base + (f"{frac:.6f}"[1:].rstrip("0") if frac > 1e-6 else "") + "Z"
