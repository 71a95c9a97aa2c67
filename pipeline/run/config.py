"""Configuration of `gangscope consume`: one table of settings, four layers.

A setting's value comes from, first to last: a command-line flag, the config file
(`--config`, TOML; YAML when PyYAML is installed), a `GANGSCOPE_<NAME>` environment
variable, the default. Two settings also read the names fixed by SPEC.md:
`bootstrap` <- GANGSCOPE_KAFKA_BOOTSTRAP, `opensearch` <- GANGSCOPE_OPENSEARCH_URL.

Passwords also come from files (`sasl_password_file`, `opensearch_password_file`; their
first line), as the dashboard's token does: a password given as a flag is read by every user
of the machine in the process list, so it is taken with a warning.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from gangscope.pipeline.errors import UsageError


@dataclass(frozen=True)
class Setting:
    """One knob: its name (also the config-file key), type, default and help."""

    name: str
    type: type
    default: Any
    help: str
    env: str | None = None  # besides GANGSCOPE_<NAME>
    secret: bool = False

    @property
    def env_names(self) -> tuple[str, ...]:
        own = "GANGSCOPE_" + self.name.upper()
        return (own, self.env) if self.env else (own,)


SETTINGS: tuple[Setting, ...] = (
    # Kafka
    Setting("bootstrap", str, None, "Kafka bootstrap servers, host:port[,host:port]", env="GANGSCOPE_KAFKA_BOOTSTRAP"),
    Setting("topics", list, ["gangscope-pod-logs"], "pod-log topics (Fluent Bit's Kafka output)"),
    Setting("events_topics", list, [], "Kubernetes/Kueue event topics (one Event, Workload or Pod JSON per message)"),
    Setting("group", str, "gangscope", "consumer group"),
    Setting("client_id", str, "gangscope", "Kafka client id"),
    Setting("instance_id", str, None, "static group membership id (KIP-345): a restart takes its partitions back "
            "without a rebalance; unique per instance"),
    Setting("session_timeout", float, 45.0, "seconds without heartbeats before the group gives this consumer's "
            "partitions to another"),
    Setting("dead_letter_topic", str, "gangscope-dead-letter", "topic for messages that cannot be decoded ('' = none)"),
    Setting("metadata_refresh", float, 30.0, "seconds between refreshes of the topics' metadata: partitions added "
            "to a topic are read within it"),
    Setting("start", str, "earliest", "where a group without committed offsets starts: earliest or latest"),
    Setting("max_poll_records", int, 5000, "messages per poll"),
    Setting("kafka_client", str, "auto", "Kafka consumer backend: auto (confluent when confluent-kafka is installed, "
            "else kafka-python), kafka-python (pure Python) or confluent (librdkafka, decodes in C; "
            "pip install 'gangscope[confluent]')"),
    Setting("security_protocol", str, "PLAINTEXT", "PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL"),
    Setting("sasl_mechanism", str, None, "PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512"),
    Setting("sasl_username", str, None, "SASL user"),
    Setting("sasl_password", str, None, "SASL password; as a flag every user of the machine reads it in the process "
            "list: prefer sasl_password_file or the environment", secret=True),
    Setting("sasl_password_file", str, None, "file whose first line is the SASL password",
            env="GANGSCOPE_KAFKA_SASL_PASSWORD_FILE"),
    Setting("ssl_cafile", str, None, "CA bundle that signed the brokers' certificates"),
    Setting("ssl_certfile", str, None, "client certificate (PEM) for mutual TLS"),
    Setting("ssl_keyfile", str, None, "client key (PEM) for mutual TLS"),
    Setting("ssl_check_hostname", bool, True, "check the brokers' host names against their certificates"),
    # OpenSearch
    Setting("opensearch", str, None, "OpenSearch URL", env="GANGSCOPE_OPENSEARCH_URL"),
    Setting("index_prefix", str, "", "put before every index name"),
    Setting("opensearch_username", str, None, "OpenSearch user"),
    Setting("opensearch_password", str, None, "OpenSearch password; as a flag every user of the machine reads it in "
            "the process list: prefer opensearch_password_file or the environment", secret=True),
    Setting("opensearch_password_file", str, None, "file whose first line is the OpenSearch password"),
    Setting("opensearch_ca_certs", str, None, "CA bundle for https OpenSearch"),
    Setting("opensearch_timeout", float, 30.0, "seconds one OpenSearch request may take"),
    # Streaming curation
    Setting("flush_idle", float, 5.0, "seconds without a line after which a quiet container is closed; one that "
            "holds an open record (a traceback, a partial line) waits for its end instead (see open_wait)"),
    Setting("open_wait", float, 120.0, "seconds without a line after which a container's open records are closed "
            "before their end (counted: gangscope_open_records_cut_total); its attempt's end closes them first"),
    Setting("attempt_idle", float, 300.0, "seconds without a line after which a job's attempt is taken as ended"),
    Setting("attempt_grace", float, 5.0, "seconds after an eviction/finish event before the attempt is diagnosed"),
    Setting("flush_interval", float, 0.25, "seconds records may wait for the next bulk request while "
            "there is a backlog (caught up, every poll is flushed)"),
    Setting("commit_interval", float, 2.0, "seconds between checkpoints and offset commits"),
    Setting("checkpoints", bool, True, "keep curation state checkpoints in OpenSearch (exact resume after a crash)"),
    Setting("max_containers", int, 20_000, "containers curated at once per partition; past it the least recently "
            "fed are closed (their open records flushed, counted)"),
    Setting("digest_max_bytes", int, 16 << 20, "what the diagnosis of one job keeps in memory, as JSON; past it long "
            "records are summarized, then the least useful dropped"),
    Setting("events_lookback", float, 72.0, "hours of indexed events read at start-up for attempt numbers"),
    Setting("backoff_initial", float, 0.5, "first wait (s) when OpenSearch is unreachable; doubles"),
    Setting("backoff_max", float, 10.0, "longest wait (s) between tries while OpenSearch is unreachable"),
    Setting("shutdown_timeout", float, 20.0, "seconds SIGTERM/SIGINT may take to flush and commit"),
    # Observability
    Setting("metrics_port", int, 9464, "port of /metrics and /healthz (0 = any free port, -1 = off)"),
    Setting("metrics_host", str, "127.0.0.1", "address of /metrics and /healthz"),
    Setting("log_level", str, "info", "debug, info, warning or error"),
    # Redaction
    Setting("redaction_patterns", str, None, "file of a site's own secret patterns, one `name: regex` a line "
            "(the group named secret, or the whole match, is masked)"),
)

BY_NAME = {s.name: s for s in SETTINGS}
# A password and the setting naming the file that holds it.
PASSWORD_FILES = {"sasl_password": "sasl_password_file", "opensearch_password": "opensearch_password_file"}
_LAYERS = ("flag", "file", "env", "default")  # first wins


@dataclass
class ServiceConfig:
    """The resolved settings (see SETTINGS for each one's meaning)."""

    values: dict[str, Any] = field(default_factory=dict)
    origin: dict[str, str] = field(default_factory=dict)  # name -> flag | file | env | default

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["values"][name]
        except KeyError:
            raise AttributeError(name) from None

    def replace(self, **changes: Any) -> "ServiceConfig":
        values = dict(self.values)
        for name, value in changes.items():
            if name not in BY_NAME:
                raise UsageError(f"unknown setting {name!r}")
            values[name] = value
        return ServiceConfig(values, dict(self.origin, **{n: "flag" for n in changes}))

    def public(self) -> dict[str, Any]:
        """The settings with secrets masked (for the start-up log line)."""
        return {n: ("***" if BY_NAME[n].secret and v else v) for n, v in self.values.items()}


def convert(setting: Setting, value: Any, where: str) -> Any:
    """A raw value (text from env/flags, or a TOML value) as the setting's type."""
    if value is None:
        return None
    kind = setting.type
    try:
        if kind is list:
            if isinstance(value, str):
                return [v.strip() for v in value.split(",") if v.strip()]
            if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
                return list(value)
            raise ValueError("want a list of names")
        if kind is bool:
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in ("1", "true", "yes", "on"):
                return True
            if text in ("0", "false", "no", "off"):
                return False
            raise ValueError("want true or false")
        if kind is int:
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError("want a whole number")
            return int(value)
        if kind is float:
            if isinstance(value, bool):
                raise ValueError("want a number")
            return float(value)
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise ValueError("want text")
        return str(value)
    except ValueError as exc:
        raise UsageError(f"{where}: {setting.name} = {value!r}: {exc}") from None


def read_file(path: str) -> dict[str, Any]:
    """The settings of a TOML (or, with PyYAML, YAML) file; a `[consume]` table is read if present."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise UsageError(f"--config {path}: {exc.strerror or exc}") from None
    if p.suffix in (".yaml", ".yml"):
        try:
            import yaml  # type: ignore[import-not-found]
        except ImportError:
            raise UsageError(f"--config {path}: YAML needs PyYAML (pip install pyyaml); or write it as TOML") from None
        try:
            data = yaml.safe_load(raw.decode("utf-8")) or {}
        except (yaml.YAMLError, UnicodeDecodeError) as exc:
            raise UsageError(f"--config {path}: not valid YAML ({str(exc).splitlines()[0]})") from None
    else:
        import tomllib

        try:
            data = tomllib.loads(raw.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise UsageError(f"--config {path}: not valid TOML ({exc})") from None
    if not isinstance(data, dict):
        raise UsageError(f"--config {path}: want a table of settings")
    if isinstance(data.get("consume"), dict):
        data = data["consume"]
    unknown = sorted(set(data) - set(BY_NAME))
    if unknown:
        raise UsageError(f"--config {path}: unknown setting(s) {', '.join(unknown)}")
    return data


def load(flags: Mapping[str, Any] | None = None, config_path: str | None = None,
         environ: Mapping[str, str] | None = None) -> ServiceConfig:
    """Resolve every setting: flags (None = not given) > file > environment > default."""
    flags = flags or {}
    environ = os.environ if environ is None else environ
    from_file = read_file(config_path) if config_path else {}
    values: dict[str, Any] = {}
    origin: dict[str, str] = {}
    for s in SETTINGS:
        if flags.get(s.name) is not None:
            values[s.name], origin[s.name] = convert(s, flags[s.name], "flag"), "flag"
            continue
        if s.name in from_file:
            values[s.name], origin[s.name] = convert(s, from_file[s.name], f"--config {config_path}"), "file"
            continue
        env_name = next((n for n in s.env_names if environ.get(n)), None)
        if env_name is not None:
            values[s.name], origin[s.name] = convert(s, environ[env_name], env_name), "env"
            continue
        default = s.default
        values[s.name], origin[s.name] = (list(default) if isinstance(default, list) else default), "default"
    _read_password_files(values, origin)
    config = ServiceConfig(values, origin)
    validate(config)
    return config


def check_url(url: str, what: str) -> None:
    """A URL urllib can take apart, else one line that does not quote it: a password with `/`
    or `@` in it, not percent-encoded, reads as a port (`Port could not be cast to integer
    value as 'Pa55'`), and that message would show part of the password."""
    from urllib.parse import urlsplit

    try:
        urlsplit(url).port
    except ValueError:
        raise UsageError(f"{what}: not a valid URL (want http[s]://[user:password@]host:port; in a password write "
                         "/ as %2F and @ as %40)") from None


def password_flag_warning(flag: str, file_flag: str, env: str) -> str:
    """The warning for a password given as a flag. Worded so that no word follows the flag's
    name: the stderr redactor would take it for the password (`--password shows` -> `[REDACTED]`)."""
    return (f"gangscope: warning: a password given with {flag}, on the command line, shows to every user of this "
            f"machine (the process list); use {file_flag} PATH or {env}\n")


def url_password_warning(url: str, flag: str, file_flag: str) -> str | None:
    """The warning for a URL given on the command line with a password in its userinfo (it shows
    in the process list too), without the URL; None when it has none."""
    from urllib.parse import urlsplit

    try:
        password = urlsplit(url).password
    except ValueError:
        return None
    if not password:
        return None
    return (f"gangscope: warning: a password in the URL given with {flag}, on the command line, shows to every user "
            f"of this machine (the process list); leave it out of the URL and use {file_flag} PATH\n")


def warn_of_url_password(url: str, flag: str, file_flag: str) -> None:
    """`url_password_warning`, said on stderr."""
    import sys

    warning = url_password_warning(url, flag, file_flag)
    if warning:
        sys.stderr.write(warning)


def process_list_warnings(config: ServiceConfig) -> list[str]:
    """What consume says at start of the secrets its command line shows in the process list: a
    password given as a flag (unless its file, also a flag, was read instead), a password in the
    OpenSearch URL's userinfo. Said in the service's JSON log, not before it."""
    out = []
    for name, file_name in PASSWORD_FILES.items():
        if config.origin.get(name) == "flag" and config.origin.get(file_name) != "flag":
            out.append(password_flag_warning("--" + name.replace("_", "-"), "--" + file_name.replace("_", "-"),
                                             f"GANGSCOPE_{name.upper()}"))
    if config.origin.get("opensearch") == "flag" and config.values.get("opensearch"):
        warning = url_password_warning(config.values["opensearch"], "--opensearch", "--opensearch-password-file")
        if warning:
            out.append(warning)
    return [w.removeprefix("gangscope: warning: ").rstrip("\n") for w in out]


def read_secret_file(path: str, what: str) -> str:
    """The first line of a file holding a secret (its line end off; the rest of the file is
    ignored, as a mounted Kubernetes Secret or `echo pw > file` leave one). Never printed."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{what}: cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    if not lines or not lines[0].strip():
        raise UsageError(f"{what}: {path} is empty")
    return lines[0]


def _read_password_files(values: dict[str, Any], origin: dict[str, str]) -> None:
    """A password from its file: the file is read unless the password itself was given in a
    layer before it (a flag beats a file named in the environment); both in one layer is an error."""
    for name, file_name in PASSWORD_FILES.items():
        path = values[file_name]
        if not path:
            continue
        if values[name] is not None:
            if origin[name] == origin[file_name]:
                raise UsageError(f"consume: {name} and {file_name} both given ({origin[name]}): give one")
            if _LAYERS.index(origin[name]) < _LAYERS.index(origin[file_name]):
                continue
        values[name] = read_secret_file(path, f"consume: {file_name}")
        origin[name] = origin[file_name]


def validate(config: ServiceConfig) -> None:
    """Settings that cannot work together or at all: one line each, exit code 2."""
    v = config.values
    if not v["bootstrap"]:
        raise UsageError("consume: no Kafka bootstrap servers (--bootstrap or GANGSCOPE_KAFKA_BOOTSTRAP)")
    if not v["opensearch"]:
        raise UsageError("consume: no OpenSearch URL (--opensearch or GANGSCOPE_OPENSEARCH_URL)")
    check_url(v["opensearch"], "consume: opensearch")
    if not v["topics"] and not v["events_topics"]:
        raise UsageError("consume: no topics to read (--topic or --events-topic)")
    if v["start"] not in ("earliest", "latest"):
        raise UsageError(f"consume: start must be earliest or latest, got {v['start']!r}")
    protocols = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
    if v["security_protocol"] not in protocols:
        raise UsageError(f"consume: security_protocol must be one of {', '.join(protocols)}")
    if v["security_protocol"].startswith("SASL") and not v["sasl_mechanism"]:
        raise UsageError("consume: SASL needs sasl_mechanism (and usually sasl_username / sasl_password)")
    mechanisms = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")  # what a username and password can do
    if v["sasl_mechanism"] and v["sasl_mechanism"] not in mechanisms:
        raise UsageError(f"consume: sasl_mechanism must be one of {', '.join(mechanisms)}, got {v['sasl_mechanism']!r}")
    for name in ("ssl_cafile", "ssl_certfile", "ssl_keyfile", "opensearch_ca_certs"):
        if v[name] and not Path(v[name]).is_file():
            raise UsageError(f"consume: {name}: no such file: {v[name]}")
    for name in ("metadata_refresh", "flush_idle", "open_wait", "attempt_idle", "commit_interval", "flush_interval", "backoff_initial", "backoff_max", "shutdown_timeout",
                 "session_timeout"):
        if v[name] <= 0:
            raise UsageError(f"consume: {name} must be above 0, got {v[name]}")
    from gangscope.pipeline.sources.kafka_client import CLIENTS, default_client

    if v["kafka_client"] == "auto":
        v["kafka_client"] = default_client()
    if v["kafka_client"] not in CLIENTS:
        raise UsageError(f"consume: kafka_client must be auto or one of {', '.join(CLIENTS)}, got {v['kafka_client']!r}")
    if v["kafka_client"] == "confluent":
        try:
            import confluent_kafka  # noqa: F401
        except ImportError:
            raise UsageError("consume: kafka_client confluent needs confluent-kafka (pip install confluent-kafka)") from None
    if v["max_poll_records"] < 1:
        raise UsageError("consume: max_poll_records must be at least 1")
    if v["max_containers"] < 1:
        raise UsageError("consume: max_containers must be at least 1")
    if v["digest_max_bytes"] < 0:
        raise UsageError("consume: digest_max_bytes must not be negative")
    if v["log_level"].lower() not in ("debug", "info", "warning", "error"):
        raise UsageError(f"consume: log_level must be debug, info, warning or error, got {v['log_level']!r}")
    overlap = set(v["topics"]) & set(v["events_topics"])
    if overlap:
        raise UsageError(f"consume: {', '.join(sorted(overlap))} given as both a log and an events topic")


# --- command line -------------------------------------------------------------------------------

# Flags whose name is not the setting's (lists take one name per flag, repeatable).
_FLAG_NAMES = {"topics": "--topic", "events_topics": "--events-topic"}


def add_arguments(parser) -> None:
    """One flag per setting (`--flush-idle`, `--topic` repeatable, ...) plus `--config`."""
    parser.add_argument("--config", metavar="FILE", help="settings file (TOML; YAML with PyYAML)")
    for s in SETTINGS:
        flag = _FLAG_NAMES.get(s.name, "--" + s.name.replace("_", "-"))
        envs = " or ".join(s.env_names)
        default = "" if s.default in (None, "", []) else f"; default {s.default if s.type is not list else ','.join(s.default)}"
        help_text = f"{s.help} (env {envs}{default})"
        if s.type is list:
            parser.add_argument(flag, dest=s.name, action="append", metavar="NAME", help=help_text)
        elif s.type is bool:
            parser.add_argument(flag, dest=s.name, metavar="true|false", help=help_text)
        else:
            parser.add_argument(flag, dest=s.name, metavar=s.name.upper(), help=help_text)
    from gangscope.pipeline.run.deprecated import DeprecatedAlias

    # The other commands' old name of --index-prefix (one name for one thing; this one is kept).
    parser.add_argument("--prefix", dest="index_prefix", action=DeprecatedAlias, replacement="--index-prefix")


def use_redaction_patterns(path: str, what: str) -> int:
    """Read a file of `name: regex` lines (parsers/redact.parse_patterns) and put its rules in
    use next to the built-in ones, for records and log lines alike; the number of rules. A file
    that cannot be read or a line that is not a valid rule is one line, exit 2."""
    from gangscope.parsers import redact

    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{what}: cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        rules = redact.parse_patterns(text, f"{what} {path}")
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    redact.configure(extra=rules)
    return len(rules)


def from_args(args) -> ServiceConfig:
    """The settings of the command line; the redaction patterns they name are put in use. (A
    password given as a flag is warned of in the service's log: `process_list_warnings`.)"""
    flags = {s.name: getattr(args, s.name, None) for s in SETTINGS}
    cfg = load(flags, getattr(args, "config", None))
    if cfg.redaction_patterns:
        use_redaction_patterns(cfg.redaction_patterns, "consume: redaction_patterns")
    return cfg
