"""errors.first_trace_rule (TraceRuleIndex: remembered type and frame results, a literal pre-test of the message
patterns) gives what the table gives rule after rule (`_rule_matches` in table order, the first match winning), on
every exception of every trace the fixtures' logs hold, and on mutations of them built from the rules' own literals;
classify_trace, exception_category and failure_category answer the same with either."""

from __future__ import annotations

import random
import re
from functools import lru_cache
from pathlib import Path

import pytest

from gangscope.parsers import errors, rule_literals
from gangscope.parsers.records import TraceRecord

from trace_feed import feed_traces

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def reference_first(exc_type, message, frames=(), frameless=False):
    """The first rule as classify_trace found it before the index: every rule, in table order."""
    for rule in errors.TRACE_RULES:
        if frameless and rule.frame is not None:
            continue
        if errors._rule_matches(rule, exc_type, message, list(frames)):
            return rule
    return None


def _logs() -> list[Path]:
    """The fixtures' logs and texts, never the held-out set's."""
    return sorted(p for p in FIXTURES.rglob("*") if p.is_file() and p.suffix in (".log", ".txt")
                  and "heldout" not in p.relative_to(FIXTURES).parts)


@lru_cache(maxsize=1)
def fixture_traces() -> tuple[TraceRecord, ...]:
    out: list[TraceRecord] = []
    for path in _logs():
        lines = path.read_text(encoding="utf-8", errors="surrogateescape").splitlines()
        out.extend(feed_traces(lines))
    return tuple(out)


def _exceptions(trace: TraceRecord) -> list[tuple[str, str, list[str]]]:
    links = errors._links(trace)
    details = trace.details
    if isinstance(details, dict) and details.get("exceptions"):
        links = links + [link for sub, _ in errors._sub_exceptions(trace) for link in sub]
    return links


@lru_cache(maxsize=1)
def fixture_exceptions() -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    seen = dict.fromkeys((t, m, tuple(f)) for trace in fixture_traces() for t, m, f in _exceptions(trace))
    return tuple(seen)


def _literals() -> list[str]:
    """Every literal the message patterns require, and texts that match a rule's type or frame by construction."""
    out: set[str] = set()
    for rule in errors.TRACE_RULES:
        for pattern in (rule.message, rule.type, rule.frame):
            if pattern is not None and (need := rule_literals.required_literals(pattern)):
                out |= need
    return sorted(out)


def _mutations(message: str, literals: list[str], rng: random.Random) -> list[str]:
    picks = rng.sample(literals, 3)
    return [
        message + " " + picks[0],  # a rule's literal where no pattern would look for it
        picks[1] + message,
        picks[0].upper() + " " + picks[1].lower(),  # case the literal test must not trust
        message.replace(" ", "\n", 1),  # a newline: ^ and $ of the patterns
        "\u00e9" + message + "\u017f",  # non-ASCII (UTF-8 bytes of the literal test)
        message + "\x1c" + picks[2],  # a separator only Python's \s matches
        message[: len(message) // 2],  # cut: a literal broken in two
        "",
    ]


def _type_mutations(exc_type: str) -> list[str]:
    return [exc_type, "pkg." + exc_type, exc_type + "X", exc_type.rsplit(".", 1)[-1], exc_type.lower()]


def test_fixtures_hold_many_traces():
    assert len(fixture_traces()) > 300
    assert len(fixture_exceptions()) > 200


def test_every_fixture_exception_finds_the_reference_rule():
    for exc_type, message, frames in fixture_exceptions():
        for frameless in (False, True):
            assert errors.first_trace_rule(exc_type, message, frames, frameless) is reference_first(
                exc_type, message, frames, frameless), (exc_type, message[:200], frameless)


def test_mutated_exceptions_find_the_reference_rule():
    rng = random.Random(19)
    literals = _literals()
    types = sorted({t for t, _, _ in fixture_exceptions()} | {"MemoryError", "KeyboardInterrupt", "FloatingPointError"})
    frame_pool = sorted({f for _, _, frames in fixture_exceptions() for f in frames})
    frame_pool += ["/x/torch/distributed/rendezvous.py:_create_c10d_store", "/x/torch/utils/data/dataloader.py:_process_data",
                   "/x/site-packages/urllib3/connection.py:connect", "/x/torch/serialization.py:load", "a:save_checkpoint"]
    checked = 0
    for exc_type, message, frames in fixture_exceptions():
        for text in [message, *_mutations(message, literals, rng)]:
            for kind in rng.sample(_type_mutations(exc_type), 2) + [rng.choice(types)]:
                chosen = list(frames) + rng.sample(frame_pool, 2)
                for frameless in (False, True):
                    got = errors.first_trace_rule(kind, text, chosen, frameless)
                    assert got is reference_first(kind, text, chosen, frameless), (kind, text[:200], frameless)
                    checked += 1
    # the literals alone and in pairs, every type: each rule's own words reach it
    for literal in literals:
        for text in (literal, f"x {literal} y", literal + "\n" + rng.choice(literals), literal.lower()):
            kind = rng.choice(types)
            assert errors.first_trace_rule(kind, text, ()) is reference_first(kind, text), (kind, text)
            checked += 1
    assert checked > 10_000


def test_classify_trace_answers_as_with_the_reference(monkeypatch):
    traces = fixture_traces()
    new = [(errors.classify_trace(t), [errors.exception_category(e[0], e[1]) for e in _exceptions(t)]) for t in traces]
    boxes = [errors.failure_category(f) for t in traces if t.form == "child_failed" for f in errors.child_failures(t)]
    monkeypatch.setattr(errors, "first_trace_rule", reference_first)
    old = [(errors.classify_trace(t), [errors.exception_category(e[0], e[1]) for e in _exceptions(t)]) for t in traces]
    old_boxes = [errors.failure_category(f) for t in traces if t.form == "child_failed" for f in errors.child_failures(t)]
    assert new == old
    assert boxes == old_boxes
    assert sum(1 for verdict, _ in new if verdict and verdict[0] != "python_exception") > 100


def test_an_entry_added_to_the_table_is_read_without_other_edits(monkeypatch):
    """The index is the table's: a rule put before the others (its type, message or frame) wins where it matches."""
    extra = (
        errors.TraceRule("h19c_type", "storage_io", "test", type=re.compile(r"^KeyError$")),
        errors.TraceRule("h19c_message", "hang", "test", message=re.compile(r"\bwidget \d+ jammed")),
        errors.TraceRule("h19c_frame", "checkpoint_error", "test", frame=re.compile(r"/h19c/\w+\.py:")),
    )
    monkeypatch.setattr(errors, "TRACE_RULES", extra + errors.TRACE_RULES)
    assert errors.first_trace_rule("KeyError", "'x'", ()).name == "h19c_type"
    assert errors.first_trace_rule("RuntimeError", "widget 7 jammed: NCCL error", ()).name == "h19c_message"
    assert errors.first_trace_rule("RuntimeError", "NCCL error", ["/h19c/a.py:f"]).name == "h19c_frame"
    assert errors.first_trace_rule("RuntimeError", "NCCL error", ["/h19c/a.py:f"], frameless=True).name == "nccl_error"
    for exc_type, message, frames in fixture_exceptions()[:200]:
        assert errors.first_trace_rule(exc_type, message, frames) is reference_first(exc_type, message, frames)


def test_without_hyperscan_the_literals_are_tested_with_in(monkeypatch):
    monkeypatch.setattr(rule_literals, "hyperscan", None)
    index = errors.TraceRuleIndex(errors.TRACE_RULES)
    assert index.database is None
    for exc_type, message, frames in fixture_exceptions():
        assert index.first(exc_type, message, frames, False) is reference_first(exc_type, message, frames)


def test_the_message_pre_test_never_drops_a_rule_that_matches_nor_takes_one_that_does_not():
    index = errors.TraceRuleIndex(errors.TRACE_RULES)
    rng = random.Random(7)
    literals = _literals()
    for _, message, _ in fixture_exceptions():
        for text in [message, *_mutations(message, literals, rng)]:
            may, sure = index._message(text)
            for i, rule in enumerate(errors.TRACE_RULES):
                if rule.frame is None and rule.message is not None and rule.message.search(text):
                    assert may >> i & 1, (rule.name, text[:200])
                elif sure >> i & 1:
                    raise AssertionError(f"{rule.name} taken without a match: {text[:200]!r}")


@pytest.mark.parametrize("bad", [None, 7])
def test_a_value_that_is_no_text_fails_as_the_table_did(bad):
    """Not a str: the first search raises TypeError, as the rules tried one by one did."""
    with pytest.raises(TypeError):
        reference_first(bad, "x", ())
    with pytest.raises(TypeError):
        errors.first_trace_rule(bad, "x", ())


def test_pattern_literals_are_the_required_ones_and_sure_ones_match():
    """One parse gives rule_literals.required_literals' answer, and texts each of which the pattern finds (alone, and
    inside any text: a sure literal is taken without a search)."""
    sure_seen = 0
    for rule in errors.TRACE_RULES:
        for pattern in (rule.message, rule.type, rule.frame):
            if pattern is None:
                continue
            need, sure = errors._pattern_literals(pattern)
            assert need == rule_literals.required_literals(pattern), rule.name
            for text in sure:
                sure_seen += 1
                for context in (text, f"x\n{text}\u00e9", f"{text}{text}"):
                    assert pattern.search(context) is not None, (rule.name, text)
    assert sure_seen > 40
    assert errors._plain_texts(list(re._parser.parse(r"ab(?:cx|dy)(?:ez|\d)"))) == ["abcxez", "abdyez"]
    assert errors._pattern_literals(re.compile(r"(?i:Loss) is nan|\bx")) == (frozenset({" is nan", "x"}), frozenset({"Loss is nan"}))


def test_spawned_process_answers_as_its_search():
    """spawned_process skips the search where the text lacks the literal its pattern requires."""
    assert rule_literals.required_literals(errors.SPAWNED_PROCESS) == frozenset({" terminated with "})
    rng = random.Random(3)
    texts = [m for _, m, _ in fixture_exceptions()] + [t.message or "" for t in fixture_traces()]
    texts += ["process 3 terminated with exit code 1", "-- Process 1 terminated with the following error:",
              "xprocess 2 terminated with signal SIGKILL", "Process 12 terminated with", "", "terminated with signal"]
    for text in texts + [rng.choice(texts) + "\nprocess 4 terminated with signal 9" for _ in range(50)]:
        m = errors.SPAWNED_PROCESS.search(text)
        assert errors.spawned_process(text) == (int(m["index"]) if m else None), text[:200]
    with pytest.raises(TypeError):
        errors.spawned_process(5)
