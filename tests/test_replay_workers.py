"""Replay with worker processes: a failure ends the run with its error, never a hang."""
from __future__ import annotations

import functools
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
