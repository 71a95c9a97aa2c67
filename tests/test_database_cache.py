"""Compiled Hyperscan databases kept on disk (pipeline/curate/database_cache.py): a database read
back matches what a fresh compile matches, on the parsers' own prefilters and the fixtures'
lines; a changed pattern is another file; a damaged file, a folder that cannot be written and
the cache turned off all mean a compile, never an error."""

from __future__ import annotations

import pytest

hyperscan = pytest.importorskip("hyperscan")

from gangscope.pipeline.curate import database_cache, scan  # noqa: E402
from gangscope.pipeline.curate.substream import LINE_PARSERS  # noqa: E402
from fixture_text import fixture_lines  # noqa: E402

FLAGS = hyperscan.HS_FLAG_PREFILTER | hyperscan.HS_FLAG_MULTILINE | hyperscan.HS_FLAG_ALLOWEMPTY


def prefilter_pieces() -> tuple[list[bytes], list[int]]:
    pieces: list[bytes] = []
    ids: list[int] = []
    for i, cls in enumerate(LINE_PARSERS):
        split = [alt.encode() for alt in scan.alternatives(scan.relax_anchors(cls.PREFILTER))]
        pieces += split
        ids += [i] * len(split)
    return pieces, ids


def hits(database, data: bytes) -> set[tuple[int, int]]:
    found: set[tuple[int, int]] = set()
    database.scan(data, match_event_handler=lambda i, _s, end, _f, _c: found.add((i, end)))
    return found


def sample_block() -> bytes:
    lines = []
    for n, line in enumerate(fixture_lines()):
        if n >= 20_000:
            break
        if line.isascii():
            lines.append(line)
    return "\n".join(lines).encode()


def test_a_database_read_back_matches_a_fresh_compile(tmp_path, monkeypatch):
    monkeypatch.setenv("GANGSCOPE_CACHE_DIR", str(tmp_path))
    pieces, ids = prefilter_pieces()
    flags = [FLAGS] * len(pieces)
    fresh = hyperscan.Database()
    fresh.compile(expressions=pieces, ids=ids, elements=len(pieces), flags=flags)
    stored = database_cache.compile_database(pieces, ids, flags)
    files = list((tmp_path / "hyperscan").glob("*.hsdb"))
    assert len(files) == 1
    loaded = database_cache.compile_database(pieces, ids, flags)  # from the file now
    assert list((tmp_path / "hyperscan").glob("*.hsdb")) == files
    block = sample_block()
    expected = hits(fresh, block)
    assert len(expected) > 1000
    assert hits(stored, block) == hits(loaded, block) == expected
    # the same expressions in another order (a pattern built from a set): the same file
    order = sorted(range(len(pieces)), key=lambda k: pieces[k][::-1])
    again = database_cache.compile_database([pieces[k] for k in order], [ids[k] for k in order], flags)
    assert list((tmp_path / "hyperscan").glob("*.hsdb")) == files
    assert hits(again, block) == expected


def test_another_pattern_is_another_file(tmp_path, monkeypatch):
    monkeypatch.setenv("GANGSCOPE_CACHE_DIR", str(tmp_path))
    a = database_cache.compile_database([rb"loss\s*[:=]"], [0], [hyperscan.HS_FLAG_SINGLEMATCH])
    b = database_cache.compile_database([rb"grad_norm\s*[:=]"], [0], [hyperscan.HS_FLAG_SINGLEMATCH])
    c = database_cache.compile_database([rb"loss\s*[:=]"], [0], [0])  # other flags
    assert len(list((tmp_path / "hyperscan").glob("*.hsdb"))) == 3
    assert hits(a, b"loss: 1") and not hits(a, b"grad_norm: 1")
    assert hits(b, b"grad_norm: 1") and not hits(b, b"loss: 1") and hits(c, b"loss= 2")


def test_a_damaged_file_is_compiled_again_and_replaced(tmp_path, monkeypatch):
    monkeypatch.setenv("GANGSCOPE_CACHE_DIR", str(tmp_path))
    database_cache.compile_database([rb"Traceback \(most recent call last\)"], [0], [0])
    (path,) = (tmp_path / "hyperscan").glob("*.hsdb")
    good = path.read_bytes()
    for damaged in (good[: len(good) // 2], good[:-1] + bytes([good[-1] ^ 1]), b"", b"junk" * 100):
        path.write_bytes(damaged)
        database = database_cache.compile_database([rb"Traceback \(most recent call last\)"], [0], [0])
        assert hits(database, b"x Traceback (most recent call last):") == {(0, 35)}
        assert path.read_bytes() == good


def test_a_folder_that_cannot_be_written_or_the_cache_off_only_compiles(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("GANGSCOPE_CACHE_DIR", str(blocker))
    assert hits(database_cache.compile_database([rb"NCCL WARN"], [3], [0]), b"NCCL WARN x") == {(3, 9)}
    monkeypatch.setenv("GANGSCOPE_CACHE_DIR", "off")
    assert database_cache.cache_folder() is None
    assert hits(database_cache.compile_database([rb"NCCL WARN"], [3], [0]), b"NCCL WARN x") == {(3, 9)}
    assert blocker.read_text() == "not a folder"


def test_a_refused_pattern_still_raises_and_is_not_stored(tmp_path, monkeypatch):
    monkeypatch.setenv("GANGSCOPE_CACHE_DIR", str(tmp_path))
    with pytest.raises(hyperscan.error):
        database_cache.compile_database([rb"(a"], [0], [0])
    assert not list(tmp_path.rglob("*.hsdb"))
