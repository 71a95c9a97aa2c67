"""A log file written by Windows tools reads as the same log written in UTF-8 (pipeline/sources/files.py
`open_binary`).

Windows PowerShell 5.1 writes what `>` and `Out-File` redirect as UTF-16LE with a byte order mark (its
"Unicode" default), so `python train.py > train.log` there gives a UTF-16 file: read as bytes, every line was
noise and the log read `running`. Notepad and PowerShell's `-Encoding utf8BOM` put a UTF-8 BOM before the
first line, which hid what that line said.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from gangscope.parsers.records import encode
from gangscope.pipeline.run import replay

LOG = (  # rank 1's traceback first: a BOM before its prefix hid the prefix
    "[rank1]: Traceback (most recent call last):\r\n"  # a Windows line end inside: kept as the plain file keeps it
    '[rank1]:   File "C:\\\\work\\\\train.py", line 88, in <module>\n'
    "[rank1]:     main()\n"
    "[rank1]: AttributeError: 'NoneType' object has no attribute 'update' (température, 東京)\n"
)


def _replayed(path: Path):
    records: list = []
    result = replay.run(replay.ReplayOptions(paths=[str(path)]), records.extend)
    assert result.failures.summary() == []
    return result, [encode(r) for r in records]


def _written(tmp_path: Path, folder: str, data: bytes) -> Path:
    (tmp_path / folder).mkdir()
    path = tmp_path / folder / "trainer-0.log"  # one name: the same pod, the same record ids
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("data", [
    LOG.encode("utf-16"),  # what Python's "utf-16" writes: a BOM, then the machine's order (LE here)
    b"\xff\xfe" + LOG.encode("utf-16-le"),  # PowerShell 5.1's `>`
    b"\xfe\xff" + LOG.encode("utf-16-be"),
    b"\xef\xbb\xbf" + LOG.encode("utf-8"),
], ids=["utf-16", "utf-16le-bom", "utf-16be-bom", "utf-8-bom"])
def test_the_same_records_as_the_utf8_file(tmp_path, data):
    utf8_result, utf8_records = _replayed(_written(tmp_path, "utf8", LOG.encode("utf-8")))
    result, records = _replayed(_written(tmp_path, "other", data))
    assert records == utf8_records
    [d] = result.diagnoses
    assert (d.category, d.exception_type, d.rank) == ("python_exception", "AttributeError", 1)


def test_utf16_without_a_bom_is_not_guessed(tmp_path):
    """No BOM, no guess: UTF-16 without one cannot be told from binary noise by its first bytes; its lines
    are counted as they are read (invalid or unreadable), and the run goes on."""
    path = _written(tmp_path, "nobom", LOG.encode("utf-16-le"))
    result = replay.run(replay.ReplayOptions(paths=[str(path)]), lambda batch: None)
    assert result.failures.summary() == []
    [d] = result.diagnoses
    assert d.category != "python_exception"


def test_a_gzipped_utf8_file_with_a_bom_is_left_to_the_reader(tmp_path):
    """gzip first (by its magic): the BOM inside is not looked for; the lines after the first still read."""
    path = _written(tmp_path, "gz", gzip.compress(b"\xef\xbb\xbf" + LOG.encode("utf-8")))
    result = replay.run(replay.ReplayOptions(paths=[str(path)]), lambda batch: None)
    [d] = result.diagnoses
    assert (d.category, d.exception_type) == ("python_exception", "AttributeError")
