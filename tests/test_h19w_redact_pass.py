"""Redactor.text and .record after h19w's changes (one hint scan serving the prefilter and the first
pass, the rules a pass runs chosen from the hints found, known-clean structs not walked) against the
table run rule by rule as it was: the same masks, the same objects where nothing is masked, the same counts."""

from __future__ import annotations

import copy

from hypothesis import given, settings, strategies as st

from gangscope.parsers.records import ChainLink, ErrorRecord, Frame, TraceRecord
from gangscope.parsers.redact import MASK, MAX_PASSES, Redactor

FRAGMENTS = [
    "password=hunter2hunter2", "api_key: sk-abcdefghijklmnopqrstuvwxyz123456", "token=ghp_" + "a" * 36,
    "--password 'p4ss w0rd'", "KeyError: 'value'", "passed the value of key", "name: DB_PASS\n  value: s3cr3tv4lue",
    "https://user:pa55word@example.com/x", "SG." + "a" * 22 + "." + "b" * 43, "loss=0.5", "step 10",
    " ", "\n", "Traceback (most recent call last):", "AKIAIOSFODNN7EXAMPLE", "wandb: Run data is saved",
    "Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123", "x", "=", ":", "\"", "é",
]
REDACTORS = (Redactor(), Redactor())  # made once: a Redactor compiles its Hyperscan databases
texts = st.lists(st.sampled_from(FRAGMENTS), max_size=8).map("".join)


def reference_text(redactor: Redactor, text: str, counts: dict) -> str:
    """The table run rule by rule on the lowered text, passes until nothing changes."""
    if not text:
        return text
    for _ in range(MAX_PASSES):
        lower = text.lower()
        spans = []
        for rule in redactor.rules:
            if rule.hints and not any(h in lower for h in rule.hints):
                continue
            found = rule.spans_of(text)
            if found:
                counts[rule.name] = counts.get(rule.name, 0) + 1
                spans.extend(found)
        if not spans:
            break
        spans.sort()
        out, at = [], 0
        start, end = spans[0]
        for s, e in spans[1:]:
            if s <= end:
                end = max(end, e)
                continue
            out += [text[at:start], MASK]
            at, (start, end) = end, (s, e)
        out += [text[at:start], MASK, text[end:]]
        masked = "".join(out)
        if masked == text:
            break
        text = masked
    return text


@settings(max_examples=300, deadline=None)
@given(st.lists(texts, min_size=1, max_size=6))
def test_text_as_rule_by_rule(items):
    redactor, ref_counts = REDACTORS[0], {}
    redactor._clean.clear()
    redactor.counts.clear()
    for text in items + items:  # twice: the clean cache's answers too
        got = redactor.text(text)
        assert got == reference_text(redactor, text, ref_counts)
        if got == text:
            assert got is text
    # counts of texts looked at once each (the clean cache skips repeats of unmasked texts only)
    assert set(redactor.counts) == set(ref_counts)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(texts, texts, texts), min_size=1, max_size=4))
def test_records_with_known_clean_frames(items):
    """Traces whose frames recur (known clean after the first) mask as a fresh redactor per record does."""
    shared, fresh = REDACTORS
    shared._clean.clear()
    shared._plain_names.clear()
    for message, text, code in items:
        frames = [Frame(file="/workspace/train.py", line=3, function="main", code=code),
                  Frame(file="/opt/x.py", line=9, function="f", code="loss.backward()")]
        trace = TraceRecord(exception_type="RuntimeError", message=message, text=text, frames=frames,
                            chain=[ChainLink(exception_type="RuntimeError", message=message, frames=copy.deepcopy(frames))],
                            details={"remote": [{"process": 1, "note": code}]})
        error = ErrorRecord(message=message, line=text)
        for record in (trace, error):
            fresh._clean.clear()  # as new: nothing known clean
            fresh._plain_names.clear()
            expected = fresh.record(copy.deepcopy(record))  # before shared masks `record` in place
            assert shared.record(record) == expected


def test_hint_scan_reads_a_dot_as_a_dot():
    """The Hyperscan hint scan finds a hint where `hint in lower` does, and only there: 'sg.' in
    'SG.x', not in 'ProcessGroup' (a regex '.' read any character)."""
    redactor = REDACTORS[0]
    for hint in redactor._hints:
        found = redactor._hints_in("xx " + hint.upper() + " yy")
        assert found and hint in {redactor._hints[i] for i in found}
    assert redactor._hints_in("[E ProcessGroupNCCL.cpp:1316] Watchdog caught collective operation timeout") == set()
    assert redactor._hint_scan("ProcessGroupNCCL hooksXslackYcom") is False
    assert {redactor._hints[i] for i in redactor._hints_in("key SG.abc hooks.slack.com")} >= {"sg.", "hooks.slack.com"}
