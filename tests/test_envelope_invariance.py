"""The same real log gets the same diagnosis whatever envelope carries it (issue 16).

A pod's log reaches gangscope as the text a user pasted, as the kubelet's CRI file, as Docker's
json-file log, or with Windows line ends. The diagnosis is read from the text: the envelope
changes where the lines come from, never which cause, category or rank is named. Each real log of
../shared/eval/diagnosis-dev (the judged kind: excerpts pasted into public threads) is diagnosed
plain, then rewrapped line by line in each envelope (one millisecond between lines, as a process
writing a traceback at once), and the answers must agree.

Left out on purpose: this project's own eval logs. Several hold lines a terminal wrapped when they
were pasted, which the plain reader joins back (parsers/wraps.py) and a container runtime never
writes; and a log a runtime kept whole that stops short of its own totals reads as a hang where a
pasted excerpt reads as running (diagnose/endings.py _short_of_the_end). Neither is a difference the
envelope should erase.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gangscope.pipeline.run import replay

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "eval" / "diagnosis-dev"
LOGS = sorted(SHARED.glob("*.log")) if SHARED.is_dir() else []


def _stamp(i: int) -> str:
    return "2026-12-03T10:%02d:%02d.%06dZ" % ((i // 60000) % 60, (i // 1000) % 60, (i % 1000) * 1000)


def _lines(raw: bytes) -> list[bytes]:
    lines = raw.replace(b"\r\n", b"\n").split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines


def as_crlf(raw: bytes) -> bytes:
    return b"".join(line + b"\r\n" for line in _lines(raw))


def as_cri(raw: bytes) -> bytes:
    return b"".join(_stamp(i).encode() + b" stderr F " + line + b"\n" for i, line in enumerate(_lines(raw)))


def as_docker(raw: bytes) -> bytes:
    return b"".join(json.dumps({"log": line.decode("utf-8", "replace") + "\n", "stream": "stderr",
                                "time": _stamp(i)}).encode() + b"\n"
                    for i, line in enumerate(_lines(raw)))  # fmt: skip


def answer(tmp_path: Path, name: str, data: bytes) -> list[tuple]:
    path = tmp_path / name / f"{name}.log"
    path.parent.mkdir()
    path.write_bytes(data)
    result = replay.run(replay.ReplayOptions(paths=[str(path)]), lambda batch: None)
    assert result.failures.summary() == []
    return [(d.outcome, d.category, (d.first_failure or {}).get("rank")) for d in result.diagnoses]


def test_the_shared_logs_are_here_when_the_checkout_has_them():
    if not SHARED.is_dir():
        pytest.skip("../shared/eval/diagnosis-dev is not beside this checkout")
    assert len(LOGS) >= 60


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.stem)
def test_a_real_log_gets_the_same_diagnosis_in_every_envelope(tmp_path, path):
    raw = path.read_bytes()
    plain = answer(tmp_path, "plain", raw)
    assert len(plain) == 1
    assert answer(tmp_path, "crlf", as_crlf(raw)) == plain
    assert answer(tmp_path, "cri", as_cri(raw)) == plain
    assert answer(tmp_path, "docker", as_docker(raw)) == plain


def test_the_envelopes_carry_every_line_once():
    raw = b"a\nb c\r\n\n  d\n"
    assert as_crlf(raw) == b"a\r\nb c\r\n\r\n  d\r\n"
    assert as_cri(raw).count(b" stderr F ") == 4
    assert [json.loads(x)["log"] for x in as_docker(raw).splitlines()] == ["a\n", "b c\n", "\n", "  d\n"]
