"""Application logs written as JSON, one object a line, with the traceback in a field (parsers/json_logs.py),
and records of several lines (Fluent Bit's multiline parsers join a traceback into one `log`).

The four fixtures in fixtures/json_logs/ were written by the real formatters (python-json-logger, structlog,
ecs-logging, loguru; fixtures/generate/json_loggers.py): five step lines, then a ValueError logged with
`logger.exception`. Before, gangscope read none of their tracebacks: each log read `running`, or a keyword
error with no exception type.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gangscope.parsers import json_logs
from gangscope.pipeline.run import replay

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "json_logs"
LOGS = sorted(FIXTURES.glob("*.log"))
EXCEPTION = "ValueError: Expected input batch_size (16) to match target batch_size (8)."
KUBE = {"pod_name": "trainer-worker-0", "namespace_name": "ml", "container_name": "pytorch", "host": "gpu-node-7"}


def _failure_line(log: Path) -> str:
    return log.read_text().splitlines()[-1]


def test_the_four_formatters_wrote_their_fixtures():
    assert [p.stem for p in LOGS] == ["ecs_logging", "loguru", "python_json_logger", "structlog"]


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.stem)
def test_the_failure_line_expands_to_the_message_and_the_traceback(log):
    lines = json_logs.expand(_failure_line(log))
    assert lines is not None
    assert "training failed" in lines[0]
    assert lines[1] == "Traceback (most recent call last):"
    assert lines[2].startswith('  File "/workspace/train.py", line ')
    assert lines[-1] == EXCEPTION
    assert all("\n" not in line for line in lines)


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.stem)
def test_step_lines_are_left_as_they_are(log):
    for line in log.read_text().splitlines()[:-1]:
        assert json_logs.expand(line) is None


@pytest.mark.parametrize(
    "text",
    [
        '{"message": "see Traceback (most recent call last): above", "level": "info"}',  # the words, no trace
        '{"message": "Traceback (most recent call last):"}',  # a header alone, no line after it
        '{"exc_info": "Traceback (most recent call last):\\n  File \\"x.py\\", line 1, in <module>\\nValueError: x"',  # cut JSON
        '[{"exc_info": "Traceback (most recent call last):\\nValueError: x"}]',  # not an object
        "{Traceback (most recent call last):",  # a brace, no JSON
        # ECS from a JVM: a Java stack, no Python frames
        '{"message": "failed", "error": {"type": "java.io.IOException", "message": "disk", '
        '"stack_trace": "java.io.IOException: disk\\n\\tat org.x.Y.z(Y.java:10)\\n"}}',
        '{"message": "failed", "error.stack_trace": "at Object.<anonymous> (/app/x.js:1:1)\\nat Module._compile"}',
    ],
)  # fmt: skip
def test_near_misses_are_not_expanded(text):
    assert json_logs.expand(text) is None


def test_a_traceback_as_a_list_of_lines():
    """python-json-logger 3.3+ with exc_info_as_array=True: `formatException(...).splitlines()`."""
    obj = {"message": "training failed", "exc_info": ["Traceback (most recent call last):",
                                                      '  File "/workspace/train.py", line 9, in <module>', EXCEPTION]}
    assert json_logs.expand(json.dumps(obj)) == ["training failed", *obj["exc_info"]]


def test_ecs_dotted_fields_get_the_header_and_the_exception_line():
    obj = {"message": "training failed", "error.type": "ValueError", "error.message": "bad shape",
           "error.stack_trace": '  File "/workspace/train.py", line 9, in <module>\n    main()\n'}
    assert json_logs.expand(json.dumps(obj)) == [
        "training failed", "Traceback (most recent call last):", '  File "/workspace/train.py", line 9, in <module>',
        "    main()", "ValueError: bad shape"]


def _diagnosis(path: Path):
    result = replay.run(replay.ReplayOptions(paths=[str(path)]), lambda batch: None)
    assert result.failures.summary() == []
    [d] = result.diagnoses
    return d


def _cri(lines: list[str]) -> list[str]:
    return [f"2026-05-01T10:00:{n:02d}.000000000Z {'stderr' if n == len(lines) - 1 else 'stdout'} F {line}"
            for n, line in enumerate(lines)]


def _fluent_bit_keep_log(lines: list[str]) -> list[str]:
    """tail + kubernetes filter, Merge_Log Off: the application's JSON line is the record's `log`."""
    return [json.dumps({"@timestamp": 1777629600 + n, "log": line + "\n", "stream": "stdout", "_p": "F",
                        "kubernetes": KUBE}) for n, line in enumerate(lines)]


def _fluent_bit_merged(lines: list[str]) -> list[str]:
    """The kubernetes filter with Merge_Log On and Keep_Log Off: the line's fields lifted into the record."""
    return [json.dumps({"@timestamp": 1777629600 + n, "stream": "stdout", **json.loads(line), "kubernetes": KUBE})
            for n, line in enumerate(lines)]


@pytest.mark.parametrize("wrap", [None, _cri, _fluent_bit_keep_log, _fluent_bit_merged],
                         ids=["plain", "cri", "fluent-bit-log", "fluent-bit-merged"])
@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.stem)
def test_the_diagnosis_names_the_exception_whatever_carries_the_line(log, wrap, tmp_path):
    lines = log.read_text().splitlines()
    path = tmp_path / "pod.log"
    path.write_text("\n".join(wrap(lines) if wrap else lines) + "\n")
    d = _diagnosis(path)
    assert d.category == "python_exception", d.summary
    assert d.exception_type == "ValueError", d.summary


def test_a_fluent_bit_multiline_record_is_read_line_by_line(tmp_path):
    """fluent-bit src/multiline/flb_ml.c `breakline_prepare`: the lines a multiline parser groups are joined
    with "\\n" into one record's `log`."""
    trace = ["Traceback (most recent call last):", '  File "/workspace/train.py", line 88, in <module>', "    main()",
             '  File "/workspace/train.py", line 70, in main', "    loss.backward()", EXCEPTION]
    records = [{"@timestamp": 1777629600 + n, "log": f"step {n} loss 2.{n}\n", "stream": "stdout", "kubernetes": KUBE}
               for n in range(1, 5)]
    records.append({"@timestamp": 1777629606, "log": "\n".join(trace) + "\n", "stream": "stderr", "kubernetes": KUBE})
    path = tmp_path / "records.ndjson"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    d = _diagnosis(path)
    assert (d.category, d.exception_type) == ("python_exception", "ValueError"), d.summary


def _fluent_bit_merged_keep_log(lines: list[str]) -> list[str]:
    """Merge_Log On with Keep_Log On (Fluent Bit's default): the fields lifted and the line kept in `log`."""
    return [json.dumps({"@timestamp": 1777629600 + n, "log": line + "\n", "stream": "stdout", **json.loads(line),
                        "kubernetes": KUBE}) for n, line in enumerate(lines)]


def _records_of(values: list[bytes], scanner):
    from gangscope.pipeline.correlate.event_book import AttemptOf, EventBook
    from gangscope.pipeline.curate import partition
    from gangscope.pipeline.sources import kafka as ksrc

    items = []
    for i, value in enumerate(values):
        try:
            items.append((i, ksrc.decode_log(value)))
        except ksrc.Undecodable:  # merged structlog / loguru step lines: no text field (the consumer counts them)
            pass
    state = partition.LogPartition(AttemptOf(EventBook()))
    out: list = []
    state.feed_batch(items, out, scanner)
    state.close_all(out)
    return out


@pytest.mark.parametrize("wrap", [_fluent_bit_keep_log, _fluent_bit_merged, _fluent_bit_merged_keep_log],
                         ids=["log", "merged", "merged-and-log"])
@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.stem)
def test_the_consumer_reads_one_trace_from_each_shape_of_record(log, wrap, tmp_path):
    """What the consumer curates from Kafka (sources/kafka.decode_log, whose fast path reads `log` alone, then
    a partition's curation, with and without the batch scan) holds the one traceback, as a replay of the
    same records as a file does: a record with both the line in `log` and its fields merged gives one trace,
    not two."""
    from gangscope.parsers.records import TraceRecord, encode
    from gangscope.pipeline.curate import partition

    values = [v.encode() for v in wrap(log.read_text().splitlines())]
    plain = _records_of(values, None)
    traces = [r for r in plain if type(r) is TraceRecord]
    assert [t.exception_type for t in traces] == ["ValueError"]
    scanner = partition.text_scanner()
    if scanner is not None:
        assert [encode(r) for r in _records_of(values, scanner)] == [encode(r) for r in plain]
    path = tmp_path / "records.ndjson"
    path.write_bytes(b"\n".join(values) + b"\n")
    replayed: list = []
    replay.run(replay.ReplayOptions(paths=[str(path)]), replayed.extend)
    assert [r.exception_type for r in replayed if type(r) is TraceRecord] == ["ValueError"]
