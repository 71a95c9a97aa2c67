"""What gangscope writes about itself passes the redactor too (issue 20).

Records are redacted in curation (parsers/redact.py); these are the other lines: the consume
service's structlog JSON lines (its settings, a server's error message, an exception's text),
the log records of the libraries (kafka-python, opensearch-py, waitress, Flask), and whatever
the command line and the dashboard write on stderr (a server's error message, a traceback).

- `redact_event_dict`: a structlog processor, after `format_exc_info` and before the renderer:
  every value of the event dict, at any depth, with its secrets masked.
- `configure(level)`: the service's logging, ours and the libraries', both through it.
- `redacted_stderr()`: stderr as a stream whose writes pass the redactor, while a command runs;
  `excepthook`: Python's report of an uncaught exception, through the same redactor.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Any, Iterator, TextIO

# Keys ProcessorFormatter adds for its own use (structlog.stdlib): never rendered, left alone.
_META = frozenset(("_record", "_from_structlog"))
_PLAIN = (str, int, float, bool, type(None))


def _redactor():
    # imported on first use: `gangscope --help` does not load the parsers (tests/test_cli.py)
    from gangscope.parsers import redact

    return redact.active()


def _renderable(value: Any) -> Any:
    """The value as the JSON renderer would print it, in types the redactor walks: containers
    as lists and dicts, any other object as its repr (structlog's JSON fallback)."""
    if isinstance(value, _PLAIN):
        return value
    if isinstance(value, dict):
        return {k if isinstance(k, str) else repr(k): _renderable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_renderable(v) for v in value]
    if isinstance(value, BaseException):
        return f"{type(value).__name__}: {value}"
    return repr(value)


def redact_event_dict(logger: Any, method_name: str, event_dict: dict[str, Any]) -> dict[str, Any]:
    """structlog processor: every value of the event dict (the event, key-value pairs, the text
    of an exception once `format_exc_info` made it one) with its secrets masked, dict keys and
    nested values too; a value under a secret-named key (`password=...`) masked whole when it
    fits the name (parsers/redact_rules.secret_value). Objects become their repr first."""
    meta = {k: event_dict[k] for k in _META if k in event_dict}
    plain = {k: _renderable(v) for k, v in event_dict.items() if k not in _META}
    masked = _redactor().value(plain)
    if meta:
        masked = {**masked, **meta}
    return masked


def configure(level: str = "info", stream: TextIO | None = None) -> None:
    """structlog JSON lines on stderr (or `stream`), for ours and for the libraries' records
    (kafka-python's, opensearch-py's), every one through `redact_event_dict`."""
    import logging

    import structlog

    stream = unredacted(stream or sys.stderr)  # redacted value by value here; see RedactingStream
    shared = [structlog.processors.add_log_level, structlog.processors.TimeStamper(fmt="iso", utc=True)]
    structlog.configure(
        processors=[structlog.contextvars.merge_contextvars, *shared, structlog.processors.format_exc_info,
                    redact_event_dict, structlog.processors.JSONRenderer()],
        wrapper_class=structlog.make_filtering_bound_logger(getattr(logging, level.upper())),
        logger_factory=structlog.PrintLoggerFactory(stream),
        cache_logger_on_first_use=False,
    )
    handler = logging.StreamHandler(stream)
    handler.setFormatter(structlog.stdlib.ProcessorFormatter(
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, structlog.processors.format_exc_info,
                    redact_event_dict, structlog.processors.JSONRenderer()],
        foreign_pre_chain=[*shared, structlog.stdlib.add_logger_name]))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    # opensearch-py logs every 404 as a warning; a missing checkpoint is one, and normal
    logging.getLogger("opensearch").setLevel(logging.ERROR)


# ----------------------------------------------------------------------------- the terminal


class RedactingStream:
    """A text stream whose writes pass the redactor; everything else is the stream it wraps
    (`isatty`, `fileno`, `encoding`: rich still sees a terminal). A write is redacted as one
    text: rich, `print` and logging write a message in one piece."""

    def __init__(self, stream: TextIO):
        self.stream = stream

    def write(self, text: str) -> int:
        if text:
            self.stream.write(_redactor().text(text))
        return len(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def unredacted(stream: TextIO) -> TextIO:
    """The stream under a RedactingStream (for writers that redact value by value, whose
    output a second look at the rendered text could only spoil: a JSON line's quotes)."""
    while isinstance(stream, RedactingStream):
        stream = stream.stream
    return stream


@contextmanager
def redacted_stderr() -> Iterator[None]:
    """While it lasts, sys.stderr is a RedactingStream over the real one: messages, warnings,
    the libraries' log records and tracebacks a command writes pass the redactor."""
    original = sys.stderr
    if original is None or isinstance(original, RedactingStream):
        yield
        return
    sys.stderr = RedactingStream(original)  # type: ignore[assignment]
    try:
        yield
    finally:
        if isinstance(sys.stderr, RedactingStream):
            sys.stderr = original


def excepthook(kind, value, tb) -> None:
    """sys.excepthook: Python's report of an uncaught exception, through the redactor (its
    message can quote a log line or a server's answer)."""
    import traceback

    text = "".join(traceback.format_exception(kind, value, tb))
    stream = unredacted(sys.stderr)
    try:
        stream.write(_redactor().text(text))
        stream.flush()
    except Exception:  # the redactor itself failed: say less rather than print the text as is
        stream.write(f"{kind.__name__} (traceback withheld: it could not be redacted)\n")


def install_excepthook() -> None:
    """Uncaught exceptions are reported through `excepthook` (unless a host set its own)."""
    if sys.excepthook is sys.__excepthook__:
        sys.excepthook = excepthook
