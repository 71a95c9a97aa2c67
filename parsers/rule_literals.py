"""Which rules of a table can match a line, from the literals their patterns require.

A rule table (parsers/errors.LINE_RULES) is tried in order, first match wins, and most rules
never match a given line. Every rule here gets a set of strings one of which any text it
matches must contain: its `key` where it has one, else what `required_literals` finds in its
pattern. One Hyperscan database of all those literals (plain bytes, no regex semantics: a
literal found in the UTF-8 of a line is in the line) scans a line once and says which rules
are worth a `search`; the others are skipped without changing what the table finds. A rule
whose pattern requires no literal that can be proved is always tried. Without Hyperscan the
same sets are tested with `in`, rule by rule.

On a text Hyperscan reads as `re` does (ASCII, no newline, none of the separators only Python's
\\s matches: `scan_safe`), one scan of a second database, the rules' patterns themselves in
prefilter mode (a superset of what each matches), says which rules can match at all: on a long
step line that holds a rule's literals (Megatron's "| grad norm: ", "nan iterations") the
`search` of four rules that then find nothing cost ~35 us, the scan ~1-2 us.
"""

from __future__ import annotations

import re

try:
    from re import _constants as _c, _parser as _sre_parse  # Python 3.11+
except ImportError:  # pragma: no cover - older layouts
    import sre_constants as _c  # type: ignore[no-redef]
    import sre_parse as _sre_parse  # type: ignore[no-redef]

try:
    import hyperscan
except ImportError:  # the `in` tests do the same work, rule by rule
    hyperscan = None

# The compiler of the rules' database: `hyperscan.Database().compile` unless the pipeline hands
# one that keeps compiled databases (pipeline/curate/database_cache.compile_database: the ~0.2 s
# compile of the rule table once per machine, not once per process). Same arguments and result.
compile_database = None

# A rule whose literals include one shorter than this is tried on every text instead: a single character (glog_fatal's ':')
# is in nearly every line, so it filters nothing, and a literal set that holds one took Hyperscan 0.14 s to compile
# instead of 0.011 s (the 237 literals of errors.LINE_RULES, 2026-12-03), in every process.
MIN_LITERAL = 2

_REPEATS = {_c.MAX_REPEAT, _c.MIN_REPEAT, getattr(_c, "POSSESSIVE_REPEAT", _c.MAX_REPEAT)}
_ATOMIC = getattr(_c, "ATOMIC_GROUP", None)


def required_literals(pattern: re.Pattern[str]) -> frozenset[str] | None:
    """Strings one of which is in every text `pattern` finds a match in; None when none can be
    proved (case-insensitive patterns, or no literal on every path)."""
    if pattern.flags & re.IGNORECASE or not isinstance(pattern.pattern, str):
        return None
    try:
        tree = _sre_parse.parse(pattern.pattern, pattern.flags)
    except Exception:  # noqa: BLE001 - a pattern this reader does not follow: no prefilter
        return None
    found = _of_sequence(list(tree))
    if not found or min(len(s) for s in found) == 0:
        return None
    return frozenset(found)


def _score(found: frozenset[str]) -> tuple[int, int]:
    return min(len(s) for s in found), -len(found)


def _of_sequence(items: list) -> frozenset[str] | None:
    """The most selective required set among a sequence's literal runs and items."""
    best: frozenset[str] | None = None
    run: list[str] = []

    def offer(found: frozenset[str] | None) -> None:
        nonlocal best
        if found and min(len(s) for s in found) > 0 and (best is None or _score(found) > _score(best)):
            best = found

    for op, av in items:
        if op is _c.LITERAL:
            run.append(chr(av))
            continue
        if run:
            offer(frozenset(["".join(run)]))
            run = []
        offer(_of_item(op, av))
    if run:
        offer(frozenset(["".join(run)]))
    return best


def _of_item(op, av) -> frozenset[str] | None:
    if op is _c.SUBPATTERN:
        _group, add_flags, _del_flags, sub = av
        if add_flags & re.IGNORECASE:
            return None
        return _of_sequence(list(sub))
    if _ATOMIC is not None and op is _ATOMIC:
        return _of_sequence(list(av))
    if op is _c.BRANCH:
        union: set[str] = set()
        for alternative in av[1]:
            found = _of_sequence(list(alternative))
            if not found:
                return None  # one way to match without any literal
            union |= found
        return frozenset(union)
    if op in _REPEATS:
        low, _high, sub = av
        return _of_sequence(list(sub)) if low >= 1 else None
    return None  # classes, anchors, assertions, back references: nothing required proved


class RuleFilter:
    """The rules of a table (each with `key` and `pattern`) that may match a text, in table order."""

    def __init__(self, rules) -> None:
        self.rules = tuple(rules)
        literals: dict[str, int] = {}  # literal -> bit mask of the rules that require it
        always = 0
        self.requires: list[frozenset[str] | None] = []
        for i, rule in enumerate(self.rules):
            need = frozenset([rule.key]) if rule.key else required_literals(rule.pattern)
            if need is not None and min(len(s) for s in need) < MIN_LITERAL:
                need = None  # tried on every text: see MIN_LITERAL
            self.requires.append(need)
            if need is None:
                always |= 1 << i
                continue
            for literal in need:
                literals[literal] = literals.get(literal, 0) | (1 << i)
        self.always = always
        self.literals = list(literals)
        self.masks = [literals[s] for s in self.literals]
        self.database = self._compile(self.literals)
        self.patterns, self.unscanned = _compile_patterns(self.rules)

    @staticmethod
    def _compile(literals: list[str]):
        if hyperscan is None or not literals:
            return None
        expressions = ["".join(f"\\x{b:02x}" for b in s.encode("utf-8", "surrogatepass")).encode() for s in literals]
        ids, flags = list(range(len(expressions))), [hyperscan.HS_FLAG_SINGLEMATCH] * len(expressions)
        try:
            if compile_database is not None:  # the pipeline's cache of compiled databases
                return compile_database(expressions, ids, flags)
            database = hyperscan.Database()
            database.compile(expressions=expressions, ids=ids, elements=len(expressions), flags=flags)
        except hyperscan.error:
            return None
        return database

    def mask(self, text: str) -> int:
        """Bit i set when rule i may match `text` (all the rules whose literals it contains, and
        those without any; on a text `scan_safe` admits, of those only the ones whose pattern's
        prefilter matches it, and the rules outside that database as before)."""
        data = text.encode("utf-8", "surrogatepass")
        bits = self._literal_mask(text, data)
        if bits & ~self.unscanned and self.patterns is not None and scan_safe(text):
            # a rule's key gates it even where its pattern would match without it: both must say yes
            found: list[int] = []
            self.patterns.scan(data, match_event_handler=_collect, context=found)  # ASCII: its UTF-8 bytes are its ASCII
            matched = self.unscanned
            for i in found:
                matched |= 1 << i
            bits &= matched
        return bits

    def _literal_mask(self, text: str, data: bytes | None = None) -> int:
        """The rules whose literals `text` holds (and those without any); `data` its UTF-8 bytes where the caller has them."""
        if self.database is None:
            bits = self.always
            for i, need in enumerate(self.requires):
                if need is not None and any(s in text for s in need):
                    bits |= 1 << i
            return bits
        found: list[int] = []
        if data is None:
            data = text.encode("utf-8", "surrogatepass")
        self.database.scan(data, match_event_handler=_collect, context=found)
        bits = self.always
        masks = self.masks
        for literal in found:
            bits |= masks[literal]
        return bits

    def candidates(self, text: str) -> list:
        """The rules that may match `text`, in table order."""
        bits = self.mask(text)
        rules = self.rules
        out = []
        while bits:
            low = bits & -bits
            out.append(rules[low.bit_length() - 1])
            bits ^= low
        return out


def _collect(literal_id, _start, _end, _flags, found) -> None:
    found.append(literal_id)


def scan_safe(text: str) -> bool:
    r"""Whether Hyperscan over the text's bytes finds at least what `re` finds in it: ASCII (where \w,
    \d, `.` and classes mean the same over bytes and characters), no newline (`$`, `.`), none of
    the separators \x1c-\x1f (Python's \s matches them, PCRE's does not). As pipeline/curate/scan.py's."""
    return text.isascii() and not ("\n" in text or "\x1c" in text or "\x1d" in text or "\x1e" in text or "\x1f" in text)


# Python syntax PCRE reads otherwise without an error: "{,n}" (PCRE: literal text) and "[:" (a POSIX class)
_NOT_PCRE = re.compile(r"\{,|\[:")


def _compile_patterns(rules: tuple) -> tuple[object, int]:
    """(a Hyperscan database of the rules' patterns in prefilter mode, rule i reported as id i,
    None when Hyperscan is missing or refuses them; the bits of the rules left out of it: a
    pattern with flags other than IGNORECASE, non-ASCII, or with syntax PCRE reads otherwise)."""
    if hyperscan is None or not rules:
        return None, 0
    expressions: list[bytes] = []
    ids: list[int] = []
    flags: list[int] = []
    unscanned = 0
    for i, rule in enumerate(rules):
        pattern = rule.pattern
        text = pattern.pattern
        if (not isinstance(text, str) or pattern.flags & ~(re.UNICODE | re.IGNORECASE) or not text.isascii()
                or _NOT_PCRE.search(text)):
            unscanned |= 1 << i
            continue
        expressions.append(text.encode("ascii"))
        ids.append(i)
        flags.append(hyperscan.HS_FLAG_PREFILTER | hyperscan.HS_FLAG_SINGLEMATCH | hyperscan.HS_FLAG_ALLOWEMPTY
                     | (hyperscan.HS_FLAG_CASELESS if pattern.flags & re.IGNORECASE else 0))
    if not expressions:
        return None, 0
    try:
        if compile_database is not None:
            return compile_database(expressions, ids, flags), unscanned
        database = hyperscan.Database()
        database.compile(expressions=expressions, ids=ids, elements=len(expressions), flags=flags)
        return database, unscanned
    except hyperscan.error:
        return None, 0
