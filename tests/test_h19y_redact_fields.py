"""Redaction after h19y's two cuts: a record's walk goes only into the fields that hold a text not known
clean (a trace's recurring frames are not walked again), and a rule's `hint_followed` takes the pass's
lowered text and the hints the scan found. Against every field walked on a fresh redactor, and
against `hint_followed` on the text alone: the same masks."""

from __future__ import annotations

import copy

from hypothesis import given, settings, strategies as st

from gangscope.parsers.records import ChainLink, ErrorRecord, Frame, StepRecord, TraceRecord
from gangscope.parsers.redact import Redactor
from gangscope.parsers.redact_fields import text_fields

FRAGMENTS = [
    "password=hunter2hunter2", "api_key: sk-abcdefghijklmnopqrstuvwxyz123456", "token=ghp_" + "a" * 36,
    "--password 'p4ss w0rd'", "KeyError: 'value'", "ValueError: bad value", "passed the value of key",
    "name: DB_PASS\n  value: s3cr3tv4lue", "https://user:pa55word@example.com/x", "--hf_token hf_" + "b" * 34,
    "loss=0.5", "step 10", " ", "\n", "Traceback (most recent call last):", "AKIAIOSFODNN7EXAMPLE", "x", "é",
]
texts = st.lists(st.sampled_from(FRAGMENTS), max_size=6).map("".join)
SHARED, FRESH = Redactor(), Redactor()


def walked_whole(record):
    """Every text field walked, nothing known clean: the masks a record must get."""
    FRESH._clean.clear()
    FRESH._plain_names.clear()
    FRESH._known_clean.clear()
    record = copy.deepcopy(record)
    FRESH._mask_fields(record, text_fields(type(record)), 0)
    return record


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(texts, texts, texts, texts, st.booleans()), min_size=1, max_size=5))
def test_only_fields_with_new_texts_are_walked(items):
    SHARED._clean.clear()
    SHARED._plain_names.clear()
    for message, text, code, key_text, secret_frame in items:
        frames = [Frame(file="/workspace/train.py", line=3, function="main", code="loss.backward()"),
                  Frame(file="/opt/x.py", line=9, function="f", code=code if secret_frame else "step()")]
        trace = TraceRecord(exception_type="KeyError", message=message, text=text, frames=frames,
                            chain=[ChainLink(exception_type="ValueError", message=key_text, frames=copy.deepcopy(frames))],
                            details={"note": code, "password": key_text or "x"})
        records = (trace, ErrorRecord(message=message, line=text, category="python_exception"),
                   StepRecord(step=1, metrics={"loss": 0.5}, throughput_unit=key_text or None))
        for record in records:
            want = walked_whole(record)
            got = SHARED.record(record)
            assert got == want


@settings(max_examples=300, deadline=None)
@given(texts)
def test_hint_followed_with_the_pass_lowered_text_and_hints(text):
    redactor = SHARED
    present = redactor._hints_in(text) if text.isascii() else None
    held = None if present is None else {redactor._hints[i] for i in present}
    for rule in redactor.rules:
        if rule.after_hint is not None and text.isascii():
            assert rule.hint_followed(text, text.lower(), held) == rule.hint_followed(text)
        assert rule.spans_of(text, text.lower(), held) == rule.spans_of(text)
