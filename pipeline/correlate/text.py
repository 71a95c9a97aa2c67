"""Short one-line text for summaries and the timeline."""

from __future__ import annotations


def shorten(text: str, n: int = 160) -> str:
    """`text` on one line (runs of whitespace made one space), cut to `n` characters with an ellipsis."""
    text = " ".join((text or "").split())
    return text if len(text) <= n else text[: n - 1] + "…"
