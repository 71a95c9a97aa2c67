"""The consumer's cycle-collector settings (pipeline/run/collector.py), in a process of their own:
they change the process's collector, which the test process must keep as it is."""

from __future__ import annotations

import json
import subprocess
import sys

from gangscope.pipeline.run import collector

_CHILD = r"""
import gc, json, sys
from gangscope.pipeline.run import collector
before = gc.get_threshold()
garbage = []
garbage.append(garbage)  # a cycle nothing refers to once `del`eted: freed by settle, not frozen
del garbage
collector.settle(int(sys.argv[1]))
print(json.dumps({"before": before, "after": gc.get_threshold(), "frozen": gc.get_freeze_count()}))
"""


def _settled(max_poll_records: int) -> dict:
    done = subprocess.run([sys.executable, "-c", _CHILD, str(max_poll_records)], capture_output=True, text=True,
                          timeout=120, check=True)
    return json.loads(done.stdout)


def test_settle_freezes_the_start_up_heap_and_raises_the_young_threshold():
    got = _settled(5000)
    assert got["frozen"] > 1000  # the imports' objects, left out of later collections
    assert got["after"][0] == collector.MIN_YOUNG > got["before"][0]
    assert got["after"][1:] == got["before"][1:]  # the older generations' thresholds stay CPython's


def test_the_young_threshold_stays_above_a_poll_batch():
    assert _settled(40_000)["after"][0] == 40_000 * collector.OBJECTS_PER_MESSAGE
    for records in (1, 700, 5000, 10_000, 100_000):
        assert collector.young_threshold(records) >= collector.OBJECTS_PER_MESSAGE * records
        assert collector.young_threshold(records) >= collector.MIN_YOUNG
