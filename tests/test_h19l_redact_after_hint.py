"""secret_assignment answers a text where no secret-name hint is followed by the rest of a name and
a separator with no span, without its search (redact_rules.RedactionRule.hint_followed): the same
spans as the full search, on any text (issue 19: a traceback holding `key-value store by key '0'`
ran the search over its whole text, ~50 us, on every rank's copy)."""

from __future__ import annotations

import dataclasses
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from gangscope.parsers.redact_rules import _HINTS_NAMED, RULES, name_strength

from secrets_corpus import HARMLESS, corpus

RULE = next(rule for rule in RULES if rule.name == "secret_assignment")
FULL = dataclasses.replace(RULE, after_hint=None)  # the rule searched over every text

WORDS = ["api", "key", "KEY", "Key", "token", "Token", "TOKEN", "secret", "Secret", "pass", "Pass", "passwd", "password",
         "pwd", "sig", "signature", "auth", "Auth", "id", "ID", "use", "wandb", "access", "private", "private_key", "hf",
         "x", "sort", "cache", "length", "limit", "name", "path", "error", "Error", "client", "session", "store", "value",
         "credential", "passphrase", "apikey", "secretkey", "accesskey", "authkey", "accountkey", "pad", "eos", "bos",
         "tokens", "keys", "ssh", "aws", "AWS", "GITHUB", "a", "b", "Q"]
NAME = st.lists(st.one_of(st.sampled_from(WORDS), st.sampled_from(["_", "-", ".", "__", "--"]),
                          st.text(alphabet="abcXYZ019_", min_size=1, max_size=4)), min_size=1, max_size=6).map("".join)
SEPARATORS = ["=", " = ", ": ", ":", "=>", '"=', "': ", '": ', "\t=\t", "://", " ", ",", "\n", "(", ")", "'", '"', "[", "]"]
VALUES = ["abcdefghijklmnop1234XYZ", "hunter2", "true", "None", "8080", "$HF_TOKEN", "'s3cr3t-Value_99'",
          '"ghp_0123456789abcdefABCDEF0123456789abcd"', "/etc/secret", "bert-base-uncased", "[REDACTED]", "<TOKEN>", "''",
          "b'AKIAIOSFODNN7EXAMPLE'", "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b", "x" * 40, "é", "ſecret"]
TEXT = st.lists(st.one_of(NAME, st.sampled_from(SEPARATORS), st.sampled_from(VALUES),
                          st.text(alphabet="abkeyKEYsig_-.:= '\"\n\t/é", max_size=8)), max_size=14).map("".join)


def test_every_secret_name_holds_a_hint():
    # the ground of the short cut: _named_value masks after a name of nonzero strength only
    for name in ["api_key", "AWS_SECRET_ACCESS_KEY", "HF_TOKEN", "password", "db_passwd", "pwd", "X-Amz-Signature", "sig",
                 "use_wandb", "private_key_id", "authKey", "--api-key", "passphrase", "credentials", "auth"]:
        assert name_strength(name) and any(h in name.lower() for h in _HINTS_NAMED), name


@settings(max_examples=3000, deadline=None)
@given(NAME)
def test_a_name_without_a_hint_is_never_a_secret_name(name):
    if not any(h in name.lower() for h in _HINTS_NAMED):
        assert name_strength(name) == 0


@settings(max_examples=3000, deadline=None)
@given(TEXT)
def test_the_short_cut_gives_the_spans_of_the_full_search(text):
    assert RULE.spans_of(text) == FULL.spans_of(text)


def test_on_the_secrets_corpus_and_its_look_alikes():
    texts = [text for _name, text, _secret in corpus()] + list(HARMLESS)
    assert len(texts) > 90
    for text in texts:
        assert RULE.spans_of(text) == FULL.spans_of(text), text
    assert sum(bool(FULL.spans_of(text)) for text in texts) > 10  # the rule finds something there


def test_the_traceback_that_named_a_key_store_is_skipped_and_an_assignment_is_not():
    trace = ("Traceback (most recent call last):\n  File \"/workspace/train.py\", line 212, in main\n    loss.backward()\n"
             "torch.distributed.DistBackendError: [17] is setting up NCCL communicator and retrieving ncclUniqueId from [0] "
             "via c10d key-value store by key '0', but store->get('0') got error: Connection reset by peer")
    assert not RULE.hint_followed(trace) and RULE.spans_of(trace) == FULL.spans_of(trace) == []
    leak = trace + "\nenv: WANDB_API_KEY=0123456789abcdef0123456789abcdef01234567"
    assert RULE.hint_followed(leak) and RULE.spans_of(leak) == FULL.spans_of(leak) != []


def test_a_broken_short_cut_is_caught():
    # without ':' as a separator the cut would drop `api_key: value` (the hypothesis test draws such texts)
    broken = dataclasses.replace(RULE, after_hint=re.compile(r"[A-Za-z0-9_.\-]{0,127}[\"']?[ \t]*="))
    text = "config api_key: abcdefghijklmnop1234XYZ"
    assert FULL.spans_of(text) != [] and broken.spans_of(text) == []
