"""secret_assignment, secret_flag and k8s_env_value answer a text where none of their hints is followed
by what a match of theirs that masks holds after it (the rest of a secret name and a separator, of a
long option's name and a blank, `value` and a colon) with no span, without their search
(redact_rules.RedactionRule.hint_followed): the same spans as the full search, on any text (issue 19:
a traceback holding `key-value store by key '0'` ran the three searches over its whole text, ~40 us,
on every rank's copy)."""

from __future__ import annotations

import dataclasses
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from gangscope.parsers.redact_rules import _HINTS_NAMED, RULES, name_strength

from secrets_corpus import HARMLESS, corpus

RULE = next(rule for rule in RULES if rule.name == "secret_assignment")
FULL = dataclasses.replace(RULE, after_hint=None)  # the rule searched over every text
CUT = [rule for rule in RULES if rule.after_hint is not None]

WORDS = ["api", "key", "KEY", "Key", "token", "Token", "TOKEN", "secret", "Secret", "pass", "Pass", "passwd", "password",
         "pwd", "sig", "signature", "auth", "Auth", "id", "ID", "use", "wandb", "access", "private", "private_key", "hf",
         "x", "sort", "cache", "length", "limit", "name", "path", "error", "Error", "client", "session", "store", "value",
         "credential", "passphrase", "apikey", "secretkey", "accesskey", "authkey", "accountkey", "pad", "eos", "bos",
         "tokens", "keys", "ssh", "aws", "AWS", "GITHUB", "a", "b", "Q"]
NAME = st.lists(st.one_of(st.sampled_from(WORDS), st.sampled_from(["_", "-", ".", "__", "--"]),
                          st.text(alphabet="abcXYZ019_", min_size=1, max_size=4)), min_size=1, max_size=6).map("".join)
SEPARATORS = ["=", " = ", ": ", ":", "=>", '"=', "': ", '": ', "\t=\t", "://", " ", ",", "\n", "(", ")", "'", '"', "[", "]",
              "--", "-", " --", "\t", "name: ", '"name": "', "value: ", '"value": ', "value", "- name: ", "\n  value: ", "é"]
VALUES = ["abcdefghijklmnop1234XYZ", "hunter2", "true", "None", "8080", "$HF_TOKEN", "'s3cr3t-Value_99'",
          '"ghp_0123456789abcdefABCDEF0123456789abcd"', "/etc/secret", "bert-base-uncased", "[REDACTED]", "<TOKEN>", "''",
          "b'AKIAIOSFODNN7EXAMPLE'", "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b", "x" * 40, "é", "ſecret"]
# a long option and its value (secret_flag), a pod spec's env entry (k8s_env_value)
FLAG = st.tuples(st.sampled_from(["--", " --", "x--", "-", "---"]), NAME, st.sampled_from([" ", "\t", "  ", "=", ""]),
                 st.sampled_from(VALUES)).map("".join)
ENV = st.tuples(st.sampled_from(['"name": "', "name: ", "- name: ", "'name':'", "name:"]), NAME,
                st.sampled_from(['", ', "\n  ", ",", "\n- ", "'\n"]),
                st.sampled_from(['"value": ', "value: ", "'value':", "value :", '"value" :', "Value: ", "value"]),
                st.sampled_from(VALUES)).map("".join)
TEXT = st.lists(st.one_of(NAME, FLAG, ENV, st.sampled_from(SEPARATORS), st.sampled_from(VALUES),
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


def test_the_rules_with_the_cut():
    assert sorted(rule.name for rule in CUT) == ["k8s_env_value", "secret_assignment", "secret_flag"]


@settings(max_examples=4000, deadline=None)
@given(TEXT)
def test_the_short_cut_gives_the_spans_of_the_full_search(text):
    for rule in CUT:
        assert rule.spans_of(text) == dataclasses.replace(rule, after_hint=None).spans_of(text), rule.name


def test_on_the_secrets_corpus_and_its_look_alikes():
    texts = [text for _name, text, _secret in corpus()] + list(HARMLESS)
    assert len(texts) > 90
    for rule in CUT:
        full = dataclasses.replace(rule, after_hint=None)
        for text in texts:
            assert rule.spans_of(text) == full.spans_of(text), (rule.name, text)
        assert any(full.spans_of(text) for text in texts), rule.name  # the rule finds something there


def test_the_traceback_that_named_a_key_store_is_skipped_and_an_assignment_is_not():
    trace = ("Traceback (most recent call last):\n  File \"/workspace/train.py\", line 212, in main\n    loss.backward()\n"
             "torch.distributed.DistBackendError: [17] is setting up NCCL communicator and retrieving ncclUniqueId from [0] "
             "via c10d key-value store by key '0', but store->get('0') got error: Connection reset by peer")
    for rule in CUT:
        assert not rule.hint_followed(trace) and rule.spans_of(trace) == []
    leak = trace + "\nenv: WANDB_API_KEY=0123456789abcdef0123456789abcdef01234567"
    assert RULE.hint_followed(leak) and RULE.spans_of(leak) == FULL.spans_of(leak) != []
    flag = next(rule for rule in CUT if rule.name == "secret_flag")
    leak = trace + "\nlaunch: train.py --my-team-service-api-token 0123456789abcdefXYZ0123456789"
    assert flag.hint_followed(leak) and flag.spans_of(leak) != []


def test_broken_short_cuts_are_caught():
    flag = next(rule for rule in CUT if rule.name == "secret_flag")
    text = "run --my-very-long-team-service-api-token abcdefghijklmnop1234XYZ"
    assert flag.spans_of(text) != [] and dataclasses.replace(flag, after_hint=re.compile(r"[A-Za-z0-9_\-]{0,63}\t")).spans_of(text) == []
    env = next(rule for rule in CUT if rule.name == "k8s_env_value")
    text = '{"name": "HF_TOKEN", "value": "hf_abcdefghijklmnopqrstuvwxyz0123456789"}'
    assert env.spans_of(text) != [] and dataclasses.replace(env, after_hint=re.compile(r"[ \t]*:")).spans_of(text) == []
    # without ':' as a separator the cut would drop `api_key: value` (the hypothesis test draws such texts)
    broken = dataclasses.replace(RULE, after_hint=re.compile(r"[A-Za-z0-9_.\-]{0,127}[\"']?[ \t]*="))
    text = "config api_key: abcdefghijklmnop1234XYZ"
    assert FULL.spans_of(text) != [] and broken.spans_of(text) == []
