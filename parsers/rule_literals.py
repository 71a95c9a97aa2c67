"""Which rules of a table can match a line, from the literals their patterns require.

A rule table (parsers/errors.LINE_RULES) is tried in order, first match wins, and most rules
never match a given line. Every rule here gets a set of strings one of which any text it
matches must contain: its `key` where it has one, else what `required_literals` finds in its
pattern. One Hyperscan database of all those literals (plain bytes, no regex semantics: a
literal found in the UTF-8 of a line is in the line) scans a line once and says which rules
are worth a `search`; the others are skipped without changing what the table finds. A rule
whose pattern requires no literal that can be proved is always tried. Without Hyperscan the
same sets are tested with `in`, rule by rule.
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

    @staticmethod
    def _compile(literals: list[str]):
        if hyperscan is None or not literals:
            return None
        expressions = ["".join(f"\\x{b:02x}" for b in s.encode("utf-8", "surrogatepass")).encode() for s in literals]
        database = hyperscan.Database()
        try:
            database.compile(expressions=expressions, ids=list(range(len(expressions))), elements=len(expressions),
                             flags=[hyperscan.HS_FLAG_SINGLEMATCH] * len(expressions))
        except hyperscan.error:
            return None
        return database

    def mask(self, text: str) -> int:
        """Bit i set when rule i may match `text` (all the rules whose literals it contains, and
        those without any)."""
        if self.database is None:
            bits = self.always
            for i, need in enumerate(self.requires):
                if need is not None and any(s in text for s in need):
                    bits |= 1 << i
            return bits
        found: list[int] = []
        self.database.scan(text.encode("utf-8", "surrogatepass"), match_event_handler=_collect, context=found)
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
