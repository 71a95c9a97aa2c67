"""The generic dialect tries a key/value list only where one can reach the end of the segment.

`_generic_values` skips every start before the last character that no key, number, unit or
separator is made of (a key/value list must run to the end of the segment). These tests hold it
to the plain search over every start on every line of the fixtures, the dialect corpus (both
halves) and generated lines, and check that a long JSON log line ending in "}" costs no parse.
"""

from __future__ import annotations

import itertools
import json
import random

import pyparsing as pp
import pytest

from bench.score_dialects import corpus
from gangscope.parsers import dialects
from gangscope.parsers.lines import strip_rank_prefixes
from fixture_text import fixture_lines as every_fixture_line


def every_start(seg: str):
    """The search before the tail rule: a parse at every place a key may begin."""
    for m in dialects._G_STARTS.finditer(seg):
        pos = m.start()
        try:
            toks = dialects._G_LIST.parse_string(seg[pos:])
        except pp.ParseBaseException:
            continue
        return [dialects.Value(v.key, v.start + pos, v.end + pos, v.unit) for v in toks if isinstance(v, dialects.Value)]
    return None


def segments(raw: str):
    """The line as read and the texts the step parser would see of it (CRI message, rank prefix off)."""
    yield raw
    parts = raw.split(" ", 3)
    if len(parts) == 4 and parts[2] in ("F", "P"):
        yield parts[3]
        yield strip_rank_prefixes(parts[3])[0]
    for piece in raw.split("\r"):
        yield piece


def fixture_lines():
    for raw in every_fixture_line(max_file_bytes=20_000_000):
        if len(raw) <= 20_000 and dialects._G_GUARD(raw) is not None:
            yield from segments(raw)


def corpus_lines():
    mod = corpus()
    for variant in mod.VARIANTS:
        for seed in range(3):
            for raw in mod.streams(variant, seed).lines:
                yield from segments(raw)


def generated_lines(n: int = 3000, seed: int = 11):
    """Key/value lines with every separator, unit and tail the grammar knows, and what breaks them."""
    r = random.Random(seed)
    keys = ["step", "iter", "loss", "lr", "train loss", "grad_norm", "tokens/s", "mfu", "epoch", "batch", "val loss", "time"]
    seps = [" ", "=", ": ", ":", " = "]
    joins = [", ", " | ", " ", "; ", " - ", "\t", ",", "|"]
    nums = ["1", "12", "0.5", "-3.2e-05", "1e4", "nan", "inf", "7,512", "3.", ".5", "+2", "100/200", "[3/10]"]
    units = ["", "", "ms", "%", "it/s", "GiB", "s", "tok/s", "K"]
    tails = ["", ".", ",", " |", ";", " ", "}", ")", '"', "'", " done", "!", " (best)", "]", "\u00b5s", " \u2588"]
    heads = ["", "INFO ", "[rank0]: ", "{", "2024-05-01 12:00:00 | ", '{"msg": "', "(", "Epoch 1: ", "* "]
    for _ in range(n):
        pairs = [
            r.choice(keys) + r.choice(seps) + r.choice(nums) + r.choice(units)
            for _ in range(r.randint(1, 6))
        ]
        if r.random() < 0.5:
            pairs.insert(0, "step" + r.choice(seps) + str(r.randint(0, 10**6)))
        yield r.choice(heads) + r.choice(joins).join(pairs) + r.choice(tails)
        d = {"level": "info", "step": r.randint(0, 999), "loss": round(r.random(), 4), "msg": "x" * r.randint(0, 80)}
        yield json.dumps(d)
        yield str(d)


@pytest.mark.parametrize("source", [fixture_lines, corpus_lines, generated_lines])
def test_the_tail_rule_finds_what_every_start_finds(source):
    n = 0
    for seg in source():
        assert dialects._generic_values(seg) == every_start(seg), seg
        n += 1
    assert n > 100


def test_a_json_log_line_with_a_step_key_costs_no_parse(monkeypatch):
    calls = []
    parse = dialects._G_LIST.parse_string
    monkeypatch.setattr(dialects._G_LIST, "parse_string", lambda *a, **k: calls.append(1) or parse(*a, **k))
    extra = {f"k{i}": "x" * (10 + 7 * i) for i in range(30)}
    line = json.dumps({"level": "info", "ts": 1714564800.25, "logger": "data.loader", "msg": "batch stats", "rank": 5, "step": 12, "extra": extra})
    assert dialects._generic_values(line) is None
    assert calls == []
    # a key/value tail after the JSON is still tried, and read
    assert [v.key for v in dialects._generic_values(line + " step 3 loss 0.25")] == ["step", "loss"]
    assert calls


_NAN_SEARCH = __import__("re").compile(r"(?:[:=',(\[] ?|[A-Za-z_] )[-+]?(?:nan|inf|NAN|INF|NaN|Inf)(?![A-Za-z])(?! [A-Za-z])").search


def nan_lines(n: int = 20000, seed: int = 5):
    r = random.Random(seed)
    alphabet = ["nan", "inf", "NaN", "Inf", "NAN", "INF", "info", "nana", "a", "_", " ", ":", "=", "'", ",", "(", "[", "-", "+", "x", "0.5", "o", "\t"]
    for _ in range(n):
        yield "".join(r.choice(alphabet) for _ in range(r.randint(1, 12)))


@pytest.mark.parametrize("source", [fixture_lines, corpus_lines, generated_lines, nan_lines])
def test_nan_value_finds_what_a_search_at_every_position_finds(source):
    for seg in source():
        assert bool(dialects._NAN_VALUE(seg)) == bool(_NAN_SEARCH(seg)), seg


def test_the_guard_turns_away_only_segments_the_generic_dialect_reads_nothing_of():
    """The guard's tail test (the last character must be one a key/value list is made of) spares the
    step-word search where _generic_values gives None anyway: the same readings with or without it."""
    checked = turned_away = 0
    for seg in itertools.chain(fixture_lines(), corpus_lines(), generated_lines()):
        with_word = dialects._G_GUARD(seg) is not None
        assert dialects._generic_guard(seg) == (with_word and bool(seg) and dialects._G_TAIL_LAST(seg[-1]) is not None)
        if with_word and not dialects._generic_guard(seg):
            turned_away += 1
            assert dialects._generic_values(seg) is None, seg[:200]
            assert every_start(seg) is None, seg[:200]
        checked += 1
    assert checked > 10_000 and turned_away > 500, (checked, turned_away)
