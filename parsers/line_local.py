"""Whether a regex reads a text the same when the text stands between newlines (issue 19).

Redaction looks at a record's texts in one piece, joined by newlines (parsers/redact.py). A rule
may search that piece instead of each text when every match it finds in one text it also finds,
the same, in the piece: `line_local` proves that from the pattern's parse. It holds when
  - no element of the pattern can take a newline (a literal `\\n`, a set holding it, `\\s`, `\\W`,
    `\\D`, `[^...]` without it, `.` under DOTALL), so no match runs past the text's ends; and
  - no anchor tells a string's ends from a line's (`\\A`, `\\Z`, `^` and `$` without MULTILINE).
Then the engine, started anywhere in the text, walks the same paths in the piece: a path that
would leave the text meets the newline and fails as it failed at the text's end; a look behind
or ahead across the text's edge meets a newline and answers as it answered at the edge (nothing
it can take); `\\b` and `\\B` see a newline as they see an end (not a word character).

What a match is turned into (a rule's `secret` function) must depend on its groups (and on text
read through line-local patterns), as every rule of parsers/redact_rules.RULES does; the tests
(tests/test_h21d_redact_line_local.py) hold the table to that for every rule added.

Anything the walk does not know is taken to cross lines: the answer is never a wrong True.
"""

from __future__ import annotations

import re
from functools import lru_cache

try:  # Python 3.11+
    from re import _constants as C, _parser as P
except ImportError:  # pragma: no cover - older Pythons
    import sre_constants as C  # type: ignore[no-redef]
    import sre_parse as P  # type: ignore[no-redef]

__all__ = ["line_local"]

_NEWLINE = ord("\n")
# Set items that take a newline (in a set or standing alone): the categories a newline is in.
_NEWLINE_CATEGORIES = frozenset(
    (C.CATEGORY_SPACE, C.CATEGORY_NOT_DIGIT, C.CATEGORY_NOT_WORD, C.CATEGORY_LINEBREAK, C.CATEGORY_UNI_SPACE,
     C.CATEGORY_UNI_NOT_DIGIT, C.CATEGORY_UNI_NOT_WORD, C.CATEGORY_UNI_LINEBREAK, C.CATEGORY_LOC_NOT_WORD)
)  # fmt: skip
_SAFE_CATEGORIES = frozenset(
    (C.CATEGORY_DIGIT, C.CATEGORY_NOT_SPACE, C.CATEGORY_WORD, C.CATEGORY_NOT_LINEBREAK, C.CATEGORY_UNI_DIGIT,
     C.CATEGORY_UNI_NOT_SPACE, C.CATEGORY_UNI_WORD, C.CATEGORY_UNI_NOT_LINEBREAK, C.CATEGORY_LOC_WORD)
)  # fmt: skip
_REPEATS = tuple(op for op in (getattr(C, n, None) for n in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")) if op is not None)
_ATOMIC = getattr(C, "ATOMIC_GROUP", None)


def line_local(pattern: re.Pattern[str] | str, flags: int = 0) -> bool:
    """True when every match of `pattern` in a text is a match, the same, in any text that holds
    it between newlines (or at either end); False when that is not proven."""
    if isinstance(pattern, re.Pattern):
        pattern, flags = pattern.pattern, pattern.flags
    return _parsed_line_local(pattern, flags)


@lru_cache(maxsize=512)
def _parsed_line_local(pattern: str, flags: int) -> bool:
    try:
        parsed = P.parse(pattern, flags)
    except Exception:  # noqa: BLE001 - not a pattern this walk knows: not proven
        return False
    return _seq_local(parsed, parsed.state.flags)


def _seq_local(seq, flags: int) -> bool:
    return all(_item_local(op, av, flags) for op, av in seq)


def _item_local(op, av, flags: int) -> bool:
    if op is C.LITERAL:
        return av != _NEWLINE
    if op is C.NOT_LITERAL:
        return av == _NEWLINE
    if op is C.ANY:
        return not flags & re.DOTALL
    if op is C.IN:
        return not _set_takes_newline(av)
    if op is C.AT:
        if av in (C.AT_BEGINNING, C.AT_END):
            return bool(flags & re.MULTILINE)  # `^`, `$`: a line's ends under MULTILINE, else the string's
        return av in (C.AT_BEGINNING_LINE, C.AT_END_LINE, C.AT_BOUNDARY, C.AT_NON_BOUNDARY, C.AT_UNI_BOUNDARY,
                      C.AT_UNI_NON_BOUNDARY)  # fmt: skip
    if op is C.BRANCH:
        return all(_seq_local(alt, flags) for alt in av[1])
    if op is C.SUBPATTERN:
        _group, add, remove, seq = av
        return _seq_local(seq, (flags | add) & ~remove)
    if op in _REPEATS:
        return _seq_local(av[2], flags)
    if op is C.ASSERT or op is C.ASSERT_NOT:
        return _seq_local(av[1], flags)
    if _ATOMIC is not None and op is _ATOMIC:
        return _seq_local(av, flags)
    if op is C.GROUPREF:
        return True  # the text its group took, which the walk of the group proves
    if op is C.GROUPREF_EXISTS:
        _group, yes, no = av
        return _seq_local(yes, flags) and (no is None or _seq_local(no, flags))
    if op is C.CATEGORY:
        return av in _SAFE_CATEGORIES
    return False  # an element this walk does not know


def _set_takes_newline(items) -> bool:
    """Whether a `[...]` set (or `\\s`-like class) matches a newline; True where not known."""
    negate = bool(items) and items[0][0] is C.NEGATE
    hit = False
    for op, av in items[1:] if negate else items:
        if op is C.LITERAL:
            hit = hit or av == _NEWLINE
        elif op is C.RANGE:
            hit = hit or av[0] <= _NEWLINE <= av[1]
        elif op is C.CATEGORY:
            if av in _NEWLINE_CATEGORIES:
                hit = True
            elif av not in _SAFE_CATEGORIES:
                return True
        else:
            return True  # not known: taken to match
    return not hit if negate else hit
