"""Redaction: secrets in log text are masked before any record is indexed or written.

A `Redactor` runs the detector table of parsers/redact_rules.py (`RULES`: each rule's shape,
what of a match it masks, and its source) over every text field of every record kind but the
identity fields that parsers/redact_fields.KEPT names, each with its reason. Every rule whose
hints are in a text looks at the whole text and the union of what they find is masked, so a
harmless match of one rule never hides a secret from another; the table runs again on the
result until nothing changes (masking a masked text changes nothing). A cheap prefilter (one
Hyperscan pass over the rules' hint substrings) lets a text without any hint through at the cost
of one search. A site's own patterns (`parse_patterns`: a file of `name: regex` lines, read by
the commands' `--redaction-patterns`) are appended to the table: their match, or its group
named `secret`, is masked; having no hints, they are searched on every text.

What is masked and what stays: see parsers/redact_rules.py and the README ("Redaction").
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterable

import msgspec

from gangscope.parsers.line_local import line_local
from gangscope.parsers.records import Record
from gangscope.parsers.redact_fields import NOT_TEXT, known_clean_check, text_fields
from gangscope.parsers.redact_rules import (MASK, RULES, RedactionRule, Span, name_strength, placeholder,
                                            secret_value, sensitive_name)

try:
    import hyperscan
except ImportError:  # the substring loop does the same job, slower on long texts
    hyperscan = None

__all__ = ["MASK", "RULES", "RedactionRule", "Redactor", "sensitive_name", "redact_text", "redact_record",
           "configure", "active", "parse_patterns", "extra_rule"]

# Passes of the rule table over one text at most (see Redactor.text).
MAX_PASSES = 4
# Nesting a record's values are walked to; anything deeper is masked whole (fail closed).
MAX_DEPTH = 32
# Texts known to come out of `Redactor.text` unchanged, remembered so that the names, units and
# frame lines that recur on every record are looked at once: at most this many, this long.
CLEAN_TEXTS = 1 << 15
CLEAN_TEXT_CHARS = 256


def _masked_value(key: str, value: str) -> str | None:
    """A string under a dict key: masked whole when the key says secret and the value fits the
    key's strength (see redact_rules.secret_value); None when there is nothing to hide."""
    strength = name_strength(key)
    if not strength or not secret_value(value, strength):
        return None
    return MASK


# ----------------------------------------------------------------------------- the engine


def extra_rule(name: str, source: str, where: str = "configuration (redaction patterns)") -> RedactionRule:
    """A site's own rule: `source` is a regex whose group named `secret`, if it has one, is
    masked, else its whole match. ValueError when it does not compile."""
    try:
        pattern = re.compile(source)
    except (re.error, OverflowError, RecursionError) as exc:
        raise ValueError(f"{name}: not a valid regex ({exc}): {source}") from None
    return RedactionRule(name, pattern, "secret" if "secret" in pattern.groupindex else 0, (), where)


_PATTERN_LINE = re.compile(r"(?P<name>[A-Za-z0-9_.\-]+)[ \t]*:[ \t]*(?P<regex>.*?)[ \t\r]*$")


def parse_patterns(text: str, where: str = "redaction patterns") -> list[RedactionRule]:
    """The rules of a patterns file: one `name: regex` a line (a name of letters, digits, `_`,
    `.`, `-`; the regex to the end of the line, spaces around it off); blank lines and lines
    starting with `#` are skipped. ValueError naming `where` and the line for a line of another
    shape, an empty or invalid regex, or a name given twice."""
    rules: list[RedactionRule] = []
    names: set[str] = set()
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = _PATTERN_LINE.fullmatch(line.strip())
        if m is None or not m["regex"]:
            raise ValueError(f"{where} line {number}: want `name: regex`, got {line.strip()[:80]!r}")
        if m["name"] in names:
            raise ValueError(f"{where} line {number}: {m['name']} is named twice")
        names.add(m["name"])
        try:
            rules.append(extra_rule(m["name"], m["regex"], f"{where} line {number}"))
        except ValueError as exc:
            raise ValueError(f"{where} line {number}: {exc}") from None
    return rules


class Redactor:
    """Masks secrets in text and in records. `extra`: a site's own rules (`extra_rule`,
    `parse_patterns`), or bare regex sources (each whole match masked); `counts` tallies masks
    per rule."""

    def __init__(self, rules: Iterable[RedactionRule] = RULES, extra: Iterable[str | RedactionRule] = ()):
        self.rules = list(rules)
        for i, item in enumerate(extra):
            self.rules.append(item if isinstance(item, RedactionRule) else extra_rule(f"extra_{i + 1}", item))
        # The prefilter: substring tests on the lowercased text (C speed, where one regex
        # alternation of case-insensitive literals costs tens of microseconds per text),
        # then the rules that have no hint.
        self._hints = tuple(sorted({h for rule in self.rules for h in rule.hints}))
        self._hint_scan = _hint_scanner(self._hints)
        # Which rules a pass runs: those with a hint among the text's, found in one scan
        # (a substring test per rule costs more than the rule's search once the table is long).
        self._hints_in = _hints_finder(self._hints)
        # per hint, the rules it lets look (their places in the table); the rules without hints look always
        self._rules_of_hint = [tuple(i for i, rule in enumerate(self.rules) if h in rule.hints) for h in self._hints]
        self._always = tuple(i for i, rule in enumerate(self.rules) if not rule.hints)
        self._unhinted = _any_match([rule.pattern for rule in self.rules if not rule.hints])
        # A record's texts are looked at in one piece, joined by newlines, when that finds what
        # a look at each finds: no hint spans a newline, and no pattern without hints (it may be
        # anchored, or span the join).
        self._one_look = self._unhinted is None and not any("\n" in h for h in self._hints)
        # Where a record's joined texts hold hints, the rules whose matches stay within a line
        # (parsers/line_local.py) search the joined text once instead of each text; a rule whose
        # gate (`after_hint`) stays within a line and is shut on the joined text finds nothing in
        # any of them; any other rule still looks at each text.
        # (line-local pattern, line-local gate) per rule, worked out when first asked: parsing a
        # pattern costs about a million instructions, and most rules are never asked about
        self._locality: dict[int, tuple[bool, bool]] = {}
        self.counts: dict[str, int] = {}
        self._clean: set[str] = set()  # short texts `text` returns unchanged (see CLEAN_TEXTS)
        self._plain_names: set[str] = set()  # dict keys clean as text and not secret names
        self._known_clean: dict[type, Callable[[Any], bool]] = {}  # per record type: see redact_fields.known_clean_check

    def _may_hold_secret(self, text: str, lower: str | None = None) -> bool:
        if self._hint_scan is not None and text.isascii():
            found = self._hint_scan(text)
            if found is not None:
                return found or (self._unhinted is not None and self._unhinted(text))
        if lower is None:
            lower = text.lower()
        for hint in self._hints:
            if hint in lower:
                return True
        return self._unhinted is not None and self._unhinted(text)

    def text(self, text: str) -> str:
        """The text with its secrets masked (the same object when there is nothing to mask)."""
        if not text or text in self._clean:
            return text
        # An ASCII text's hints found in one scan serve both the prefilter (none: nothing to
        # mask unless a rule without hints matches) and the first pass's choice of rules.
        present = self._hints_in(text) if self._hints_in is not None and text.isascii() else None
        if present is not None:
            if not present and (self._unhinted is None or not self._unhinted(text)):
                self._remember_clean((text,))
                return text
        elif not self._may_hold_secret(text):
            self._remember_clean((text,))
            return text
        lower = text.lower()
        # A mask can remove what stopped an earlier rule (a `/` ending a URL password), so the
        # table runs again until nothing changes: masking a masked text changes nothing.
        given = text
        for _ in range(MAX_PASSES):
            masked = self._pass(text, lower, present)
            if masked is text:
                break
            text = masked
            lower = text.lower()
            present = None
        if text is given:
            self._remember_clean((text,))
        return text

    def _remember_clean(self, texts: Iterable[str]) -> None:
        clean = self._clean
        if len(clean) >= CLEAN_TEXTS:
            clean.clear()  # bounded; the texts that recur come back at once
        for text in texts:
            if len(text) <= CLEAN_TEXT_CHARS:
                clean.add(text)

    def _pass(self, text: str, lower: str, present: set[int] | None = None) -> str:
        """One run of the table: every rule with a hint in the text looks at all of it; the
        union of the spans they find is masked (overlapping or touching spans as one).
        `present`: the text's hints as `_hints_in` found them, where the caller has them."""
        counts = self.counts
        spans: list[Span] = []
        if present is None and self._hints_in is not None and text.isascii():
            present = self._hints_in(text)
        if present is not None:
            # the rules a hint of the text lets look, in the table's order
            look = set(self._always)
            rules_of_hint = self._rules_of_hint
            for h in present:
                look.update(rules_of_hint[h])
            rules = self.rules
            looking: list[RedactionRule] = [rules[i] for i in sorted(look)]
            held = set(map(self._hints.__getitem__, present))  # their texts: a rule's hint_followed looks for these only
        else:
            looking = [rule for rule in self.rules if not rule.hints or any(h in lower for h in rule.hints)]
            held = None
        for rule in looking:
            found = rule.spans_of(text, lower, held)
            if found:
                counts[rule.name] = counts.get(rule.name, 0) + 1
                spans.extend(found)
        if not spans:
            return text
        spans.sort()
        out: list[str] = []
        at = 0
        start, end = spans[0]
        for s, e in spans[1:]:
            if s <= end:
                end = max(end, e)
                continue
            out.append(text[at:start])
            out.append(MASK)
            at = end
            start, end = s, e
        out.append(text[at:start])
        out.append(MASK)
        out.append(text[end:])
        masked = "".join(out)
        return text if masked == text else masked

    def value(self, value: Any, depth: int = 0) -> Any:
        """A value (details of a record: JSON-like, or a struct) with secrets masked in its
        strings, dict keys included; a string under a key whose name is secret is masked whole.
        Structs are masked in place; a value nested deeper than MAX_DEPTH is masked whole. The
        same object comes back when nothing in it was masked."""
        if isinstance(value, str):
            return self.text(value)
        if type(value) in NOT_TEXT:
            return value
        if depth > MAX_DEPTH:
            return MASK
        if isinstance(value, dict):
            out = {}
            changed = False
            for key, item in value.items():
                if isinstance(key, str):
                    if isinstance(item, str) and item and sensitive_name(key):
                        masked = _masked_value(key, item)
                        if masked is not None:
                            self.counts["secret_key_in_details"] = self.counts.get("secret_key_in_details", 0) + 1
                            out[self.text(key)] = masked
                            changed = True
                            continue
                    new_key = self.text(key)
                else:
                    new_key = key
                new_item = out[new_key] = self.value(item, depth + 1)
                changed = changed or new_key is not key or new_item is not item
            return out if changed else value  # the same object when nothing was masked
        if isinstance(value, (list, tuple)):
            items = [self.value(item, depth + 1) for item in value]
            for a, b in zip(items, value):
                if a is not b:
                    return items if isinstance(value, list) else tuple(items)
            return value
        if isinstance(value, msgspec.Struct):
            # a struct whose texts are all known clean (a frame seen before) has nothing to mask
            kind = type(value)
            known_clean = self._known_clean.get(kind)
            if known_clean is None:
                known_clean = self._known_clean[kind] = known_clean_check(text_fields(kind), self._clean, self._plain_names)
            if not known_clean(value):
                self._mask_fields(value, text_fields(kind), depth + 1)
        return value

    def record(self, record: Record) -> Record:
        """Mask every text field of a record in place (and return it): each str field and the
        strings in its lists, dicts (keys too) and nested structs (frames, chain links,
        evidence, metric names), whatever its kind, but for the fields redact_fields.KEPT names. All of the
        record's new text is looked at in one piece first: most records hold no secret."""
        known_clean = self._known_clean.get(type(record))
        if known_clean is None:
            known_clean = self._known_clean[type(record)] = known_clean_check(text_fields(type(record)), self._clean, self._plain_names)
        if known_clean(record):
            return record
        look = self._needs_mask(record, text_fields(type(record)))
        if look:
            self._mask_fields(record, look, 0)
        return record

    def _mask_fields(self, obj: msgspec.Struct, fields: tuple[tuple[str, bool], ...], depth: int) -> None:
        for name, plain in fields:
            value = getattr(obj, name)
            if value is None:
                continue
            masked = self.text(value) if plain and type(value) is str else self.value(value, depth)
            if masked is not value:
                setattr(obj, name, masked)

    def _needs_mask(self, obj: msgspec.Struct, fields: tuple[tuple[str, bool], ...]) -> tuple[tuple[str, bool], ...]:
        """The fields whose masking could change something (none: nothing to mask): where a text
        not known clean holds a hint of a secret, the fields that hold such a text; where a
        secret-named key holds a string, or the nesting is too deep, every field. A field all of
        whose texts are known clean (a trace's frames seen before) comes back from the walk as it
        was: it is not walked."""
        clean = self._clean
        new: list[str] = []
        names: list[str] = []
        walked: set[str] | None = None  # the fields walked (not plain texts) that gave `new` a text
        for name, plain in fields:
            value = getattr(obj, name)
            if plain and type(value) is str:
                if value and value not in clean:
                    new.append(value)
            elif value is not None:
                before = len(new)
                if self._gather(value, new, names, 1):
                    return fields
                if len(new) != before:
                    if walked is None:
                        walked = set()
                    walked.add(name)
        if not new:
            return ()
        lines_clean = False
        if self._one_look:
            if len(new) > 1:
                new = list(dict.fromkeys(new))  # a text twice (a trace's message in its chain) is looked at once
            text = new[0] if len(new) == 1 else "\n".join(new)
            answer = self._one_look_answer(text, new)
            if answer is None:
                return self._holding(obj, fields, walked)
            lines_clean = answer and "\n" in text
        elif any(self._may_hold_secret(text) for text in new):
            return self._holding(obj, fields, walked)
        self._remember_clean(new)
        if lines_clean:
            # each line of the join is clean too (see _one_look_answer): the line of a trace its
            # error record repeats is then known clean
            self._remember_clean(text.split("\n"))
        if names:
            if len(self._plain_names) >= CLEAN_TEXTS:
                self._plain_names.clear()
            self._plain_names.update(names)
        return ()

    def _one_look_answer(self, text: str, new: list[str]) -> bool | None:
        """Whether any rule may find a span in the texts `new`, told from `text`, their join by
        newlines: None when one may (or it cannot be told: the caller looks at each text), else
        whether each LINE of `text` is known clean too (True) or only the texts (False).
        An ASCII join is looked at by the rules its hints let look: a rule that stays within a
        line (line_local) searches the join once, as its matches in a text, or in a line of the
        join, are its matches in the join; a rule whose gate (`after_hint`) stays within a line
        and is shut on the join finds nothing in any of them; any other rule searches each text
        (and the join's lines are not answered for). A join of other characters: its hints only."""
        if self._hints_in is None or not text.isascii():
            return None if self._may_hold_secret(text) else False
        present = self._hints_in(text)
        if present is None:
            return None if self._may_hold_secret(text) else False
        if not present:
            return True
        lower = text.lower()
        held = set(map(self._hints.__getitem__, present))
        look: set[int] = set()
        rules_of_hint = self._rules_of_hint
        for h in present:
            look.update(rules_of_hint[h])
        rules = self.rules
        lines_clean = True
        locality = self._locality
        for i in look:
            rule = rules[i]
            local = locality.get(i)
            if local is None:
                local = locality[i] = (line_local(rule.pattern), rule.after_hint is not None and line_local(rule.after_hint))
            if local[0]:
                if rule.spans_of(text, lower, held):
                    return None
            elif local[1] and not rule.hint_followed(text, lower, held):
                continue
            elif any(rule.spans_of(t) for t in new):
                return None
            else:
                lines_clean = False
        return lines_clean

    def _holding(self, obj: msgspec.Struct, fields: tuple[tuple[str, bool], ...], walked: set[str] | None) -> tuple[tuple[str, bool], ...]:
        """The fields of `obj` that gave `_needs_mask` a text not known clean: a plain text not in
        the clean set (as it stood there: nothing changed it since), or a field it walked."""
        clean = self._clean
        holding = []
        for field in fields:
            name, plain = field
            if plain:
                value = getattr(obj, name)
                if type(value) is str:
                    if value and value not in clean:
                        holding.append(field)
                    continue
            if walked is not None and name in walked:
                holding.append(field)
        return tuple(holding)

    def _gather(self, value: Any, new: list[str], names: list[str], depth: int) -> bool:
        """Adds the texts of a value not known clean to `new` (dict keys not yet known plain
        also to `names`); True when the value needs the full walk whatever they hold."""
        kind = type(value)
        if kind is str:
            if value and value not in self._clean:
                new.append(value)
            return False
        if kind in NOT_TEXT:
            return False
        if depth > MAX_DEPTH:
            return True
        if kind is dict:
            plain = self._plain_names
            for key, item in value.items():
                if type(key) is str:
                    if key not in plain:
                        if sensitive_name(key):
                            if isinstance(item, str) and item:
                                return True
                        else:
                            names.append(key)
                        new.append(key)
                elif self._gather(key, new, names, depth + 1):
                    return True
                if type(item) not in NOT_TEXT and self._gather(item, new, names, depth + 1):
                    return True
            return False
        if kind is list or kind is tuple:
            for item in value:
                if type(item) not in NOT_TEXT and self._gather(item, new, names, depth + 1):
                    return True
            return False
        if isinstance(value, msgspec.Struct):
            known_clean = self._known_clean.get(kind)
            if known_clean is None:
                known_clean = self._known_clean[kind] = known_clean_check(text_fields(kind), self._clean, self._plain_names)
            if known_clean(value):  # a frame whose file, function and code were seen before
                return False
            for name, plain in text_fields(kind):
                item = getattr(value, name)
                if item is not None and self._gather(item, new, names, depth + 1):
                    return True
            return False
        # A subclass of str, dict or list, or a type records do not hold: the full walk decides.
        return isinstance(value, (str, dict, list, tuple))


def _any_match(patterns: list[re.Pattern[str]]) -> Callable[[str], bool] | None:
    """Whether any of the patterns matches a text: one alternation when they join into one, else
    (flags of their own, clashing group names, inline flags) each searched in turn."""
    if not patterns:
        return None
    if all(p.flags == re.UNICODE for p in patterns):
        try:
            joined = re.compile("|".join(f"(?:{p.pattern})" for p in patterns))
            return lambda text: joined.search(text) is not None
        except re.error:
            pass
    return lambda text: any(p.search(text) is not None for p in patterns)


def _caseless_database(hints: tuple[str, ...]):
    """The hints compiled for one caseless Hyperscan pass, each reported once under its index;
    None when Hyperscan is missing, there are no hints, or it refuses them."""
    if hyperscan is None or not hints:
        return None
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    flags = hyperscan.HS_FLAG_CASELESS | hyperscan.HS_FLAG_SINGLEMATCH
    try:
        database.compile(expressions=[_literal(h).encode() for h in hints], ids=list(range(len(hints))),
                         elements=len(hints), flags=[flags] * len(hints))
    except hyperscan.error:
        return None
    return database


def _literal(hint: str) -> str:
    """A hint as a Hyperscan expression that matches the hint itself: every character but a letter,
    a digit, a space or a tab behind a backslash (a hint's `.` is a dot, as `hint in lower` reads it,
    not any character: 'sg.' let every "ProcessGroup" line into the rules' look)."""
    return "".join(c if c.isalnum() or c in " \t" else "\\" + c for c in hint)


def _hints_finder(hints: tuple[str, ...]) -> Callable[[str], set[int] | None] | None:
    """The indices of the hints an ASCII text holds (caseless), in one Hyperscan pass; None
    where it cannot tell (the caller then tests rule by rule)."""
    database = _caseless_database(hints)
    if database is None:
        return None

    def find(text: str) -> set[int] | None:
        found: set[int] = set()
        try:
            database.scan(text.encode("ascii"), match_event_handler=lambda hint, *_: found.add(hint))
        except hyperscan.error:
            return None
        return found

    return find


def _hint_scanner(hints: tuple[str, ...]) -> Callable[[str], bool | None] | None:
    """Whether an ASCII text holds any of the hints (caseless), in one Hyperscan pass: a
    traceback of 2 KB costs about 1 microsecond instead of one substring search per hint.
    Returns None where it cannot tell (the caller then searches substring by substring).
    Non-ASCII texts are left to the caller: `str.lower` folds some of them into ASCII."""
    database = _caseless_database(hints)
    if database is None:
        return None

    def stop(*_match) -> bool:
        return True  # one hint is enough: stop the scan

    def scan(text: str) -> bool | None:
        try:
            database.scan(text.encode("ascii"), match_event_handler=stop)
        except hyperscan.ScanTerminated:
            return True
        except hyperscan.error:
            return None
        return False

    return scan


# ----------------------------------------------------------------------------- the default

_active = Redactor()


def configure(extra: Iterable[str | RedactionRule] = (), rules: Iterable[RedactionRule] = RULES) -> Redactor:
    """Replace the redactor the pipeline uses (a site's own rules, see `parse_patterns`). Worker
    processes started by fork inherit it."""
    global _active
    _active = Redactor(rules, extra)
    return _active


def active() -> Redactor:
    return _active


def redact_text(text: str) -> str:
    return _active.text(text)


def redact_record(record: Record) -> Record:
    """Mask the secrets of one record in place with the configured redactor."""
    return _active.record(record)
