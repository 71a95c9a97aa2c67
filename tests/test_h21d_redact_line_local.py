"""A record's texts looked at once, joined by newlines (issue 19, h21d): the rules whose matches stay
within a line search the join instead of each text (parsers/line_local.py); the others still look at
each text. The proof per pattern, and the answers against a field-by-field reference."""

from __future__ import annotations

import copy
import re

import pytest
from hypothesis import given, settings, strategies as st

from gangscope.parsers import redact_rules
from gangscope.parsers.line_local import line_local
from gangscope.parsers.records import ChainLink, ErrorRecord, Frame, TraceRecord
from gangscope.parsers.redact import Redactor
from gangscope.parsers.redact_fields import text_fields
from gangscope.parsers.redact_rules import RULES

# The rules that may match across a line break or tell a string's end from a line's, and why. A
# rule added to the table whose pattern is not proven line-local fails here until it is named
# (the redactor then searches each text for it, as before).
CROSSING = {
    "private_key": "DOTALL `.*?` over the key's lines, and `\\Z` for a block cut short",
    "k8s_env_value": "`(?:,|\\n)` between an env entry's name and value (YAML puts them on two lines)",
    "oracle_logon_password": "`$` without MULTILINE in its end lookahead (a newline after it is taken by `\\s` there, "
                             "but the walk does not prove it)",
}


def test_the_rules_that_may_cross_a_line_are_named():
    crossing = {rule.name for rule in RULES if not line_local(rule.pattern)}
    assert crossing == set(CROSSING)


def test_gates_and_the_bare_value_rest_stay_within_a_line():
    # a gate shut on the join must be shut on each text; _named_value reads the rest of a bare
    # word from the whole text with _BARE_REST
    assert all(line_local(rule.after_hint) for rule in RULES if rule.after_hint is not None)
    assert line_local(redact_rules._BARE_REST)


@pytest.mark.parametrize("pattern, flags, expected", [
    (r"a\nb", 0, False), (r"[^a]", 0, False), (r"\s", 0, False), (r"[\s\d]", 0, False), (r"\W", 0, False),
    (r"\D", 0, False), (r"[\x00-\x20]", 0, False), (r"(?:,|\n)", 0, False), (r".", re.DOTALL, False),
    (r"(?s:.)", 0, False), (r"\A", 0, False), (r"\Z", 0, False), (r"^a", 0, False), (r"a$", 0, False),
    (r"(?=x|$)", 0, False), (r"[^\n]", 0, True), (r"[^\s]", 0, True), (r"[^\W]", 0, True), (r".", 0, True),
    (r"(?-s:.)", re.DOTALL, True), (r"^a$", re.MULTILINE, True), (r"\b\w+\b\B", 0, True), (r"\S+", 0, True),
    (r"(?<![\w\-.])x(?![A-Za-z])", 0, True), (r"(?P<q>['\"])x(?P=q)", 0, True), (r"(?=[ \t])", 0, True),
    (r"[A-Za-z0-9_\-]{0,63}[ \t]", re.IGNORECASE, True), (r"(?<!\n)x", 0, False), (r"(?=\s)", 0, False),
])  # fmt: skip
def test_line_local_reads_a_pattern(pattern, flags, expected):
    assert line_local(re.compile(pattern, flags)) is expected


FRAGMENTS = [
    "password=hunter2hunter2", "api_key: sk-abcdefghijklmnopqrstuvwxyz123456", "token=ghp_" + "a" * 36, "\n",
    "--password 'p4ss w0rd'", "KeyError: 'value'", "passed the value of key", "name: DB_PASS\n  value: s3cr3tv4lue",
    "https://user:pa55word@example.com/x", "loss=0.5", " ", "Traceback (most recent call last):", "-u admin:pw9x ",
    "AKIAIOSFODNN7EXAMPLE", "Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123", "x", "=", ":", "\"", "'",
    "sqlplus scott/tiger", "-----BEGIN RSA PRIVATE KEY-----\nMIIEabc\n", "key-value store by key '0'", "//",
    "docker login -p s3cretpass ", "cookie: a=b; c=d", "mysql -pS3cret ", "--token", "sig=", "SECRET_KEY",
]
texts = st.lists(st.sampled_from(FRAGMENTS), max_size=7).map("".join)


@settings(max_examples=400, deadline=None)
@given(texts, texts, texts)
def test_a_line_local_rule_finds_in_the_join_what_it_finds_in_the_text(before, text, after):
    """What the proof says, tried: a line-local rule's spans in a text are its spans in any join that
    holds the text between newlines; a line-local gate open on the text is open on the join."""
    join = f"{before}\n{text}\n{after}"
    offset = len(before) + 1
    for rule in RULES:
        if line_local(rule.pattern):
            inside = sorted((s - offset, e - offset) for s, e in rule.spans_of(join) if offset <= s and e <= offset + len(text))
            assert inside == sorted(rule.spans_of(text)), rule.name
        if rule.after_hint is not None and text.isascii() and rule.hint_followed(text):
            assert rule.hint_followed(join), rule.name


def reference_record(redactor: Redactor, record):
    """Every text field masked on its own: a plain text through `text`, anything else walked."""
    for name, plain in text_fields(type(record)):
        value = getattr(record, name)
        if value is not None:
            setattr(record, name, redactor.text(value) if plain and type(value) is str else redactor.value(value))
    return record


@settings(max_examples=250, deadline=None)
@given(st.lists(st.tuples(texts, texts, texts, texts), min_size=1, max_size=4))
def test_records_mask_as_field_by_field(items):
    """Traces and their errors, through one redactor (its clean texts and lines carried from record to
    record), mask as a fresh redactor masking each field on its own does."""
    shared, fresh = Redactor(), Redactor()
    for message, text, code, key in items:
        lines = text.split("\n")
        frames = [Frame(file="/workspace/train.py", line=3, function="main", code=code),
                  Frame(file="/opt/x.py", line=9, function=lines[0], code="loss.backward()")]
        trace = TraceRecord(exception_type="RuntimeError", message=message, text=f"Traceback\n{text}\n{message}",
                            frames=frames, chain=[ChainLink(exception_type="RuntimeError", message=message, frames=copy.deepcopy(frames))],
                            details={"remote": [{"process": 1, "note": code, key or "k": lines[-1]}]})
        error = ErrorRecord(message=lines[-1], line=message)
        for record in (trace, error):
            fresh._clean.clear()
            fresh._plain_names.clear()
            expected = reference_record(fresh, copy.deepcopy(record))
            assert shared.record(record) == expected


def test_the_lines_of_a_clean_trace_are_known_clean_and_are():
    """A trace that holds hints but no secret: its join's lines are remembered clean (its error's
    line is then not looked at again), and each of them is what a fresh redactor leaves as it is."""
    redactor = Redactor()
    text = ("Traceback (most recent call last):\n  File \"/w/train.py\", line 3, in main\n    loss.backward()  # the backward pass\n"
            "torch.distributed.DistBackendError: retrieving the id via c10d key-value store by key '0' failed")
    trace = TraceRecord(exception_type="torch.distributed.DistBackendError", message=text.rsplit(": ", 1)[1], text=text)
    redactor.record(trace)
    for line in text.split("\n"):
        assert line in redactor._clean
        assert Redactor().text(line) is line
    error = ErrorRecord(message=text.split("\n")[-1], line=text.split("\n")[-1])
    redactor.record(ErrorRecord(message="an earlier error", line="an earlier error"))  # its category, as before
    redactor._needs_mask = None  # known clean: the record is not looked at (a call would fail)
    assert redactor.record(error) is error and error.message == text.split("\n")[-1]


def test_a_secret_on_one_line_of_a_trace_is_masked_and_its_lines_not_remembered():
    redactor = Redactor()
    text = "Traceback (most recent call last):\n    connect(password='hunter2hunter2')\nRuntimeError: the key-value store is gone"
    trace = TraceRecord(exception_type="RuntimeError", message="the key-value store is gone", text=text)
    redactor.record(trace)
    assert "hunter2hunter2" not in trace.text
    assert "    connect(password='hunter2hunter2')" not in redactor._clean
