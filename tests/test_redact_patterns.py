"""A site's own secret patterns (issue 20): a file of `name: regex` lines, given with
`--redaction-patterns FILE` (replay, diagnose), the `redaction_patterns` setting of consume, or
GANGSCOPE_REDACTION_PATTERNS; masked next to the built-in rules, in records and log lines alike.
A line that is not a valid rule is one line naming the file and the line, exit 2."""

from __future__ import annotations

import json

import pytest

from gangscope.parsers import redact
from gangscope.parsers.redact import MASK, Redactor, parse_patterns
from gangscope.pipeline.errors import UsageError
from gangscope.pipeline.run import config
from gangscope.pipeline.run.cli import build_parser, main

SITE_TOKEN = "ACME-7F3A9C01D2E4B658"  # no built-in rule knows it: ACME- and 16 hex digits
DB_PW = "tr41ner-internal"
PATTERNS = """\
# our own tokens
acme_token: ACME-[0-9A-F]{16}
# only the value after the name
acme_db: (?i)acme_db_pw\\s*=\\s*(?P<secret>\\S+)
"""
UID = "0c6d1111-2222-3333-4444-555566669999"


@pytest.fixture(autouse=True)
def default_redactor():
    yield
    redact.configure()  # the commands put the patterns in use for the process: back to the built-in table


@pytest.fixture
def patterns(tmp_path):
    path = tmp_path / "patterns.txt"
    path.write_text(PATTERNS)
    return str(path)


def test_a_patterns_file_masks_the_whole_match_or_the_group_named_secret():
    r = Redactor(extra=parse_patterns(PATTERNS))
    out = r.text(f"calling with {SITE_TOKEN}, ACME_DB_PW = {DB_PW} TOKEN_LIMIT=4096")
    assert out == f"calling with {MASK}, ACME_DB_PW = {MASK} TOKEN_LIMIT=4096"
    assert [rule.name for rule in r.rules[-2:]] == ["acme_token", "acme_db"]


def test_rules_whose_group_names_clash_still_each_find_theirs():
    r = Redactor(extra=parse_patterns("a: a=(?P<secret>\\w+)\nb: b=(?P<secret>\\w+)\n"))
    assert r.text("a=one b=two c=three") == f"a={MASK} b={MASK} c=three"


@pytest.mark.parametrize("text, says", [
    ("acme: ACME-[0-9A-F{16}", "line 1: acme: not a valid regex (unterminated character set"),
    ("# fine\n\njust a regex without a name", "line 3: want `name: regex`"),
    ("x: a\nx: b", "line 2: x is named twice"),
    ("empty:   ", "line 1: want `name: regex`"),
])
def test_a_bad_line_is_named_with_its_number(text, says):
    with pytest.raises(ValueError, match="patterns.txt " + says.replace("(", r"\(").replace("[", r"\[")):
        parse_patterns(text, "patterns.txt")


def _pod(tmp_path, lines: list[str]) -> str:
    logs = tmp_path / "logs" / f"team-a_llama-train-worker-0_{UID}" / "pytorch"
    logs.mkdir(parents=True)
    stamped = [f"2024-05-01T12:00:{i:02d}.000000000Z stderr F {line}" for i, line in enumerate(lines)]
    (logs / "0.log").write_text("\n".join(stamped) + "\n")
    return str(tmp_path / "logs")


def _planted(tmp_path) -> str:
    return _pod(tmp_path, ["Traceback (most recent call last):", '  File "train.py", line 3, in <module>',
                           "    connect(token)", f"RuntimeError: login refused for {SITE_TOKEN} (acme_db_pw={DB_PW})"])


def test_replay_with_redaction_patterns_writes_no_site_secret(tmp_path, patterns):
    logs, out = _planted(tmp_path), tmp_path / "out"
    assert main(["replay", logs, "--out", str(out), "--redaction-patterns", patterns, "--no-progress"]) in (0, 1)
    written = "".join(p.read_text() for p in out.rglob("*") if p.is_file())
    assert "login refused for" in written
    assert SITE_TOKEN not in written and DB_PW not in written


def test_diagnose_reads_the_patterns_file_from_the_environment(tmp_path, patterns, monkeypatch, capsys):
    monkeypatch.setenv("GANGSCOPE_REDACTION_PATTERNS", patterns)
    assert main(["diagnose", _planted(tmp_path), "-o", "json", "--no-progress"]) in (0, 1)
    printed = capsys.readouterr()
    assert SITE_TOKEN not in printed.out + printed.err and "login refused for" in json.dumps(json.loads(printed.out))


def test_without_the_patterns_the_site_token_is_no_secret_to_gangscope(tmp_path, monkeypatch, capsys):
    """What the file adds: the built-in table does not know these shapes."""
    monkeypatch.delenv("GANGSCOPE_REDACTION_PATTERNS", raising=False)
    assert main(["diagnose", _planted(tmp_path), "-o", "json", "--no-progress"]) in (0, 1)
    assert SITE_TOKEN in capsys.readouterr().out


def test_a_bad_patterns_file_is_a_usage_error_naming_the_line(tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_text("good: x+\nbroken: (x\n")
    assert main(["replay", _planted(tmp_path), "--out", str(tmp_path / "out"), "--redaction-patterns", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{bad} line 2: broken: not a valid regex" in err
    assert not (tmp_path / "out").exists()
    assert main(["diagnose", _planted(tmp_path / "x"), "--redaction-patterns", str(tmp_path / "nope")]) == 2
    assert "--redaction-patterns: cannot read" in capsys.readouterr().err


def test_consume_puts_the_patterns_of_its_settings_in_use_for_records_and_its_log(patterns):
    args = build_parser().parse_args(["consume", "--bootstrap", "b:9092", "--opensearch", "http://os:9200",
                                      "--redaction-patterns", patterns])
    cfg = config.from_args(args)
    assert cfg.redaction_patterns == patterns
    assert redact.redact_text(f"token {SITE_TOKEN}") == f"token {MASK}"
    from gangscope.pipeline.run.log_redaction import redact_event_dict

    assert redact_event_dict(None, "info", {"event": "x", "error": SITE_TOKEN})["error"] == MASK


def test_consume_with_a_bad_patterns_file_stops_before_starting(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("x: [\n")
    args = build_parser().parse_args(["consume", "--bootstrap", "b:9092", "--opensearch", "http://os:9200",
                                      "--redaction-patterns", str(bad)])
    with pytest.raises(UsageError, match="consume: redaction_patterns .*line 1: x: not a valid regex"):
        config.from_args(args)
