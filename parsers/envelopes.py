"""Envelope decoders: the wrapping a container runtime or shipper puts around a log line.

Each decoder takes one raw line (without its newline) and returns an `Envelope`
or None when the line is not of that format. Formats (FORMATS.md section 1):

- cri: `<RFC3339Nano> <stdout|stderr> <P|F>[:tags] <content>` (kubelet / containerd / CRI-O;
  k8s.io/cri-api constants.go, containerd internal/cri/io/logger.go). `P` chunks are joined
  with the next `F` of the same stream by the caller (`PartialJoiner`).
- docker: json-file `{"log": "...\n", "stream": "stdout", "time": "..."}`; a `log` without
  a trailing newline is a partial chunk (fluent-bit flb_ml_parser_docker.c).
- fluentbit: a JSON record as Fluent Bit's outputs write it: `log` (or `message`), `stream`,
  `time` (string) or `@timestamp` (epoch seconds, out_kafka default), optional `_p`, and the
  `kubernetes` block of filter_kubernetes.
- text: anything else; one line, no time.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

import msgspec

from gangscope.parsers import json_logs, times


class Envelope(NamedTuple):
    time: str | None
    stream: str
    partial: bool
    text: str
    kubernetes: dict[str, Any] | None = None


FORMATS = ("cri", "docker", "fluentbit", "text")

_CRI_HEAD = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d) (?:stdout|stderr) [A-Z](?::[A-Z])* ")


def decode_cri(raw: str) -> Envelope | None:
    parts = raw.split(" ", 3)
    if len(parts) < 3:
        return None
    ts, stream, tag = parts[0], parts[1], parts[2]
    if stream != "stdout" and stream != "stderr":
        return None
    if not ts[:4].isdigit() or len(ts) < 20 or ts[10] != "T":
        return None
    return Envelope(ts, stream, tag[:1] == "P", parts[3] if len(parts) == 4 else "")  # the tag may be empty (fuzzing)


_json_decoder = msgspec.json.Decoder()


def _json_object(raw: str) -> dict[str, Any] | None:
    if not raw.startswith("{"):
        return None
    try:
        obj = _json_decoder.decode(raw)
    except (msgspec.DecodeError, RecursionError):  # deep nesting raises RecursionError (fuzzing, issue 10)
        return None
    return obj if isinstance(obj, dict) else None


def decode_docker(raw: str) -> Envelope | None:
    obj = _json_object(raw)
    if obj is None:
        return None
    log, stream, ts = obj.get("log"), obj.get("stream"), obj.get("time")
    if not isinstance(log, str) or not isinstance(ts, str):
        return None
    if log.endswith("\n"):
        text, partial = log[:-1], False
        if text.endswith("\r"):
            text = text[:-1]
    else:
        text, partial = log, True
    return Envelope(ts, stream if stream in ("stdout", "stderr") else "stdout", partial, text)


class Rejected(NamedTuple):
    """A record of the format whose fields have the wrong type: counted as a skip of `kind`
    (`wrong_type`), `detail` naming the field; never an envelope."""

    kind: str
    detail: str


# filter_kubernetes' block (FORMATS.md 1.4): the fields that name a container are strings, labels
# and annotations objects of strings. Anything else in them would key or name a pod wrongly.
KUBERNETES_TEXT_FIELDS = ("namespace_name", "pod_name", "pod_id", "container_name", "host")
KUBERNETES_MAP_FIELDS = ("labels", "annotations")


def kubernetes_problem(kube: Any) -> str | None:
    """What is wrong with a Fluent Bit `kubernetes` block (`kubernetes.pod_name is a JSON list`),
    or None when every field it is read for has its type. The one check of the block."""
    if type(kube) is not dict:
        return f"kubernetes is a JSON {_json_type(kube)}, not an object"
    for name in KUBERNETES_TEXT_FIELDS:
        v = kube.get(name)
        if v is not None and type(v) is not str:
            return f"kubernetes.{name} is a JSON {_json_type(v)}, not a string"
    for name in KUBERNETES_MAP_FIELDS:
        v = kube.get(name)
        if v is None:
            continue
        if type(v) is not dict:
            return f"kubernetes.{name} is a JSON {_json_type(v)}, not an object"
        for key, value in v.items():
            if type(value) is not str:
                return f"kubernetes.{name}[{_start_of(key)!r}] is a JSON {_json_type(value)}, not a string"
    return None


_WORD = r"[A-Za-z0-9_+/=-]+"  # the characters of a token's body (base64, base62, hex)


def _start_of(name: str, chars: int = 40) -> str:
    """A name cut to `chars` for a message, never inside a word: a token cut short is no longer
    one the redactor recognises, so its start would be shown (`eyJhbGci...` of a JWT)."""
    if len(name) <= chars:
        return name
    cut = name[:chars]
    if re.fullmatch(_WORD, name[chars - 1:chars + 1]):
        cut = re.sub(_WORD + "$", "", cut)
    return cut + "..."


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", list: "list", dict: "object"}.get(type(value), type(value).__name__)


def decode_fluentbit(raw: str) -> Envelope | None:
    """A Fluent Bit line as an envelope; None when it is not one, or its fields have the wrong
    type (`read_fluentbit` says which)."""
    env = read_fluentbit(raw)
    return env if type(env) is Envelope else None


def read_fluentbit(raw: str) -> Envelope | Rejected | None:
    """A Fluent Bit line: its envelope, `Rejected` when a field has the wrong type, None when
    it is no JSON object with log text."""
    obj = _json_object(raw)
    if obj is None:
        return None
    return read_record(obj)


def envelope_from_record(obj: dict[str, Any]) -> Envelope | None:
    """A Fluent Bit record (already parsed JSON) as an envelope; None if it carries no log text
    or a field of the wrong type (`read_record` says which)."""
    env = read_record(obj)
    return env if type(env) is Envelope else None


def read_record(obj: dict[str, Any]) -> Envelope | Rejected | None:
    """A Fluent Bit record (already parsed JSON) as an envelope; `Rejected` when a field it is
    read for has the wrong type (the `kubernetes` block, `stream`, `_p`), None when it carries
    no log text. The one reading of the record's fields."""
    text = obj.get("log")
    if not isinstance(text, str):
        # No `log`: an application's JSON log line is the record (a file of such lines, or Fluent Bit's
        # Merge_Log with Keep_Log Off lifting its fields into the record). A traceback it carries in a field
        # of its own (python-json-logger's `exc_info`, structlog's `exception`, ...) follows its message
        # (parsers/json_logs.py). With `log` kept, the JSON line itself is the text and is read there.
        text = json_logs.failure_text(obj)
        if text is None:
            text = obj.get("message")
            if not isinstance(text, str):
                return None
    partial = obj.get("_p") == "P"
    if text.endswith("\n"):
        text = text[:-1]
        if text.endswith("\r"):
            text = text[:-1]
    ts = obj.get("time")
    if not isinstance(ts, str):
        ts = epoch_to_rfc3339(obj.get("@timestamp", obj.get("date")))
    stream = obj.get("stream")
    kube = obj.get("kubernetes")
    if kube is not None:
        problem = kubernetes_problem(kube)
        if problem is not None:
            return Rejected("wrong_type", problem)
    return Envelope(
        ts,
        stream if stream in ("stdout", "stderr") else "stdout",
        partial,
        text,
        kube,
    )


def decode_text(raw: str) -> Envelope:
    return Envelope(None, "stdout", False, raw)


DECODERS = {"cri": decode_cri, "docker": decode_docker, "fluentbit": decode_fluentbit, "text": decode_text}


DETECT_WINDOW = 20  # lines voted on, from the first line of any envelope on


def detect_format(sample: list[str]) -> str:
    """The envelope of a file, from its first lines: the format most of them parse as.

    Lines before the first one of any envelope (a banner a wrapper script printed before the
    runtime's lines) do not vote: the vote is over `DETECT_WINDOW` lines from there on, so 25
    lines of junk before a CRI log leave it CRI (the junk is then counted unreadable). A file
    whose lines are mostly none of them is text."""
    votes = {"cri": 0, "docker": 0, "fluentbit": 0}
    nonempty = 0
    started = False
    for raw in sample:
        fmt = _format_of(raw)
        if not started:
            if fmt is None:
                continue
            started = True
        if raw.strip():
            nonempty += 1
        if fmt is not None:
            votes[fmt] += 1
        if nonempty >= DETECT_WINDOW:
            break
    best = max(votes, key=votes.__getitem__)
    if votes[best] and votes[best] * 2 >= nonempty:
        return best
    return "text"


def _format_of(raw: str) -> str | None:
    """The envelope one line parses as, None when it is of none (text)."""
    if _CRI_HEAD.match(raw):
        return "cri"
    obj = _json_object(raw)
    if obj is None:
        return None
    if isinstance(obj.get("kubernetes"), dict) or "@timestamp" in obj or "_p" in obj:
        return "fluentbit"
    if isinstance(obj.get("log"), str) and isinstance(obj.get("time"), str):
        return "docker"
    if isinstance(obj.get("log"), str) or isinstance(obj.get("message"), str):
        return "fluentbit"
    return None


def epoch_to_rfc3339(value: Any) -> str | None:
    """Fluent Bit's `@timestamp` (epoch seconds) as RFC 3339, six fraction digits; None if not a number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return times.from_seconds(float(value), fixed=True)
    except OverflowError:  # an int too large for a float
        return None
