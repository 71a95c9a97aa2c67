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

from gangscope.parsers import times


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


def decode_fluentbit(raw: str) -> Envelope | None:
    obj = _json_object(raw)
    if obj is None:
        return None
    return envelope_from_record(obj)


def envelope_from_record(obj: dict[str, Any]) -> Envelope | None:
    """A Fluent Bit record (already parsed JSON) as an envelope; None if it carries no log text."""
    text = obj.get("log")
    if not isinstance(text, str):
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
    return Envelope(
        ts,
        stream if stream in ("stdout", "stderr") else "stdout",
        partial,
        text,
        kube if isinstance(kube, dict) else None,
    )


def decode_text(raw: str) -> Envelope:
    return Envelope(None, "stdout", False, raw)


DECODERS = {"cri": decode_cri, "docker": decode_docker, "fluentbit": decode_fluentbit, "text": decode_text}


def detect_format(sample: list[str]) -> str:
    """The envelope of a file, from its first lines: the format most of them parse as."""
    votes = {"cri": 0, "docker": 0, "fluentbit": 0}
    for raw in sample:
        if _CRI_HEAD.match(raw):
            votes["cri"] += 1
            continue
        obj = _json_object(raw)
        if obj is None:
            continue
        if isinstance(obj.get("kubernetes"), dict) or "@timestamp" in obj or "_p" in obj:
            votes["fluentbit"] += 1
        elif isinstance(obj.get("log"), str) and isinstance(obj.get("time"), str):
            votes["docker"] += 1
        elif isinstance(obj.get("log"), str) or isinstance(obj.get("message"), str):
            votes["fluentbit"] += 1
    best = max(votes, key=votes.__getitem__)
    nonempty = sum(1 for raw in sample if raw.strip())
    if votes[best] and votes[best] * 2 >= nonempty:
        return best
    return "text"


def epoch_to_rfc3339(value: Any) -> str | None:
    """Fluent Bit's `@timestamp` (epoch seconds) as RFC 3339, six fraction digits; None if not a number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return times.from_seconds(float(value), fixed=True)
    except OverflowError:  # an int too large for a float
        return None
