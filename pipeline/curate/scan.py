"""Block prefilter: find, in a block of raw CRI lines, the few lines any parser could want.

Most lines of a training log interest no parser. Instead of looking at each line in
Python, one Hyperscan database (all parsers' PREFILTER patterns, compiled in
prefilter mode so that it matches a superset of them) scans the raw bytes of a whole
block, and only the lines it hits are decoded and fed to the parsers, which then
apply their exact prefilters. When Hyperscan is not installed, `BlockScanner.build`
returns None and the curator reads every line (the reference path).
"""

from __future__ import annotations

try:
    import hyperscan
except ImportError:  # the reference path works without it
    hyperscan = None


def relax_anchors(pattern: str) -> str:
    """The pattern without `^` anchors (outside character classes).

    A parser's `^` means the start of the payload, after the CRI header and any rank
    prefix, which a scan over raw lines cannot see; without the anchor the pattern
    matches a superset, and the parser's own prefilter decides.
    """
    out = []
    in_class = escaped = False
    for i, ch in enumerate(pattern):
        if escaped:
            out.append(ch)
            escaped = False
            continue
        if ch == "\\":
            out.append(ch)
            escaped = True
            continue
        if in_class:
            if ch == "]" and not (pattern[i - 1] == "[" or pattern[i - 2 : i] == "[^"):
                in_class = False
            out.append(ch)
            continue
        if ch == "[":
            in_class = True
            out.append(ch)
            continue
        if ch == "^":
            continue
        out.append(ch)
    return "".join(out)


# Lines the curator must always see: a CRI line whose tag is not `F` (a partial chunk
# to join), and lines that cannot be CRI at all (to count them as unreadable).
ALWAYS = (
    r"^[^ \n]+ (?:stdout|stderr) [^F \n]",
    r"^[^0-9\n]",
    r"^[^ \n]+$",
    r"^[^ \n]+ [^s]",
)


def prefilter_database(expressions: list[bytes]):
    """The expressions compiled in Hyperscan's prefilter mode (a superset of what they match),
    multiline, empty matches allowed, each its index as id; None when Hyperscan is missing or
    refuses them (the callers then let every parser test its lines itself)."""
    if hyperscan is None or not expressions:
        return None
    flags = hyperscan.HS_FLAG_PREFILTER | hyperscan.HS_FLAG_MULTILINE | hyperscan.HS_FLAG_ALLOWEMPTY
    database = hyperscan.Database()
    try:
        database.compile(expressions=expressions, ids=list(range(len(expressions))),
                         elements=len(expressions), flags=[flags] * len(expressions))
    except hyperscan.error:
        return None
    return database


class BlockScanner:
    """Start offsets of the lines of a block that match any of the patterns."""

    def __init__(self, database):
        self.database = database

    @classmethod
    def build(cls, patterns: list[str]) -> "BlockScanner | None":
        database = prefilter_database([p.encode() for p in ALWAYS] + [relax_anchors(p).encode("utf-8") for p in patterns])
        return None if database is None else cls(database)

    def line_starts(self, block: bytes) -> list[int]:
        return sorted(self.candidates(block))

    def candidates(self, block: bytes) -> dict[int, int]:
        """Start offset of each line any pattern hits -> bit mask of the parser patterns that
        hit it (bit i for the i-th pattern given to `build`; 0 for lines that must be read
        for another reason)."""
        hits: list[tuple[int, int]] = []
        add = hits.append

        def on_match(pattern_id, _start, end, _flags, _ctx):
            add((end, pattern_id))

        self.database.scan(block, match_event_handler=on_match)
        found: dict[int, int] = {}
        for end, pattern_id in hits:
            # `end` is just past the match; a match may end on the newline itself ($).
            start = block.rfind(b"\n", 0, end - 1 if end and block[end - 1 : end] == b"\n" else end) + 1
            bit = 1 << (pattern_id - len(ALWAYS)) if pattern_id >= len(ALWAYS) else 0
            found[start] = found.get(start, 0) | bit
        return found


def scan_safe(text: str) -> bool:
    r"""Whether a Hyperscan scan of the text's bytes finds at least what Python's `re` finds in it:
    ASCII (where \w, \d, `.` and classes mean the same over bytes and over characters) without
    the separators \x1c-\x1f (Python's \s matches them, PCRE's does not) and without a newline."""
    return text.isascii() and not ("\n" in text or "\x1c" in text or "\x1d" in text or "\x1e" in text or "\x1f" in text)


class TextHints:
    """Which parsers' prefilters may match one text (a line's message, rank prefixes removed):
    the bit mask `ContainerCurator._logical` and `SubStream.feed` take as `hints`, as the block
    scan gives it for a raw CRI line. -1 (every parser tests the line itself) for a text the scan
    cannot judge as `re` would (see scan_safe)."""

    def __init__(self, database):
        self.database = database

    @classmethod
    def build(cls, patterns: list[str]) -> "TextHints | None":
        database = prefilter_database([relax_anchors(p).encode("utf-8") for p in patterns])
        return None if database is None else cls(database)

    def of(self, text: str) -> int:
        if not scan_safe(text):
            return -1
        found = [0]
        self.database.scan(text.encode("ascii"), match_event_handler=_or_bit, context=found)
        return found[0]


def _or_bit(pattern_id, _start, _end, _flags, found) -> None:
    found[0] |= 1 << pattern_id
