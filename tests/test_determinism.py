"""Deterministic output: the same input gives byte-identical output files whatever the run,
the number of workers, the order of the files on disk, or the interpreter's hash seed.

The bundled fixtures (real runs, framework dialects, public incidents, tracebacks, the gang
scenarios with their events, malformed input) are copied into two folders, one file at a
time in sorted order into the first and in reverse order into the second, so that their
directory entries are created in opposite orders. Each copy is replayed in its own process
(its own hash seed) from inside its folder with the same relative paths, so the inputs are
the same down to the `source` of every record and the paths named in summary.json.
"""
from __future__ import annotations

import difflib
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
COPIED = ("runs", "dialects", "public", "traces", "gang")
OUTPUT_FILES = ("step.ndjson", "epoch.ndjson", "error.ndjson", "trace.ndjson", "event.ndjson",
                "signal.ndjson", "diagnosis.ndjson", "report.html", "summary.json")


def copy_fixtures(into: Path, *, reverse: bool) -> Path:
    """The fixtures named in COPIED, copied file by file into `into`, in sorted or reverse order."""
    files = sorted(p.relative_to(FIXTURES) for top in COPIED for p in (FIXTURES / top).rglob("*") if p.is_file()
                   and "__pycache__" not in p.parts)
    for rel in reversed(files) if reverse else files:
        target = into / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(FIXTURES / rel, target)
    return into


def replay_args(folder: Path) -> list[str]:
    """`gangscope replay` of every pod log and event file of the copy, as paths relative to it."""
    gang = folder / "gang"
    logs = ["runs", "dialects", "public", "traces", "gang/raw"]
    logs += sorted(f"gang/{p.parent.name}/pods" for p in gang.glob("*/pods"))
    events = sorted(str(p.relative_to(folder)) for pattern in ("*/events.json", "*/events.ndjson", "*/pods.json",
                                                                "*/workloads.json") for p in gang.glob(pattern))
    return ["replay", *logs, "--events", *events, "--out", "out"]


def replay(folder: Path, *, workers: int, hash_seed: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONHASHSEED=hash_seed)
    return subprocess.run([sys.executable, "-m", "gangscope", *replay_args(folder), "--workers", str(workers)],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=int(os.environ.get("DET_TIMEOUT", "120")))


def first_difference(a: bytes, b: bytes) -> str:
    lines = difflib.unified_diff(a.decode("utf-8", "replace").splitlines(), b.decode("utf-8", "replace").splitlines(),
                                 lineterm="", n=0)
    return "\n".join(line[:300] for _, line in zip(range(12), lines))


def test_two_replays_of_the_same_input_write_byte_identical_files(tmp_path):
    sorted_copy = copy_fixtures(tmp_path / "sorted", reverse=False)
    reversed_copy = copy_fixtures(tmp_path / "reversed", reverse=True)
    assert replay_args(sorted_copy) == replay_args(reversed_copy)

    first = replay(sorted_copy, workers=1, hash_seed="1")
    second = replay(reversed_copy, workers=2, hash_seed="2")

    assert "Traceback" not in first.stderr + second.stderr, first.stderr + second.stderr
    assert first.returncode == second.returncode
    assert first.returncode in (0, 1)  # the malformed events are counted, not fatal
    written = sorted(os.listdir(sorted_copy / "out"))
    assert written == sorted(os.listdir(reversed_copy / "out"))
    assert set(OUTPUT_FILES) <= set(written)
    for kind in ("step", "epoch", "error", "trace", "event", "diagnosis"):  # every kind is in the comparison
        assert (sorted_copy / "out" / f"{kind}.ndjson").stat().st_size > 0, kind
    for name in written:
        a, b = (sorted_copy / "out" / name).read_bytes(), (reversed_copy / "out" / name).read_bytes()
        assert a == b, f"{name} differs between the two replays:\n{first_difference(a, b)}"

