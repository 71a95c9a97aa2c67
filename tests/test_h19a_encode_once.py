"""The replay into a local folder encodes the records the digest keeps by size once (issue 19):
the digest takes the length of the JSON the sink then writes. Same files, same digest bytes as the
path that encodes twice (a write callback that is not the sink's own)."""

from __future__ import annotations

from pathlib import Path

from gangscope.parsers.records import ErrorRecord, StepRecord, encode, encode_lines
from gangscope.pipeline.run import replay
from gangscope.pipeline.sinks.local import LocalFolderSink, _lines

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "runs"


def _run(out: Path, own_write: bool):
    sink = LocalFolderSink(out)
    write = sink.write if own_write else (lambda batch: sink.write(batch))
    result = replay.run(replay.ReplayOptions(paths=[str(FIXTURES)]), write, sink=sink)
    sink.close(result.summary())
    return result


def test_encoded_once_writes_the_same_files_and_digest_bytes(tmp_path):
    once = _run(tmp_path / "once", True)
    twice = _run(tmp_path / "twice", False)
    assert once.digest.bytes == twice.digest.bytes > 0
    names = sorted(p.name for p in (tmp_path / "once").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "twice").iterdir())
    for name in names:
        if name.endswith(".ndjson"):
            assert (tmp_path / "once" / name).read_bytes() == (tmp_path / "twice" / name).read_bytes(), name


def test_lines_of_documents_given_are_encode_lines():
    batch = [ErrorRecord(message="a\nb", id="1"), ErrorRecord(message="\u00e9", id="2")]
    docs = {id(r): encode(r) for r in batch}
    assert _lines(batch, docs) == encode_lines(batch)
    assert _lines(batch, {id(batch[0]): docs[id(batch[0])]}) == encode_lines(batch)  # one missing: encoded now
    assert _lines([StepRecord(step=1)], None) == encode_lines([StepRecord(step=1)])
