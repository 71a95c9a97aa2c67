"""Finding log files, naming their pods, and reading them as lines."""

import gzip

from hypothesis import given, settings
from hypothesis import strategies as st

from gangscope.pipeline.sources.files import ReadStats, discover, identify, read_lines

UID = "0c6d1111-2222-3333-4444-555566667777"


def _lines(path, **kw):
    stats = ReadStats()
    return [line for block in read_lines(str(path), stats, **kw) for line in block], stats


def test_kubelet_path_names_namespace_pod_uid_container_and_restart():
    ident = identify(f"/var/log/pods/team-a_llama-worker-3_{UID}/pytorch/2.log")
    assert (ident.namespace, ident.pod, ident.pod_uid, ident.container, ident.restart) == (
        "team-a",
        "llama-worker-3",
        UID,
        "pytorch",
        2,
    )


def test_containers_link_name_gives_pod_namespace_and_container():
    ident = identify("/var/log/containers/llama-worker-3_team-a_pytorch-" + "a" * 64 + ".log")
    assert (ident.namespace, ident.pod, ident.container) == ("team-a", "llama-worker-3", "pytorch")


def test_plain_file_is_a_pod_named_after_its_stem():
    assert identify("/tmp/rank0-output.log.gz").pod == "rank0-output"


def test_rotated_files_of_one_container_are_one_source_oldest_first(tmp_path):
    d = tmp_path / f"ns_pod-0_{UID}" / "c"
    d.mkdir(parents=True)
    for name in ("0.log", "0.log.20240102-000000.gz", "0.log.20240101-000000"):
        (d / name).write_text("")
    sources, problems = discover([str(tmp_path)])
    assert problems == []
    assert len(sources) == 1
    assert [p.rsplit("/", 1)[1] for p in sources[0].paths] == [
        "0.log.20240101-000000",
        "0.log.20240102-000000.gz",
        "0.log",
    ]


def test_missing_path_and_empty_folder_are_reported(tmp_path):
    (tmp_path / "empty").mkdir()
    sources, problems = discover([str(tmp_path / "nope"), str(tmp_path / "empty")])
    assert sources == []
    assert any("no such file" in p for p in problems)
    assert any("no log files" in p for p in problems)


def test_lines_split_on_newline_only_and_keep_carriage_returns(tmp_path):
    f = tmp_path / "a.log"
    f.write_bytes(b"a\rb\nc\x0bd\ne")
    lines, stats = _lines(f)
    assert lines == ["a\rb", "c\x0bd", "e"]
    assert stats.lines == 3


def test_invalid_utf8_is_replaced_and_counted(tmp_path):
    f = tmp_path / "a.log"
    f.write_bytes(b"good\nbad \xff\xfe here\nalso good\n")
    lines, stats = _lines(f)
    assert lines[1] == "bad \ufffd\ufffd here"
    assert stats.invalid_utf8_lines == 1
    assert lines[0] == "good" and lines[2] == "also good"


def test_a_ten_megabyte_line_is_cut_and_the_next_line_survives(tmp_path):
    f = tmp_path / "a.log"
    f.write_bytes(b"x" * (10 << 20) + b"\nnext\n")
    lines, stats = _lines(f, max_line_bytes=1 << 20)
    assert [len(l) for l in lines[:1]] == [1 << 20]
    assert lines[1] == "next"
    assert stats.long_lines_cut == 1


def test_gzip_is_read_by_its_magic(tmp_path):
    f = tmp_path / "a.log.1"
    f.write_bytes(gzip.compress(b"one\ntwo\n"))
    lines, _ = _lines(f)
    assert lines[:2] == ["one", "two"]


def test_truncated_gzip_keeps_what_was_read_and_names_the_file(tmp_path):
    payload = gzip.compress(b"".join(b"line %d\n" % i for i in range(20000)))
    f = tmp_path / "cut.log.gz"
    f.write_bytes(payload[: len(payload) // 2])
    lines, stats = _lines(f)
    assert lines[0] == "line 0"
    assert len(lines) > 100
    assert stats.errors and "cut.log.gz" in stats.errors[0] and "byte" in stats.errors[0]


@settings(max_examples=300, derandomize=True)
@given(st.lists(st.integers(0, 40), max_size=12), st.integers(1, 30))
def test_the_long_line_check_agrees_with_splitting_the_block(lengths, limit):
    from gangscope.pipeline.sources.files import _has_long_line

    data = b"\n".join(b"x" * n for n in lengths)
    assert _has_long_line(data, limit) == any(n > limit for n in lengths)
