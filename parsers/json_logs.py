"""Application logs written as JSON objects, one a line, that carry a Python traceback in a field.

A training script that logs through a JSON formatter writes its traceback as one escaped string inside
the line, so the line reads `{"message": "training failed", "exc_info": "Traceback (most recent call
last):\\n  File ..."}`: no line of it starts with `Traceback`, and the trace is lost. `expand` gives the
lines such an object stands for: its message, then the lines of each traceback field, as a plain log would
have printed them. The fields, from the formatters that write them:

- python-json-logger: `message`, `exc_info` (`self.formatException(record.exc_info)`, or `record.exc_text`;
  a list of its lines with 3.3's `exc_info_as_array`) and `stack_info` (nhairs/python-json-logger
  src/pythonjsonlogger/core.py `BaseJsonFormatter.format`, `formatException`; madzak/python-json-logger
  jsonlogger.py before it); json-log-formatter writes `exc_info` the same way.
- structlog: `event` and `exception` (structlog src/structlog/processors.py `ExceptionRenderer`, the
  `format_exc_info` processor: `event_dict["exception"] = self.format_exception(exc_info)`).
- Elastic Common Schema formatters: `message`, and `error.stack_trace` nested under `error` (ecs-logging-python:
  the frames alone, the class in `error.type`, the text in `error.message`) or dotted (`error.stack_trace`, as
  other ECS encoders write it).
- Formatters that put the formatted record, traceback included, in the message itself: the message
  (Google Cloud Logging's structured handler) or loguru's `text` (`serialize=True`: loguru/_handler.py
  `_serialize_record` writes `{"text": <the formatted line, traceback included>, "record": {...}}`).

Pure: text in, lines out; a line that is no such object (or whose fields hold no traceback) is left as it is.
"""

from __future__ import annotations

from typing import Any

import msgspec

MARK = "Traceback (most recent call last):"
ECS_MARK = 'stack_trace"'  # ECS's field ("error.stack_trace", or "stack_trace" nested under "error"), whose frames have no header


def worth_decoding(text: str) -> bool:
    """Whether a line that starts with "{" may be such a line: it holds Python's traceback header or the
    ECS field. (Two substring searches: on the long JSON lines a job prints, several times cheaper than
    one regex with the two as alternatives.)"""
    return MARK in text or ECS_MARK in text


MESSAGE_FIELDS = ("message", "msg", "event", "text", "log")
TRACE_FIELDS = ("exc_info", "exception", "exc_text", "stack_trace", "traceback", "stack_info")

_decoder = msgspec.json.Decoder()


def _holds_trace(value: Any) -> bool:
    return type(value) is str and "\n" in value and MARK in value


def _as_text(value: Any) -> Any:
    """A traceback written as a list of its lines (python-json-logger 3.3+'s `exc_info_as_array`,
    `formatException(...).splitlines()`) as one text; anything else as it is."""
    if type(value) is list and value and type(value[0]) is str and value[0].startswith(MARK):
        return "\n".join(v for v in value if type(v) is str)
    return value


def _ecs_trace(stack: Any, kind: Any, message: Any) -> str | None:
    """ECS's stack trace as Python prints it: ecs-logging-python writes the frames alone
    (`traceback.format_tb`) with the exception's class in `error.type` and its text in `error.message`
    (elastic/ecs-logging-python ecs_logging/_stdlib.py `format_to_ecs`)."""
    if type(stack) is not str or "\n" not in stack:
        return None
    if MARK in stack:
        return stack
    if '  File "' not in stack:
        return None  # another language's stack (Java's "\tat ..."), no Python frames
    tail = f"{kind}: {message}" if type(kind) is str and type(message) is str else kind if type(kind) is str else ""
    return f"{MARK}\n{stack.rstrip()}\n{tail}" if tail else f"{MARK}\n{stack.rstrip()}"


def traces_of(obj: dict[str, Any]) -> list[str]:
    """The tracebacks the fields of a decoded JSON log object hold (TRACE_FIELDS, and ECS's
    `error.stack_trace`, nested or dotted), in that order."""
    traces = [t for t in (_as_text(obj.get(k)) for k in TRACE_FIELDS) if _holds_trace(t)]
    error = obj.get("error")
    if type(error) is dict:
        ecs = _ecs_trace(error.get("stack_trace"), error.get("type"), error.get("message"))
    else:
        ecs = _ecs_trace(obj.get("error.stack_trace"), obj.get("error.type"), obj.get("error.message"))
    if ecs is not None and ecs not in traces:
        traces.append(ecs)
    return traces


def failure_text(obj: dict[str, Any]) -> str | None:
    """The text of a decoded JSON log object that holds a traceback: its message (or "") with the
    traceback fields' text after it, as a plain log prints them; None when it holds no traceback."""
    message = next((obj[k] for k in MESSAGE_FIELDS if type(obj.get(k)) is str), None)
    traces = traces_of(obj)
    if not traces and not _holds_trace(message):
        return None
    lines = [message] if message is not None else []
    lines.extend(t for t in traces if message is None or t not in message)
    return "\n".join(line.rstrip("\n") for line in lines)


def expand(text: str) -> list[str] | None:
    """The lines a JSON log line stands for when a field of it holds a Python traceback (the message
    first, then each traceback field's lines); None when `text` is not such a line."""
    if not text.startswith("{") or not worth_decoding(text):
        return None
    try:
        obj = _decoder.decode(text)
    except (msgspec.DecodeError, RecursionError):
        return None
    if type(obj) is not dict:
        return None
    text = failure_text(obj)
    if text is None:
        return None
    lines = text.split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]
