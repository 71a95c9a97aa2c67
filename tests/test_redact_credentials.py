"""Passwords from files, not the process list (issue 20): the OpenSearch password
(`--password-file`, GANGSCOPE_OPENSEARCH_PASSWORD_FILE) and the Kafka SASL password
(`--sasl-password-file`, GANGSCOPE_SASL_PASSWORD_FILE or GANGSCOPE_KAFKA_SASL_PASSWORD_FILE) are
read from the first line of a file, as the dashboard's token is; a password given as a flag
still works but warns; none is ever printed. SASL is checked against the real broker's
SASL/PLAIN listener (tests/test_kafka_sasl.py has its fixture)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from gangscope.pipeline.errors import UsageError
from gangscope.pipeline.run import config, opensearch_cli
from gangscope.pipeline.run.cli import build_parser

BASE = {"GANGSCOPE_KAFKA_BOOTSTRAP": "b:9092", "GANGSCOPE_OPENSEARCH_URL": "http://os:9200"}
PASSWORD = "Fr0m-A-F1le-pw"
CLI = [sys.executable, "-c", "from gangscope.pipeline.run.cli import main; raise SystemExit(main())"]


@pytest.fixture
def password_file(tmp_path):
    path = tmp_path / "password"
    path.write_text(PASSWORD + "\n")
    return str(path)


# ----------------------------------------------------------------------------- consume


@pytest.mark.parametrize("env_name", ["GANGSCOPE_SASL_PASSWORD_FILE", "GANGSCOPE_KAFKA_SASL_PASSWORD_FILE"])
def test_consume_reads_the_sasl_password_from_the_file_the_environment_names(password_file, env_name):
    cfg = config.load({}, None, dict(BASE, **{env_name: password_file}))
    assert cfg.sasl_password == PASSWORD and cfg.origin["sasl_password"] == "env"
    assert cfg.public()["sasl_password"] == "***" and cfg.public()["sasl_password_file"] == password_file


def test_consume_reads_the_opensearch_password_from_a_file_flag_or_a_config_file(password_file, tmp_path):
    assert config.load({"opensearch_password_file": password_file}, None, BASE).opensearch_password == PASSWORD
    toml = tmp_path / "consume.toml"
    toml.write_text(f'opensearch_password_file = "{password_file}"\n')
    assert config.load({}, str(toml), BASE).opensearch_password == PASSWORD


def test_a_password_given_in_an_earlier_layer_than_its_file_wins_and_one_layer_with_both_is_an_error(password_file):
    env = dict(BASE, GANGSCOPE_SASL_PASSWORD_FILE=password_file)
    assert config.load({"sasl_password": "from-flag"}, None, env).sasl_password == "from-flag"
    assert config.load({"sasl_password_file": password_file}, None,
                       dict(BASE, GANGSCOPE_SASL_PASSWORD="from-env")).sasl_password == PASSWORD  # fmt: skip
    with pytest.raises(UsageError, match="sasl_password and sasl_password_file both given"):
        config.load({}, None, dict(env, GANGSCOPE_SASL_PASSWORD="from-env"))


def test_a_missing_or_empty_password_file_is_one_line_without_any_content(tmp_path):
    empty = tmp_path / "empty"
    empty.write_text("\n")
    with pytest.raises(UsageError, match="opensearch_password_file: .*empty"):
        config.load({"opensearch_password_file": str(empty)}, None, BASE)
    with pytest.raises(UsageError, match="sasl_password_file: cannot read .*nope"):
        config.load({"sasl_password_file": str(tmp_path / "nope")}, None, BASE)


def test_a_password_flag_of_consume_is_warned_of_without_printing_it(capsys):
    args = build_parser().parse_args(["consume", "--sasl-password", PASSWORD, "--opensearch-password", PASSWORD,
                                      "--bootstrap", "b:9092", "--opensearch", "http://os:9200"])
    cfg = config.from_args(args)
    assert cfg.sasl_password == PASSWORD
    assert capsys.readouterr().err == ""  # said in the service's JSON log, not before it
    warnings = config.process_list_warnings(cfg)
    assert any("given with --sasl-password, on the command line" in w and "--sasl-password-file PATH" in w
               for w in warnings)
    assert any("given with --opensearch-password, on the command line" in w for w in warnings)
    assert PASSWORD not in " ".join(warnings)


def test_a_password_read_from_its_file_flag_or_given_in_the_environment_is_no_warning(password_file, monkeypatch):
    monkeypatch.setenv("GANGSCOPE_SASL_PASSWORD", "from-env")
    args = build_parser().parse_args(["consume", "--sasl-password-file", password_file, "--bootstrap", "b:9092",
                                      "--opensearch", "http://os:9200"])
    cfg = config.from_args(args)
    assert cfg.sasl_password == PASSWORD and config.process_list_warnings(cfg) == []


def test_a_password_in_the_opensearch_url_of_consumes_command_line_is_warned_of_and_one_from_the_environment_not(
        monkeypatch):
    args = build_parser().parse_args(["consume", "--bootstrap", "b:9092", "--opensearch", f"http://ml:{PASSWORD}@os:9200"])
    warnings = config.process_list_warnings(config.from_args(args))
    assert warnings == ["a password in the URL given with --opensearch, on the command line, shows to every user of "
                        "this machine (the process list); leave it out of the URL and use --opensearch-password-file PATH"]
    monkeypatch.setenv("GANGSCOPE_OPENSEARCH_URL", f"http://ml:{PASSWORD}@os:9200")
    assert config.process_list_warnings(config.from_args(build_parser().parse_args(["consume", "--bootstrap", "b:9092"]))) == []


# ----------------------------------------------------------------------------- replay, indices, dashboard


def _opensearch_args(*flags: str):
    return build_parser().parse_args(["indices", "--opensearch", "http://os:9200", *flags])


def test_password_file_reaches_the_opensearch_client(password_file, monkeypatch):
    monkeypatch.delenv("GANGSCOPE_OPENSEARCH_PASSWORD", raising=False)
    monkeypatch.delenv("GANGSCOPE_OPENSEARCH_PASSWORD_FILE", raising=False)
    assert opensearch_cli.connection(_opensearch_args("--password-file", password_file))["password"] == PASSWORD
    monkeypatch.setenv("GANGSCOPE_OPENSEARCH_PASSWORD_FILE", password_file)
    assert opensearch_cli.connection(_opensearch_args())["password"] == PASSWORD
    monkeypatch.setenv("GANGSCOPE_OPENSEARCH_PASSWORD", "from-env")
    with pytest.raises(UsageError, match="both set"):
        opensearch_cli.connection(_opensearch_args())
    monkeypatch.delenv("GANGSCOPE_OPENSEARCH_PASSWORD_FILE")
    assert opensearch_cli.connection(_opensearch_args())["password"] == "from-env"


def test_the_password_flag_still_works_and_warns_once_without_printing_it(capsys, monkeypatch):
    monkeypatch.delenv("GANGSCOPE_OPENSEARCH_PASSWORD_FILE", raising=False)
    args = _opensearch_args("--password", PASSWORD)
    assert opensearch_cli.connection(args)["password"] == PASSWORD
    assert opensearch_cli.connection(args)["password"] == PASSWORD
    err = capsys.readouterr().err
    assert err.count("given with --password, on the command line") == 1 and "--password-file PATH" in err
    assert PASSWORD not in err


def test_the_warnings_reach_the_terminal_whole_through_the_redacting_stderr(tmp_path):
    """What the command line writes on stderr passes the redactor; a warning that named the flag
    before a word (`--password shows ...`) lost that word to it."""
    cli = [sys.executable, "-c", "from gangscope.pipeline.run.cli import main; raise SystemExit(main())"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("GANGSCOPE_OPENSEARCH")}
    flag = subprocess.run([*cli, "indices", "--opensearch", "http://127.0.0.1:9", "--password", PASSWORD],
                          capture_output=True, text=True, timeout=60, env=env)
    url = subprocess.run([*cli, "indices", "--opensearch", f"http://ml:{PASSWORD}@127.0.0.1:9"],
                         capture_output=True, text=True, timeout=60, env=env)
    assert ("gangscope: warning: a password given with --password, on the command line, shows to every user of this "
            "machine (the process list); use --password-file PATH or GANGSCOPE_OPENSEARCH_PASSWORD\n") in flag.stderr
    assert ("gangscope: warning: a password in the URL given with --opensearch, on the command line, shows to every "
            "user of this machine (the process list); leave it out of the URL and use --password-file PATH\n") in url.stderr
    assert PASSWORD not in flag.stderr + url.stderr + flag.stdout + url.stdout
    env["GANGSCOPE_OPENSEARCH_URL"] = f"http://ml:{PASSWORD}@127.0.0.1:9"
    quiet = subprocess.run([*cli, "indices"], capture_output=True, text=True, timeout=60, env=env)
    assert "warning" not in quiet.stderr and PASSWORD not in quiet.stderr


def test_indices_reads_the_password_file_and_never_prints_it(password_file, opensearch_url):
    """OpenSearch here has no security plugin: it takes any basic credentials, so this shows the
    file is read (a missing one would be exit 2) and that nothing prints its content."""
    done = subprocess.run([*CLI, "indices", "--opensearch", opensearch_url, "--password-file", password_file,
                           "--username", "admin", "--prefix", f"gst-pwfile-{uuid.uuid4().hex[:6]}-", "--print"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert PASSWORD not in done.stdout + done.stderr


# ----------------------------------------------------------------------------- SASL, the real broker


def _sasl_env(**more: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GANGSCOPE_SASL_", "GANGSCOPE_SECURITY_"))}
    return dict(env, PYTHONUNBUFFERED="1", **more)


def _sasl_config(kafka_sasl, **settings):
    bootstrap, user, _ = kafka_sasl
    return config.load({"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "PLAIN", "sasl_username": user,
                        **settings}, None, {**BASE, "GANGSCOPE_KAFKA_BOOTSTRAP": bootstrap})


def test_the_sasl_password_from_a_file_logs_in_to_the_broker_and_a_wrong_one_is_refused(kafka_sasl, tmp_path):
    from gangscope.pipeline.sources import kafka_auth

    right, wrong = tmp_path / "right", tmp_path / "wrong"
    right.write_text(kafka_sasl[2] + "\n")
    wrong.write_text("not-the-password\n")
    kafka_auth.check(_sasl_config(kafka_sasl, sasl_password_file=str(right)), "consume")  # no exception: logged in
    with pytest.raises(kafka_auth.KafkaAuthError, match="SASL authentication failed"):
        kafka_auth.check(_sasl_config(kafka_sasl, sasl_password_file=str(wrong)), "consume")


def test_replay_from_kafka_reads_the_sasl_password_file_the_environment_names(kafka_sasl, kafka_topic, tmp_path):
    bootstrap, user, password = kafka_sasl
    path = tmp_path / "sasl-password"
    path.write_text(password + "\n")
    env = _sasl_env(GANGSCOPE_SECURITY_PROTOCOL="SASL_PLAINTEXT", GANGSCOPE_SASL_MECHANISM="PLAIN",
                    GANGSCOPE_SASL_USERNAME=user, GANGSCOPE_KAFKA_SASL_PASSWORD_FILE=str(path))
    topic = kafka_topic()
    done = subprocess.run([*CLI, "replay", "--from-kafka", topic, "--bootstrap", bootstrap, "--to-offset", "0",
                           "--out", str(tmp_path / "out"), "--no-progress"], env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=120)
    assert done.returncode == 0 and "SASL" not in done.stderr, done.stderr  # logged in, read the (empty) range
    assert password not in done.stdout + done.stderr
    wrong = tmp_path / "wrong"
    wrong.write_text("not-the-password\n")
    done = subprocess.run([*CLI, "replay", "--from-kafka", topic, "--bootstrap", bootstrap, "--out", str(tmp_path / "o2")],
                          env=dict(env, GANGSCOPE_KAFKA_SASL_PASSWORD_FILE=str(wrong)), capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=60)
    assert done.returncode == 2 and "SASL authentication failed" in done.stderr, done.stderr


def test_consume_with_a_sasl_password_file_that_is_wrong_exits_2_naming_the_refusal_not_the_password(
        kafka_sasl, opensearch_url, kafka_topic, tmp_path):
    bootstrap, user, _ = kafka_sasl
    wrong = tmp_path / "wrong"
    wrong.write_text("not-the-password-" + uuid.uuid4().hex[:6] + "\n")
    topic = kafka_topic()
    done = subprocess.run([*CLI, "consume", "--bootstrap", bootstrap, "--opensearch", opensearch_url, "--topic", topic,
                           "--metrics-port", "-1", "--security-protocol", "SASL_PLAINTEXT", "--sasl-mechanism", "PLAIN",
                           "--sasl-username", user, "--sasl-password-file", str(wrong)],
                          env=_sasl_env(), capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "SASL authentication failed for user" in done.stderr
    assert wrong.read_text().strip() not in done.stderr


# ----------------------------------------------------------------------------- URLs


def test_a_url_whose_password_holds_a_slash_is_one_line_that_quotes_none_of_it(tmp_path):
    """Not percent-encoded, `/` ends the authority and the password's first part reads as a port:
    urllib's message (`Port could not be cast to integer value as 'Url-Pa55'`) showed it, in a
    traceback."""
    url = "http://admin:Url-Pa55/w0rd@x@127.0.0.1:9"
    done = subprocess.run([*CLI, "replay", "fixtures/runs/rank_raises", "--opensearch", url, "--out", str(tmp_path / "o")],
                          capture_output=True, text=True, timeout=60, cwd=Path(__file__).resolve().parent.parent)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "--opensearch: not a valid URL" in done.stderr and "%2F" in done.stderr
    assert "Pa55" not in done.stderr and "Traceback" not in done.stderr
    with pytest.raises(UsageError, match="consume: opensearch: not a valid URL") as caught:
        config.load({}, None, dict(BASE, GANGSCOPE_OPENSEARCH_URL=url))
    assert "Pa55" not in str(caught.value)
