"""parsers/events.py: Kubernetes Events, Kueue Workloads and Pods -> event records, bad input -> counted skips."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gangscope.parsers.events import (
    Skip,
    count_skips,
    decode_event_stream,
    decode_object,
    normalize_time,
    pod_accelerators,
    workload_summary,
)
from gangscope.parsers.records import EventRecord

GANG = Path(__file__).resolve().parent.parent / "fixtures" / "gang"

# A core/v1 Event as `kubectl get events -o json` prints it (Kueue v0.9 core recorder; strings per
# fixtures/gang/README.md).
CORE = {
    "apiVersion": "v1", "kind": "Event",
    "metadata": {"name": "pytorchjob-llama-ft-7753e.1898fa9c2a313400", "namespace": "team-a", "uid": "ev-1",
                 "resourceVersion": "1001", "creationTimestamp": "2026-03-02T09:10:02Z"},
    "involvedObject": {"kind": "Workload", "namespace": "team-a", "name": "pytorchjob-llama-ft-7753e", "uid": "wl-1",
                       "apiVersion": "kueue.x-k8s.io/v1beta1"},
    "reason": "EvictedDueToPodsReadyTimeout", "message": "Exceeded the PodsReady timeout team-a/pytorchjob-llama-ft-7753e",
    "source": {"component": "kueue-workload-controller"}, "firstTimestamp": "2026-03-02T09:10:02Z",
    "lastTimestamp": "2026-03-02T09:10:02Z", "count": 1, "type": "Normal", "eventTime": None,
    "reportingComponent": "kueue-workload-controller", "reportingInstance": "",
}

KUBELET = {
    "apiVersion": "v1", "kind": "Event",
    "metadata": {"name": "llama-ft-worker-0.1898fa9c8e000001", "namespace": "team-a", "uid": "ev-2", "resourceVersion": "7"},
    "involvedObject": {"kind": "Pod", "namespace": "team-a", "name": "llama-ft-worker-0", "uid": "pod-1", "apiVersion": "v1",
                       "fieldPath": "spec.containers{pytorch}",
                       "labels": {"training.kubeflow.org/job-name": "llama-ft"}},
    "reason": "BackOff", "message": 'Back-off pulling image "registry.example.com/ml/llama-train:2.4.1-cu214"',
    "source": {"component": "kubelet", "host": "gpu-a2"}, "firstTimestamp": "2026-03-02T09:00:07Z",
    "lastTimestamp": "2026-03-02T09:09:40Z", "count": 24, "type": "Normal", "clusterName": "",
}

NEW = {
    "apiVersion": "events.k8s.io/v1", "kind": "Event",
    "metadata": {"name": "bert-pretrain-3-fj9m9.1898fb1d00000001", "namespace": "team-b", "uid": "ev-3", "resourceVersion": "9"},
    "regarding": {"kind": "Pod", "namespace": "team-b", "name": "bert-pretrain-3-fj9m9", "uid": "pod-3", "apiVersion": "v1"},
    "reason": "FailedScheduling", "type": "Warning", "action": "Scheduling",
    "note": "0/4 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/4 nodes are available: "
            "3 No preemption victims found for incoming pod.",
    "reportingController": "default-scheduler", "reportingInstance": "default-scheduler-x7k2p",
    "eventTime": "2026-03-03T14:20:02.300000Z", "series": {"count": 17, "lastObservedTime": "2026-03-03T14:29:54.300000Z"},
}


def decode_one(obj: dict) -> list:
    return list(decode_object(copy.deepcopy(obj)))


def lines_of(*objs: object) -> list[str]:
    return [o if isinstance(o, str) else json.dumps(o) for o in objs]


# ----------------------------------------------------------------------------- Event objects


def test_core_event_fields_become_the_record():
    [r] = decode_one(CORE)
    assert (r.reason, r.type, r.object_kind, r.object_name, r.namespace) == (
        "EvictedDueToPodsReadyTimeout", "Normal", "Workload", "pytorchjob-llama-ft-7753e", "team-a")
    assert r.message == "Exceeded the PodsReady timeout team-a/pytorchjob-llama-ft-7753e"
    assert (r.time, r.count) == ("2026-03-02T09:10:02Z", 1)
    assert r.details["involvedObject"]["uid"] == "wl-1"
    assert r.details["reportingController"] == "kueue-workload-controller"


def test_kubelet_event_names_pod_container_and_node():
    r = decode_one(KUBELET)[0]
    assert (r.pod, r.container, r.node) == ("llama-ft-worker-0", "pytorch", "gpu-a2")


def test_exporter_labels_of_the_involved_object_are_kept():
    r = decode_one(KUBELET)[0]
    assert r.details["labels"] == {"training.kubeflow.org/job-name": "llama-ft"}


def test_events_k8s_io_note_regarding_and_series_are_read():
    latest, first = decode_one(NEW)
    assert (latest.message, latest.object_name, latest.count, latest.time) == (
        NEW["note"], "bert-pretrain-3-fj9m9", 17, "2026-03-03T14:29:54.3Z")
    assert (first.count, first.time) == (1, "2026-03-03T14:20:02.3Z")
    assert latest.details["series"] == {"count": 17, "lastObservedTime": "2026-03-03T14:29:54.3Z"}


def test_folded_event_gives_its_latest_and_its_first_occurrence():
    latest, first = decode_one(KUBELET)
    assert (latest.count, latest.time) == (24, "2026-03-02T09:09:40Z")
    assert (first.count, first.time) == (1, "2026-03-02T09:00:07Z")


def test_every_update_of_an_event_is_one_occurrence_and_never_a_duplicate():
    updates = []
    for n in range(1, 4):
        o = copy.deepcopy(KUBELET)
        o["count"], o["lastTimestamp"] = n, f"2026-03-02T09:0{n}:00Z"
        updates.append(o)
    recs, skips = count_skips(decode_event_stream(lines_of(*updates)))
    assert sorted(r.count for r in recs) == [1, 2, 3]
    assert skips == {}


def test_occurrence_id_does_not_depend_on_resource_version():
    other = copy.deepcopy(CORE)
    other["metadata"]["resourceVersion"] = "99999"
    assert decode_one(CORE)[0].id == decode_one(other)[0].id


def test_reading_the_same_stream_twice_gives_the_same_ids():
    text = (GANG / "a_image_pull_backoff" / "events.ndjson").read_text().splitlines()
    first = [r.id for r in decode_event_stream(text) if isinstance(r, EventRecord)]
    second = [r.id for r in decode_event_stream(text) if isinstance(r, EventRecord)]
    assert first == second and len(first) == len(set(first)) > 100


def test_the_same_occurrence_delivered_twice_is_a_counted_duplicate():
    recs, skips = count_skips(decode_event_stream(lines_of(CORE, CORE)))
    assert len(recs) == 1 and skips == {"duplicate": 1}


def test_event_without_metadata_still_gets_a_content_id():
    bare = {k: v for k, v in CORE.items() if k != "metadata"}
    assert decode_one(bare)[0].id == decode_one(copy.deepcopy(bare))[0].id


def test_informer_event_without_kind_is_recognized_by_its_shape():
    bare = {k: v for k, v in CORE.items() if k not in ("kind", "apiVersion")}
    assert isinstance(decode_one(bare)[0], EventRecord)


# ----------------------------------------------------------------------------- wrappers and documents


def test_eventrouter_wrapper_is_unwrapped():
    [r] = decode_one({"verb": "UPDATED", "event": CORE, "old_event": CORE})
    assert r.reason == "EvictedDueToPodsReadyTimeout"


def test_watch_wrapper_is_unwrapped_and_bookmarks_are_skipped():
    out = list(decode_event_stream(lines_of({"type": "MODIFIED", "object": NEW},
                                            {"type": "BOOKMARK", "object": {"kind": "Event"}})))
    assert [type(x).__name__ for x in out] == ["EventRecord", "EventRecord", "Skip"]
    assert out[-1].reason == "bookmark"


def test_kubectl_list_items_are_decoded():
    recs, skips = count_skips(decode_object({"apiVersion": "v1", "kind": "List", "items": [CORE, NEW]}))
    assert len(recs) == 3 and skips == {}


def test_pretty_printed_documents_one_after_another_are_decoded():
    text = json.dumps(CORE, indent=4) + "\n" + json.dumps(NEW, indent=2) + "\n"
    recs, skips = count_skips(decode_event_stream(text.splitlines(True)))
    assert [r.reason for r in recs] == ["EvictedDueToPodsReadyTimeout", "FailedScheduling", "FailedScheduling"]
    assert skips == {}


def test_a_broken_document_is_skipped_and_the_next_one_is_read():
    text = '{\n  "kind": "Event", "broken": \n' + json.dumps(CORE) + "\n"
    recs, skips = count_skips(decode_event_stream(text.splitlines(True)))
    assert [r.reason for r in recs] == ["EvictedDueToPodsReadyTimeout"]
    assert skips.get("bad_json", 0) >= 1


# ----------------------------------------------------------------------------- times


def test_times_are_normalized_to_utc_with_their_fraction():
    assert normalize_time("2019-05-07T18:57:50.904275087+02:00") == "2019-05-07T16:57:50.904275087Z"
    assert normalize_time("2026-03-02T09:00:00.000000Z") == "2026-03-02T09:00:00Z"


def test_go_zero_time_counts_as_absent():
    assert normalize_time("0001-01-01T00:00:00Z") is None


# ----------------------------------------------------------------------------- malformed input


@pytest.mark.parametrize("change, reason", [
    ({"reason": None}, "missing_field"),
    ({"involvedObject": None}, "missing_field"),
    ({"involvedObject": "not-a-reference"}, "wrong_type"),
    ({"count": "3"}, "wrong_type"),
    ({"lastTimestamp": "2026-13-45T99:00:00Z", "count": 2}, "bad_timestamp"),
    ({"firstTimestamp": "yesterday"}, "bad_timestamp"),
    ({"firstTimestamp": None, "lastTimestamp": None}, "missing_field"),
    ({"kind": "ConfigMap"}, "unknown_kind"),
])
def test_a_malformed_event_is_a_skip_with_its_reason(change, reason):
    obj = copy.deepcopy(CORE)
    for k, v in change.items():
        if v is None:
            obj.pop(k)
        else:
            obj[k] = v
    [skip] = decode_one(obj)
    assert isinstance(skip, Skip) and skip.reason == reason


def test_lines_that_are_not_json_objects_are_skipped():
    recs, skips = count_skips(decode_event_stream(lines_of(CORE, "not json", "[1, 2]", '"text"')))
    assert len(recs) == 1 and skips == {"bad_json": 1, "not_an_object": 3}


def test_malformed_fixture_skips_are_counted_by_reason():
    manifest = json.loads((GANG / "malformed" / "manifest.json").read_text())
    text = (GANG / "malformed" / "events.ndjson").read_text().splitlines()
    recs, skips = count_skips(decode_event_stream(text))
    assert skips == manifest["skips"]
    assert len({r.details["uid"] for r in recs if r.details.get("from") == "event"}) == manifest["valid_records"]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["kind", "apiVersion", "metadata", "involvedObject", "regarding", "reason", "message",
                         "count", "series", "firstTimestamp", "lastTimestamp", "eventTime", "status", "spec",
                         "conditions", "items", "type", "object", "event", "verb", "name", "uid", "namespace"]),
        inner, max_size=6),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_any_json_value_decodes_to_records_and_skips_without_raising(value):
    for item in decode_object(value):
        assert isinstance(item, (EventRecord, Skip))


# ----------------------------------------------------------------------------- Workloads and Pods


def workloads(name: str) -> list:
    return list(decode_event_stream((GANG / name / "workloads.json").read_text().splitlines(True)))


def test_workload_object_gives_one_record_per_condition():
    recs = [r for r in workloads("f_deactivated") if r.type == "Condition"]
    assert {r.details["condition"]["type"] for r in recs} == {"QuotaReserved", "Admitted", "Evicted", "Requeued", "PodsReady"}
    evicted = next(r for r in recs if r.details["condition"]["type"] == "Evicted")
    assert evicted.reason == "DeactivatedDueToRequeuingLimitExceeded"
    assert evicted.details["condition"] == {
        "type": "Evicted", "status": "True", "reason": "DeactivatedDueToRequeuingLimitExceeded",
        "message": "The workload is deactivated due to exceeding the maximum number of re-queuing retries"}


def test_workload_summary_has_pod_sets_owner_and_eviction_stats():
    w = workloads("f_deactivated")[0].details["workload"]
    assert w["pod_sets"] == [{"name": "main", "count": 2, "accelerators": {"nvidia.com/gpu": 8.0}}]
    assert w["owner"]["name"] == "resnet-ddp"
    assert {(e["reason"], e["underlyingCause"], e["count"]) for e in w["evictions"]} == {
        ("PodsReadyTimeout", "WaitForStart", 5), ("Deactivated", "RequeuingLimitExceeded", 1)}


def test_requeue_state_is_read_from_the_workload():
    obj = {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Workload", "metadata": {"name": "w", "namespace": "n"},
           "status": {"requeueState": {"count": 4, "requeueAt": "2024-02-11T04:51:03Z"}}}
    assert workload_summary(obj)["requeue_state"] == {"count": 4, "requeueAt": "2024-02-11T04:51:03Z"}


def test_a_workload_watch_repeats_conditions_without_duplicates():
    recs, skips = count_skips(workloads("g_block_admission"))
    conds = [(r.details["condition"]["type"], r.details["condition"]["status"]) for r in recs if r.type == "Condition"]
    assert sorted(conds) == [("Admitted", "True"), ("PodsReady", "True"), ("QuotaReserved", "False"),
                             ("QuotaReserved", "True")]
    assert skips == {}


def test_a_condition_without_transition_time_is_skipped_not_recorded():
    obj = {"kind": "Workload", "metadata": {"name": "w", "namespace": "n"},
           "status": {"conditions": [{"type": "Admitted", "status": "True", "reason": "Admitted"}]}}
    [skip] = decode_one(obj)
    assert isinstance(skip, Skip) and skip.reason == "missing_field"


def pods(name: str) -> list[EventRecord]:
    return [r for r in decode_event_stream((GANG / name / "pods.json").read_text().splitlines(True))
            if isinstance(r, EventRecord)]


def test_pod_object_gives_its_identity_node_and_accelerators():
    created = [r for r in pods("c_rendezvous_timeout") if r.reason == "Created"]
    assert len(created) == 2
    info = created[0].details["pod"]
    assert info["node"] == "gpu-c1" and info["accelerators"] == {"nvidia.com/gpu": 8.0}
    assert info["labels"]["jobset.sigs.k8s.io/jobset-name"] == "gpt-neox"


def test_pod_object_container_states_become_records():
    states = {(r.pod[-5:], r.reason, r.details["container_state"]["exit_code"]) for r in pods("c_rendezvous_timeout")
              if r.type == "ContainerStatus"}
    assert {s[1:] for s in states} == {("Error", 1), ("CrashLoopBackOff", None)}


def test_a_termination_keeps_its_id_when_it_moves_to_last_state():
    term = {"exitCode": 137, "reason": "OOMKilled", "startedAt": "2026-01-01T00:00:00Z", "finishedAt": "2026-01-01T00:05:00Z"}
    def pod(status: dict) -> dict:
        return {"kind": "Pod", "metadata": {"name": "p", "namespace": "n", "uid": "u", "creationTimestamp": "2026-01-01T00:00:00Z"},
                "spec": {}, "status": {"containerStatuses": [{"name": "c", **status}]}}
    now = [r for r in decode_one(pod({"restartCount": 0, "state": {"terminated": term}})) if r.type == "ContainerStatus"]
    later = [r for r in decode_one(pod({"restartCount": 1, "state": {"running": {}}, "lastState": {"terminated": term}}))
             if r.type == "ContainerStatus"]
    assert [r.id for r in now] == [r.id for r in later] and now[0].reason == "OOMKilled"


def test_accelerators_count_requests_else_limits_per_container():
    spec = {"containers": [{"resources": {"requests": {"nvidia.com/gpu": "4"}}},
                           {"resources": {"limits": {"nvidia.com/gpu": 2, "cpu": "8"}}}]}
    assert pod_accelerators(spec) == {"nvidia.com/gpu": 6.0}
