"""The shape cache tokenizes a long ASCII segment with few digits by trying the number pattern
only just before each digit (dialects._split_sparse) instead of the regex split stepping through
every character, and looks for a NaN/Inf value with str.find (dialects._NAN_VALUE) instead of a
regex scan. These tests hold both to the regexes themselves on every line of the fixtures and on
generated text dense in what number tokens and NaN/Inf values are made of, non-ASCII text too.
"""

from __future__ import annotations

import random
import re

import pytest

from gangscope.parsers import dialects
from fixture_text import fixture_lines


def layout(seg: str) -> bytes:
    return seg.encode("utf-8", "surrogatepass").translate(dialects._DIGITS_TO_ZERO)


def same(seg: str) -> None:
    assert dialects._split_sparse(seg, layout(seg)) == dialects._PLAIN_SPLIT(seg), seg


def test_a_json_log_line_is_split_as_the_regex_splits_it():
    seg = ('{"level": "info", "ts": 1714564800.0322888, "logger": "data.loader", "msg": "batch stats", "rank": 5, '
           '"step": 5, "extra": {"k0": "' + "x" * 300 + '", "k12": "-.5e-3 +7 .25 1,234,567.5 v2.1 3e5 -4."}}')
    parts = dialects._split_sparse(seg, layout(seg))
    assert parts[1::2][:3] == ["1714564800.0322888", "5", "5"]
    assert parts[1::2][3:] == ["-.5e-3", "+7", ".25", "1,234,567.5", "3e5", "-4."]
    same(seg)


def test_every_ascii_fixture_line_splits_alike():
    n = 0
    for line in fixture_lines():
        if line.isascii():
            same(line)
            n += 1
    assert n > 10_000


@pytest.mark.parametrize("seed", range(6))
def test_generated_text_splits_alike(seed):
    rng = random.Random(seed)
    pieces = ["0", "7", "12", "-", "+", ".", ",", "e", "E", "e-", "x", "k", "_", " ", '"', ":", "{", "}", "/",
              "1,234", ",000", "3.", ".5", "nan", "-inf", "xxxxxxxxxxxxxxxx", " " * 9]
    for _ in range(3000):
        seg = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 120)))
        same(seg)


_NAN_SEARCH = re.compile(
    r"(?:[:=',(\[] ?|[A-Za-z_] )[-+]?(?:nan|inf|NAN|INF|NaN|Inf)(?![A-Za-z])(?! [A-Za-z])").search


@pytest.mark.parametrize("seed", range(4))
def test_nan_values_are_found_as_a_regex_search_finds_them(seed):
    rng = random.Random(seed)
    pieces = ["nan", "inf", "NaN", "Inf", "NAN", "INF", "nAn", "iNf", "info", "nana", "a", "_", " ", ":", "=", "'",
              ",", "(", "[", "-", "+", "x", "0.5", "\t", "\u0130", "\u017f", "\u00e9", "\u212a", "step 3"]
    for _ in range(5000):
        seg = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 16)))
        assert dialects._NAN_VALUE(seg) == bool(_NAN_SEARCH(seg)), seg
