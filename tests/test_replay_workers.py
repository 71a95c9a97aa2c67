"""Replay with worker processes: a failure ends the run with its error, never a hang."""
from __future__ import annotations

import contextlib
import functools
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from gangscope.pipeline.errors import SinkError
from gangscope.pipeline.run import replay
from gangscope.pipeline.sinks.local import LocalFolderSink

RUNS = Path(__file__).resolve().parent.parent / "fixtures" / "runs"


class UnwritablePart(LocalFolderSink):
    def __init__(self, out, **kinds) -> None:
        raise SinkError(f"{out}: cannot create the output folder: No space left on device")


class SinkWhoseSixthPartFails(LocalFolderSink):
    """Slow to take in parts (the workers finish theirs and wait for more), and the sixth
    part cannot be made in its worker."""

    def part(self, index: int):
        if index == 5:
            return functools.partial(UnwritablePart, self.out / ".parts" / f"{index:06d}", kinds=self.kinds)
        return super().part(index)

    def absorb(self, handoff) -> None:
        time.sleep(0.2)
        super().absorb(handoff)


class SinkFullOnTheThirdPart(LocalFolderSink):
    """Slow to take in the first parts (the workers finish theirs and wait), then full."""

    taken = 0

    def absorb(self, handoff) -> None:
        self.taken += 1
        if self.taken == 3:
            raise SinkError("out: disk full while writing")
        time.sleep(0.5)
        super().absorb(handoff)


def replay_in_thread(sink: LocalFolderSink) -> list[BaseException]:
    """Replay fixtures/runs (more pods than the tasks handed out ahead of the parent) with two
    workers into `sink`; the errors it raised. Fails the test if it does not end in time."""
    options = replay.ReplayOptions(paths=[str(RUNS)], workers=2)
    raised: list[BaseException] = []

    def run() -> None:
        try:
            replay.run(options, sink.write, sink=sink)
        except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
            raised.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(60)
    assert not thread.is_alive(), "the replay hung"
    return raised


@pytest.mark.parametrize("sink_class", [SinkWhoseSixthPartFails, SinkFullOnTheThirdPart])
def test_a_sink_failing_while_workers_curate_ends_the_replay_with_its_error(tmp_path, sink_class):
    raised = replay_in_thread(sink_class(tmp_path / "out"))
    assert [type(e) for e in raised] == [SinkError]


def _children(pid: int) -> set[int]:
    """The processes whose parent is `pid` (Linux /proc)."""
    found = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            found.update(int(c) for c in (task / "children").read_text().split())
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc (Linux)")
def test_workers_stop_when_their_parent_is_killed(tmp_path):
    """SIGKILL runs none of the parent's clean-up: its workers went on curating and writing their
    parts for seconds (issue 17). They now die with it (PR_SET_PDEATHSIG, replay.die_with_parent)."""
    for p in range(4):  # four pods, each a few seconds of work for one worker
        d = tmp_path / "logs" / f"team-a_w-{p}_0c6d1111-2222-3333-4444-55556666777{p}" / "pytorch"
        d.mkdir(parents=True)
        with open(d / "0.log", "w") as fh:
            for i in range(150_000):
                fh.write(f"2024-05-01T12:{i // 6000 % 60:02d}:{i // 100 % 60:02d}.{i % 100:02d}0000000Z stdout F "
                         f"step {i + 1} loss 1.{i % 97:02d} lr 3e-4\n")
    parent = subprocess.Popen([sys.executable, "-m", "gangscope", "replay", str(tmp_path / "logs"), "--out",
                               str(tmp_path / "out"), "--workers", "2", "--no-progress"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        workers: set[int] = set()
        while len(workers) < 2 and time.monotonic() < deadline and parent.poll() is None:
            workers = {c for c in _children(parent.pid) if "gangscope" in _cmdline(c)}
            time.sleep(0.05)
        assert len(workers) == 2, "the workers never started"
        time.sleep(0.5)  # curating now
        assert all(_alive(w) for w in workers)
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(10)
        deadline = time.monotonic() + 3
        while any(_alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(_alive(w) for w in workers), "workers outlived their parent"
    finally:
        for pid in (parent.pid, *workers):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""
