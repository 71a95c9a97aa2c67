"""[issue 16] `kubectl get job,pytorchjob,jobset,trainjob,workload -o yaml` is read as `-o json` is: the same
records, a List read one item at a time, a broken item or document a counted `bad_yaml` skip (parsers/events.py
_yaml_values; PyYAML's safe loader). Fixtures: fixtures/objects/*.yaml, written by build.py in kubectl's style.
"""

from __future__ import annotations

import json
import sys
import tracemalloc
from pathlib import Path

import pytest

from gangscope.parsers import events as ev
from gangscope.parsers.events import Skip, decode_event_stream
from gangscope.pipeline.run import replay

OBJECTS = Path(__file__).resolve().parent.parent / "fixtures" / "objects"


def read(name: str) -> list:
    return list(decode_event_stream((OBJECTS / name).read_text().splitlines(True)))


@pytest.mark.parametrize("stem", ["objects", "job"])
def test_yaml_gives_the_records_json_gives(stem):
    got, want = read(f"{stem}.yaml"), read(f"{stem}.json")
    assert not any(isinstance(r, Skip) for r in got)
    assert got == want and len(got) > 1


def test_diagnoses_from_yaml_are_those_from_json():
    def run(events: Path) -> dict:
        result = replay.run(replay.ReplayOptions(paths=[str(OBJECTS / "pods")], events=[str(events)]), lambda b: None)
        assert result.failures.summary() == [] and result.skipped_events == 0
        return {(d.job, d.attempt): (d.outcome, d.category) for d in result.diagnoses}
    got = run(OBJECTS / "objects.yaml")
    assert got == run(OBJECTS / "objects.json")
    assert got[("team-o/mae-deadline", 1)] == ("failed", "time_limit")
    assert got[("team-o/opt-done", 1)] == ("succeeded", "success")


def test_watch_documents_give_each_condition_once():
    """`kubectl get job -w -o yaml --output-watch-events`: documents after `---`, each a watch event."""
    got = read("watch.yaml")
    assert [(r.object_name, r.details["condition"]["type"]) for r in got] == [
        ("mae-deadline", "FailureTarget"), ("mae-deadline", "Failed")]


def test_malformed_yaml_is_counted_never_a_crash():
    got = read("malformed.yaml")
    skips = [(s.reason, s.line) for s in got if isinstance(s, Skip)]
    assert [r for r, _ in skips] == ["bad_yaml", "bad_yaml", "bad_yaml", "not_an_object"]
    assert all(line is not None for _, line in skips)
    assert [(r.object_name, r.reason) for r in got if not isinstance(r, Skip)] == [
        ("yaml-ok", "DeadlineExceeded"), ("yaml-js-ok", "AllJobsCompleted")]
    aliases = next(s for s in got if isinstance(s, Skip) and s.detail == "aliases")
    assert aliases.line == 11
    # no text of the file in a skip's detail (summary.json shows details)
    assert not any("open-flow" in s.detail or "tabbed" in s.detail for s in got if isinstance(s, Skip))


JOB = """\
- apiVersion: batch/v1
  kind: Job
  metadata:
    name: {name}
    namespace: ns
    uid: {uid}
  status:
    conditions:
    - lastProbeTime: "2026-01-01T00:00:00Z"
      lastTransitionTime: "2026-01-01T00:00:00Z"
      message: Job was active longer than specified deadline
      reason: DeadlineExceeded
      status: "True"
      type: Failed
"""


def _list_lines(n: int):
    yield "apiVersion: v1\n"
    yield "items:\n"
    for i in range(n):
        yield from JOB.format(name=f"j{i}", uid=f"u-{i}").splitlines(True)
    yield "kind: List\n"
    yield "metadata:\n"
    yield '  resourceVersion: ""\n'


def test_a_large_list_is_read_one_item_at_a_time():
    """Memory: one item, not the List (the text of 3,000 items is ~1 MB; nothing of it is kept)."""
    n = 3000
    size = sum(len(s) for s in _list_lines(n))
    count = 0
    tracemalloc.start()
    try:
        for r in decode_event_stream(_list_lines(n)):
            assert not isinstance(r, Skip)
            count += 1
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == n
    assert peak < size / 4, (peak, size)


@pytest.mark.parametrize("text,names", [
    # kubectl edit's comment head; unquoted times (other writers) read as the text they are
    ("# Please edit the object below.\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: a\n  namespace: ns\n"
     "status:\n  conditions:\n  - lastTransitionTime: 2026-01-01T00:00:00Z\n    status: 'True'\n    type: Complete\n",
     ["a"]),
    # items indented under `items:` (the OpenShift console's copies), CRLF line ends
    ("apiVersion: v1\r\nitems:\r\n  - apiVersion: batch/v1\r\n    kind: Job\r\n    metadata:\r\n      name: b\r\n"
     "    status:\r\n      conditions:\r\n        - lastTransitionTime: '2026-01-01T00:00:00Z'\r\n"
     "          status: 'True'\r\n          type: Complete\r\n  - apiVersion: batch/v1\r\n    kind: Job\r\n"
     "    metadata:\r\n      name: c\r\n    status:\r\n      conditions:\r\n"
     "        - {type: Failed, status: 'True', lastTransitionTime: '2026-01-01T00:00:01Z'}\r\nkind: List\r\n",
     ["b", "c"]),
    # an empty List; a document marker first
    ("---\napiVersion: v1\nitems: []\nkind: List\nmetadata:\n  resourceVersion: \"\"\n", []),
])
def test_yaml_shapes(text, names):
    got = list(decode_event_stream(text.splitlines(True)))
    assert not any(isinstance(r, Skip) for r in got), got
    assert [r.object_name for r in got] == names
    assert all(r.time.startswith("2026-01-01T00:00:0") for r in got)


def test_json_is_read_as_before():
    """A JSON file never goes the YAML way (its first line is a JSON value or opens one)."""
    text = json.dumps({"kind": "List", "items": []}, indent=2)
    assert list(decode_event_stream(text.splitlines(True))) == []
    assert [s.reason for s in decode_event_stream(["not json, not yaml\n"])] == ["bad_json"]


def test_without_pyyaml_one_counted_skip(monkeypatch):
    monkeypatch.setattr(ev, "_yaml_loader_class", None)
    monkeypatch.setitem(sys.modules, "yaml", None)
    got = list(decode_event_stream((OBJECTS / "job.yaml").read_text().splitlines(True)))
    assert [(s.reason, "pip install pyyaml" in s.detail) for s in got] == [("bad_yaml", True)]
