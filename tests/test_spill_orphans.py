"""Spill folders left by a process killed with SIGKILL are removed by the next run, and nothing else is.

A `TemporaryDirectory` is removed by its finalizer, which never runs when the process is killed with
SIGKILL (the consumer's kill -9 tests do it; an OOM kill does it in production): its spill folder stayed in
the temporary folder for good. Spill folders are now named after the host and pid that made them
(pipeline/spill.py `private_directory`), and `sweep_orphans` removes those whose process is gone.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from gangscope.pipeline import spill


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _folder(tmp: Path, name: str) -> Path:
    path = tmp / name
    path.mkdir()
    (path / "0").write_bytes(b"spilled")
    return path


def test_the_folder_names_this_host_and_process(tmp_path, monkeypatch):
    monkeypatch.setattr(spill.tempfile, "tempdir", str(tmp_path))
    held = spill.private_directory("gangscope-series-")
    try:
        name = Path(held.name).name
        assert name.startswith(f"gangscope-series-{spill._HOST}.{os.getpid()}-")
        assert spill.sweep_orphans(str(tmp_path)) == 0  # its process (this one) is alive
        assert Path(held.name).is_dir()
    finally:
        held.cleanup()


def test_only_folders_of_gone_processes_of_this_host_are_removed(tmp_path):
    dead = _dead_pid()
    orphan = _folder(tmp_path, f"gangscope-series-parts-{spill._HOST}.{dead}-abc_12xy")
    live = _folder(tmp_path, f"gangscope-series-{spill._HOST}.{os.getppid()}-k2j3h4g5")
    own = _folder(tmp_path, f"gangscope-ranks-{spill._HOST}.{os.getpid()}-q9w8e7r6")
    other_host = _folder(tmp_path, f"gangscope-series-{'0' * 8 if spill._HOST != '0' * 8 else '1' * 8}.{dead}-aaaa1111")
    old_style = _folder(tmp_path, "gangscope-series-abcd1234")  # made before folders were named: left
    not_ours = _folder(tmp_path, f"pytest-series-{spill._HOST}.{dead}-aaaa1111")
    a_file = tmp_path / f"gangscope-newest-{spill._HOST}.{dead}-zzzz9999"
    a_file.write_text("a file, not a folder")

    assert spill.sweep_orphans(str(tmp_path)) == 1
    assert not orphan.exists()
    for kept in (live, own, other_host, old_style, not_ours, a_file):
        assert kept.exists(), kept


def test_a_missing_temporary_folder_removes_nothing(tmp_path):
    assert spill.sweep_orphans(str(tmp_path / "absent")) == 0


def test_a_run_killed_with_sigkill_leaves_a_folder_the_next_run_removes(tmp_path):
    """A real process spills (PartitionedRecords, as the digest's series do), is killed with SIGKILL
    mid-run, and its folder stays; the sweep of the next process removes it."""
    script = textwrap.dedent(f"""
        import os, sys, tempfile, time
        tempfile.tempdir = {str(tmp_path)!r}
        from gangscope.pipeline.spill import KeyedWords
        words = KeyedWords(2, 4, "gangscope-counts-")
        for n in range(64):
            words.add(n, n)
        print("spilled", flush=True)
        time.sleep(60)
    """)
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "spilled"
        left = [p for p in tmp_path.iterdir() if p.name.startswith("gangscope-counts-")]
        assert len(left) == 1 and left[0].name.startswith(f"gangscope-counts-{spill._HOST}.{child.pid}-")
        assert spill.sweep_orphans(str(tmp_path)) == 0  # still running
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert left[0].is_dir()  # SIGKILL: no finalizer ran
    assert spill.sweep_orphans(str(tmp_path)) == 1
    assert not left[0].exists()
