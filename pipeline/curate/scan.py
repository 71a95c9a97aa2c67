"""Block prefilter: find, in a block of raw CRI lines, the few lines any parser could want.

Most lines of a training log interest no parser. Instead of looking at each line in
Python, one Hyperscan database (all parsers' PREFILTER patterns, compiled in
prefilter mode so that it matches a superset of them) scans the raw bytes of a whole
block, and only the lines it hits are decoded and fed to the parsers, which then
apply their exact prefilters. When Hyperscan is not installed, `BlockScanner.build`
returns None and the curator reads every line (the reference path).
"""

from __future__ import annotations

import re

try:
    import hyperscan
except ImportError:  # the reference path works without it
    hyperscan = None

from gangscope.pipeline.curate.database_cache import compile_database  # compiled once per machine, kept on disk


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


def alternatives(pattern: str) -> list[str]:
    """The top-level alternatives of a regex, a non-capturing group around a whole alternative
    opened too (`(?:a|b)|c` -> a, b, c); [pattern] itself where splitting could change what it
    means: global flags (`(?i)...`, which apply to every alternative) or a back-reference
    (group numbers would move).

    A database matches the union of what its expressions match, so one expression per
    alternative, all under the pattern's id, reports the same lines; Hyperscan compiles the
    pieces several times faster than the alternation (a bounded repeat such as `.{0,400}` in
    one branch made the whole alternation of a parser's prefilter cost ~0.15 s to compile).
    """
    if pattern.startswith("(?") and pattern[2:3] not in (":", "=", "!", "<", "P") or \
            re.search(r"\\[1-9]|\(\?P=", pattern):
        return [pattern]
    return _split(pattern)


def _structure(pattern: str) -> list[tuple[int, str]] | None:
    """Where `(`, `)` and `|` stand in `pattern` outside escapes and character classes; None
    when a class or an escape is left open at the end."""
    marks: list[tuple[int, str]] = []
    in_class = escaped = False
    for i, ch in enumerate(pattern):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif in_class:
            if ch == "]" and not (pattern[i - 1] == "[" or pattern[i - 2 : i] == "[^"):
                in_class = False
        elif ch == "[":
            in_class = True
        elif ch in "()|":
            marks.append((i, ch))
    return None if in_class or escaped else marks


def _split(pattern: str) -> list[str]:
    marks = _structure(pattern)
    if marks is None:
        return [pattern]
    out: list[str] = []
    depth = start = 0
    for i, ch in marks:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                return [pattern]  # unbalanced: leave it to the compiler
        elif depth == 0:
            out.append(pattern[start:i])
            start = i + 1
    if depth:
        return [pattern]
    out.append(pattern[start:])
    pieces: list[str] = []
    for alt in out:
        inner = _group_body(alt)
        pieces.extend(_split(inner) if inner is not None else [alt])
    return pieces


def _group_body(alt: str) -> str | None:
    """The body of `alt` when `alt` is exactly one non-capturing group `(?:...)`, else None."""
    if not (alt.startswith("(?:") and alt.endswith(")")):
        return None
    depth = 0
    for i, ch in _structure(alt) or ():
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return alt[3:-1] if i == len(alt) - 1 else None
    return None


def prefilter_database(expressions: list[bytes], ids: list[int] | None = None):
    """The expressions compiled in Hyperscan's prefilter mode (a superset of what they match),
    multiline, empty matches allowed, each its index as id (or `ids[i]`; each split into its
    alternatives, all under that id: see `alternatives`); None when Hyperscan is missing or
    refuses them (the callers then let every parser test its lines itself)."""
    if hyperscan is None or not expressions:
        return None
    ids = list(range(len(expressions))) if ids is None else ids
    pieces, piece_ids = _split_all(expressions, ids)
    return _compile(pieces, piece_ids) or (_compile(expressions, ids) if len(pieces) > len(expressions) else None)


def _split_all(expressions: list[bytes], ids: list[int]) -> tuple[list[bytes], list[int]]:
    """Each expression's alternatives, each under the expression's id."""
    pieces: list[bytes] = []
    piece_ids: list[int] = []
    for i, expression in zip(ids, expressions):
        try:
            split = [alt.encode("utf-8") for alt in alternatives(expression.decode("utf-8"))]
        except UnicodeDecodeError:
            split = [expression]
        pieces.extend(split)
        piece_ids.extend([i] * len(split))
    return pieces, piece_ids


def _compile(expressions: list[bytes], ids: list[int], flags: int | None = None):
    if flags is None:
        flags = hyperscan.HS_FLAG_PREFILTER | hyperscan.HS_FLAG_MULTILINE | hyperscan.HS_FLAG_ALLOWEMPTY
    try:
        return compile_database(expressions, ids, [flags] * len(expressions))
    except hyperscan.error:
        return None


_PARSER_DATABASES: dict[tuple[str, ...], object] = {}


def parser_database(patterns: tuple[str, ...]):
    """The parsers' PREFILTER patterns, anchors relaxed, in one prefilter database (pattern i
    reported as id i), compiled once per table: the block scan, the per-text hints and the
    Kafka batch scan share it."""
    if patterns not in _PARSER_DATABASES:
        _PARSER_DATABASES[patterns] = prefilter_database([relax_anchors(p).encode("utf-8") for p in patterns])
    return _PARSER_DATABASES[patterns]


# Bytes that make a line's exact block-scan answer unsure, as scan_safe judges a text: the
# separators Python's \s matches and PCRE's does not (a line holding one is left to its text's scan).
UNSAFE_BYTES = rb"[\x1c-\x1f]"
# Where a pattern cut out of a raw line could read differently than in the line's text alone:
# an anchor or a word boundary, or a look-around, at the text's edges.
_CONTEXT = re.compile(r"\\[AbBGzZ]|\(\?<?[=!]")


def block_exact(pattern: str) -> bool:
    """Whether a match of `pattern` that lies inside a line's text (after its CRI header and rank
    prefixes) tells what `re.search` tells of the text, and no match in the line tells no match
    in the text: no `^`, no `\\b`, `\\B`, `\\A`, `\\Z`, `\\z`, `\\G`, no look-around. (`$` is kept: the
    text ends where the line does.)"""
    return relax_anchors(pattern) == pattern and _CONTEXT.search(pattern) is None


class BlockScanner:
    """Start offsets of the lines of a block that match any of the patterns.

    On a block of ASCII bytes (where Hyperscan's bytes and `re`'s characters agree: see
    scan_safe), the patterns `block_exact` admits are scanned as they are, with the leftmost
    start of each match (`exact_candidates`), instead of in prefilter mode: a line's bits for
    them are then the exact answer for its text wherever the matches lie inside it, and the
    per-text scan (ExactHints, once per line fed) is not needed."""

    def __init__(self, database, exact=None, rest=None, exact_mask: int = 0, unsafe_id: int = -1, one_pass=None):
        self.database = database  # the parsers' patterns and ALWAYS, prefilter mode (see with_always)
        self.exact = exact  # the block_exact patterns, exact, with starts (None: not available)
        self.rest = rest  # the other patterns and ALWAYS, prefilter mode
        self.exact_mask = exact_mask  # their bits
        self._unsafe_id = unsafe_id  # the id of UNSAFE_BYTES in `exact`
        # a match's id -> its bit in a line's hints (ALWAYS's id: 0, a line read for another reason)
        self._bits = [1 << i for i in range(unsafe_id)] + [0, 0]
        # `rest` and `exact` in one database (exact's ids from EXACT_ID_BASE on): a block read once, not
        # twice (see one_pass_database); None: the two scans
        self.one_pass = one_pass

    @classmethod
    def build(cls, patterns: list[str]) -> "BlockScanner | None":
        ids = list(range(len(patterns)))
        database = with_always([relax_anchors(p) for p in patterns], ids, len(patterns) + 1)
        if database is None:
            return None
        exact, rest, mask = exact_block_databases(tuple(patterns))
        if exact is not None:
            others = [i for i in ids if not mask >> i & 1]
            rest = with_always([relax_anchors(patterns[i]) for i in others], others, len(patterns) + 1)
            if rest is None:
                exact = None
        one_pass = one_pass_database(tuple(patterns)) if exact is not None else None
        return cls(database, exact, rest, mask, len(patterns), one_pass)

    def line_starts(self, block: bytes) -> list[int]:
        return sorted(self.candidates(block))

    def candidates(self, block: bytes) -> dict[int, int]:
        """Start offset of each line any pattern hits -> bit mask of the parser patterns that
        hit it (bit i for the i-th pattern given to `build`; 0 for lines that must be read
        for another reason)."""
        hits: list[tuple[int, int]] = []
        add = hits.append
        bits = self._bits

        def on_match(pattern_id, _start, end, _flags, _ctx):
            add((end, bits[pattern_id]))

        self.database.scan(block, match_event_handler=on_match)
        return _by_line(block, hits)

    def exact_candidates(self, block: bytes) -> tuple[dict[int, int], dict[int, int]]:
        """For an ASCII block (`exact` not None): (the lines' bits as `candidates` gives them, but
        exact on the raw line for the bits in `exact_mask`; start offset of a line with such a
        match -> the offset in the line from which all its patterns' latest matches start, -1
        where one is unsure: a match that holds the newline, or a line with UNSAFE_BYTES). A line
        whose text starts at or before that offset has, for those bits, the answer `re.search`
        gives on its text; a line with none of them matches none of them."""
        hits: list[tuple[int, int]] = []
        add = hits.append
        bits = self._bits
        if self.one_pass is not None:
            found: list[tuple[int, int, int]] = []
            add_found = found.append

            def on_either(pattern_id, start, end, _flags, _ctx):
                if pattern_id >= EXACT_ID_BASE:
                    add_found((end, pattern_id - EXACT_ID_BASE, start))
                else:
                    add((end, bits[pattern_id]))

            self.one_pass.scan(block, match_event_handler=on_either)
            return _exact_by_line(block, found, self._unsafe_id, _by_line(block, hits))

        def on_match(pattern_id, _start, end, _flags, _ctx):
            add((end, bits[pattern_id]))

        self.rest.scan(block, match_event_handler=on_match)
        return exact_lines(block, self.exact, None, self._unsafe_id, hits)


_WITH_ALWAYS: dict[tuple, object] = {}


def with_always(expressions: list[str], ids: list[int], always_id: int):
    """The expressions (prefilter mode, under `ids`) and the ALWAYS patterns (under `always_id`) in
    one database: a block is read once for both. None when Hyperscan is missing or refuses them.
    Compiled once per table."""
    key = (tuple(expressions), tuple(ids), always_id)
    if key not in _WITH_ALWAYS:
        _WITH_ALWAYS[key] = prefilter_database([e.encode("utf-8") for e in [*expressions, *ALWAYS]],
                                               [*ids, *[always_id] * len(ALWAYS)])
    return _WITH_ALWAYS[key]


def exact_lines(block: bytes, exact, rest, unsafe: int, hits: list[tuple[int, int]] | None = None,
                ) -> tuple[dict[int, int], dict[int, int]]:
    """BlockScanner.exact_candidates of `block` (ASCII) with the databases of exact_block_databases
    (`unsafe`: the id of UNSAFE_BYTES in `exact`); `hits`: (match end, bit) pairs found already."""
    hits = [] if hits is None else hits
    add = hits.append
    found: list[tuple[int, int, int]] = []
    add_found = found.append

    def on_match(pattern_id, _start, end, _flags, _ctx):
        add((end, 1 << pattern_id))

    def on_exact(pattern_id, start, end, _flags, _ctx):
        add_found((end, pattern_id, start))

    if rest is not None:
        rest.scan(block, match_event_handler=on_match)
    exact.scan(block, match_event_handler=on_exact)
    return _exact_by_line(block, found, unsafe, _by_line(block, hits))


def _exact_by_line(block: bytes, found: list[tuple[int, int, int]], unsafe: int, lines: dict[int, int],
                   ) -> tuple[dict[int, int], dict[int, int]]:
    """exact_lines' answer from the exact database's matches (`found`: (end, pattern id, leftmost start))
    and the lines the other patterns hit (`lines`, added to in place)."""
    # (line start << 16 | pattern id) -> latest start of its matches (ids stay below 1 << 16: see
    # EXACT_ID_BASE); an int key, not a tuple: no tuple made and hashed per match
    latest: dict[int, int] = {}
    rfind = block.rfind
    get = latest.get
    for end, pattern_id, start in found:
        if end and block[end - 1] == 10:  # the match holds the newline: the line is left to its text's scan
            line = rfind(b"\n", 0, end - 1) + 1
            latest[line << 16 | unsafe] = -1
        else:
            line = rfind(b"\n", 0, end) + 1
            if pattern_id == unsafe:
                latest[line << 16 | unsafe] = -1
                continue
            key = line << 16 | pattern_id
            if get(key, -1) < start:
                latest[key] = start
        if pattern_id != unsafe:
            lines[line] = lines.get(line, 0) | 1 << pattern_id
    exact_from: dict[int, int] = {}
    for key, start in latest.items():
        line = key >> 16
        offset = start - line if start >= 0 else -1
        if offset < exact_from.get(line, offset + 1):
            exact_from[line] = offset
    return lines, exact_from


def _by_line(block: bytes, hits: list[tuple[int, int]]) -> dict[int, int]:
    """(match end, bit) pairs -> start offset of the line of each match -> its bits."""
    found: dict[int, int] = {}
    rfind = block.rfind
    for end, bit in hits:
        # `end` is just past the match; a match may end on the newline itself ($).
        start = rfind(b"\n", 0, end - 1 if end and block[end - 1 : end] == b"\n" else end) + 1
        found[start] = found.get(start, 0) | bit
    return found


_EXACT_BLOCK: dict[tuple[str, ...], tuple] = {}

# Ids of the exact patterns in one_pass_database: theirs plus this (a table holds far fewer patterns).
EXACT_ID_BASE = 1 << 16
_ONE_PASS: dict[tuple[str, ...], object] = {}


def one_pass_database(patterns: tuple[str, ...], always: bool = True):
    """The two databases BlockScanner.exact_candidates reads a block with, as one: the pieces of the
    patterns that are not `block_exact` and of ALWAYS (`always`: partition.TextScanner's texts are no
    CRI lines and its `rest` has none) in prefilter mode under their ids (with_always's),
    and the pieces of the `block_exact` ones and UNSAFE_BYTES exact with leftmost starts under
    EXACT_ID_BASE plus their ids (exact_block_databases'). Hyperscan reports each expression's matches
    whatever else a database holds (flags are per expression), so the matches are the two scans' own;
    the block is read once (the realistic corpus: two scans 0.21 s, one 0.15 s). None where Hyperscan
    refuses them together or a piece (the callers then scan twice). Compiled once per table."""
    key = (patterns, always)
    if key in _ONE_PASS:
        return _ONE_PASS[key]
    made = None
    _exact, _rest, mask = exact_block_databases(patterns)
    if mask:
        others = [i for i in range(len(patterns)) if not mask >> i & 1]
        kept = [i for i in range(len(patterns)) if mask >> i & 1]
        extra = ALWAYS if always else ()
        loose, loose_ids = _split_all([e.encode("utf-8") for e in [*(relax_anchors(patterns[i]) for i in others), *extra]],
                                      [*others, *[len(patterns) + 1] * len(extra)])
        exact, exact_ids = _split_all([patterns[i].encode("utf-8") for i in kept], kept)
        exact, exact_ids = [*exact, UNSAFE_BYTES], [*exact_ids, len(patterns)]
        prefilter = hyperscan.HS_FLAG_PREFILTER | hyperscan.HS_FLAG_MULTILINE | hyperscan.HS_FLAG_ALLOWEMPTY
        som = hyperscan.HS_FLAG_SOM_LEFTMOST | hyperscan.HS_FLAG_MULTILINE
        try:
            made = compile_database([*loose, *exact], [*loose_ids, *(EXACT_ID_BASE + i for i in exact_ids)],
                                    [prefilter] * len(loose) + [som] * len(exact))
        except hyperscan.error:
            made = None
    _ONE_PASS[key] = made
    return made


def exact_lines_one_pass(block: bytes, one_pass, unsafe: int) -> tuple[dict[int, int], dict[int, int]]:
    """exact_lines(block, exact, rest, unsafe) with the one database of one_pass_database(patterns,
    always=False) in place of `exact` and `rest`: the same answer, the block read once."""
    hits: list[tuple[int, int]] = []
    found: list[tuple[int, int, int]] = []
    add, add_found = hits.append, found.append

    def on_either(pattern_id, start, end, _flags, _ctx):
        if pattern_id >= EXACT_ID_BASE:
            add_found((end, pattern_id - EXACT_ID_BASE, start))
        else:
            add((end, 1 << pattern_id))

    one_pass.scan(block, match_event_handler=on_either)
    return _exact_by_line(block, found, unsafe, _by_line(block, hits))


def exact_block_databases(patterns: tuple[str, ...]) -> tuple[object, object, int]:
    """(the `block_exact` patterns compiled as they are, multiline, with the leftmost start of
    each match (pattern i reported as id i; UNSAFE_BYTES as id len(patterns)); the other
    patterns in prefilter mode, anchors relaxed, under their own ids (None when there are none);
    the bits of the first). (None, None, 0) when Hyperscan is missing or refuses them: the block
    scan then stays in prefilter mode. Compiled once per table."""
    made = _EXACT_BLOCK.get(patterns)
    if made is not None:
        return made
    made = (None, None, 0)
    if hyperscan is not None:
        exact_ids = [i for i, p in enumerate(patterns) if block_exact(p)]
        flags = hyperscan.HS_FLAG_SOM_LEFTMOST | hyperscan.HS_FLAG_MULTILINE
        kept = []
        for i in exact_ids:  # a pattern Hyperscan cannot compile as it is stays in prefilter mode
            pieces, ids = _split_all([patterns[i].encode("utf-8")], [i])
            if _compile(pieces, ids, flags) is not None:
                kept.append(i)
        if kept:
            pieces, ids = _split_all([patterns[i].encode("utf-8") for i in kept], kept)
            exact = _compile([*pieces, UNSAFE_BYTES], [*ids, len(patterns)], flags)
            others = [i for i in range(len(patterns)) if i not in kept]
            rest = prefilter_database([relax_anchors(patterns[i]).encode("utf-8") for i in others], others) if others else None
            if exact is not None and (rest is not None or not others):
                made = (exact, rest, sum(1 << i for i in kept))
    _EXACT_BLOCK[patterns] = made
    return made


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
        database = parser_database(tuple(patterns))
        return None if database is None else cls(database)

    def of(self, text: str) -> int:
        if not scan_safe(text):
            return -1
        found = [0]
        self.database.scan(text.encode("ascii"), match_event_handler=_or_bit, context=found)
        return found[0]


def _or_bit(pattern_id, _start, _end, _flags, found) -> None:
    found[0] |= 1 << pattern_id


class ExactHints:
    """Which parsers' prefilters a text matches, as `re.search` tells it, for the patterns
    Hyperscan compiles as they are (no prefilter mode); `mask` has their bits. A parser whose
    bit is in `mask` needs no `re` search of its own (`SubStream.feed`): on a 2 KB JSON log line
    `re` tries the step prefilter's alternatives at every position (~5 us), its scan ~1.5 us.
    Patterns anchored at the start are left out: `re` tries them at one position. One database
    per pattern (its top-level alternatives under its id): compiled together they cost twice the
    sum of their compiles (0.056 against 0.024 s), and a line rarely wants more than one.
    `of` judges only the texts `scan_safe` admits (there the two engines agree: ASCII, no
    newline, none of the separators only Python's \\s matches)."""

    def __init__(self, databases: list[tuple[int, object]]):
        self.databases = databases  # (bit, database)
        self.mask = sum(bit for bit, _database in databases)

    @classmethod
    def build(cls, patterns: list[str]) -> "ExactHints | None":
        if hyperscan is None:
            return None
        databases = []
        for i, pattern in enumerate(patterns):
            if pattern.startswith("^"):
                continue
            pieces = [alt.encode("utf-8") for alt in alternatives(pattern)]
            database = _compile_exact(pieces, [i] * len(pieces))
            if database is not None:
                databases.append((1 << i, database))
        return cls(databases) if databases else None

    def of(self, text: str, wanted: int) -> int | None:
        """Bit i set where pattern i matches the text, for the bits of `wanted` (in `mask`); None
        where the scan cannot judge the text."""
        if not scan_safe(text):
            return None
        data = text.encode("ascii")
        found = [0]
        for bit, database in self.databases:
            if wanted & bit:
                database.scan(data, match_event_handler=_or_bit, context=found)
        return found[0]


def _compile_exact(expressions: list[bytes], ids: list[int]):
    try:
        return compile_database(expressions, ids, [hyperscan.HS_FLAG_SINGLEMATCH] * len(expressions))
    except hyperscan.error:
        return None


_EXACT_HINTS: dict[tuple[str, ...], ExactHints | None] = {}


def exact_hints_for(patterns: tuple[str, ...]) -> ExactHints | None:
    """One ExactHints per parser table, compiled on first use."""
    if patterns not in _EXACT_HINTS:
        _EXACT_HINTS[patterns] = ExactHints.build(list(patterns))
    return _EXACT_HINTS[patterns]
