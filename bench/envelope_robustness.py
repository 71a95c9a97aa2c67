"""Does gangscope read a log the same when a Kubernetes user's tool put its head on every line? [h26c]

    python -m bench.envelope_robustness                       # fixtures/eval/dev, every form
    python -m bench.envelope_robustness --folder /work/shared/eval/diagnosis-dev --json
    python -m bench.envelope_robustness --folder fixtures/eval/heldout --totals-only

Each `NNN.log` of a folder (its ids from `labels.json`) is diagnosed as it is (`plain`), then wrapped
line by line in each form below, written to a temporary file and diagnosed again, each in its own
process as bench/score_eval runs it (`gangscope diagnose FILE --json`, the first diagnosis that is
not success/running). Per form: how many wrapped logs keep the plain log's category, and its
first-failing rank where the plain answer names one; and how many are right against the label,
beside the plain log's own count. The forms, with the source that prints each head
(parsers/envelopes.py cites them in full):

- kubectl-ts:  `kubectl logs --timestamps`: kubelet's `2006-01-02T15:04:05.000000000Z07:00` and a space
               (kubernetes/kubernetes pkg/kubelet/kuberuntime/logs/logs.go timeFormatOut)
- kubectl-prefix: `kubectl logs --prefix`: `[pod/<pod>/<container>] ` (kubernetes/kubectl pkg/cmd/logs/logs.go)
- kubectl-prefix-ts: both (`--prefix --timestamps`: the prefix, then the kubelet's time)
- stern:       `<pod> <container> <line>` (stern/stern cmd/cmd.go, default template, no colour)
- loki:        logcli's default `<RFC 3339> {labels} <line>`, the line trimmed (grafana/loki pkg/logcli/output/default.go),
               oldest first as `logcli query --forward` prints it
- gcp:         a Cloud Logging LogEntry a line: textPayload, timestamp, resource.labels (pod_name, container_name,
               namespace_name), logName .../stderr (google/logging/v2/log_entry.proto)

[h27d] (parsers/envelopes.py block [h27d], pipeline/sources/files.py; fixtures/envelopes_h27d/README.md):
- aws-tail:    `aws logs tail`: `<isoformat(timespec='microseconds')> <stream> <message>` (aws/aws-cli
               awscli/customizations/logs/tail.py), the stream Fluent Bit's tag of the kubelet's file
- stern-ns:    `stern -A`: `<namespace> <pod> <container> <line>` (stern/stern cmd/cmd.go)
- stern-json:  `stern -o json`: stern's Log as JSON (stern/stern stern/log.go)
- argo:        `argo logs`: `<pod>: <line>` (argoproj/argo-workflows cmd/argo/commands/common/logs.go)
- journal:     `journalctl -o short-iso`: `<time> <host> <identifier>[<pid>]: <line>` (systemd src/shared/logs-show.c)
- cloudwatch-json: `aws logs filter-log-events`: one indented document {"events": [...]} (botocore logs service-2.json)
- gcloud-json: `gcloud logging read --format=json --order=asc`: one indented array of LogEntry
- tar-gz:      the log as a CRI file in a tar.gz of /var/log/pods, named by its member's path

[h28e] (parsers/envelopes.py block [h28e], pipeline/sources/files.py; fixtures/envelopes_h28e/README.md):
- vertex:      `gcloud ai custom-jobs stream-logs`: `<SEVERITY>\t<%Y-%m-%d %H:%M:%S %z>\t<task>\t<line>`
               (google-cloud-sdk command_lib/ai/log_util.py LOG_FORMAT)
- aws-short:   `aws logs tail --format short`: `<%Y-%m-%dT%H:%M:%S> <line>` (awscli logs/tail.py ShortLogEventsFormatter)
- k9s:         k9s's saved logs of several pods: `<time> <pod> <container> <line>` (derailed/k9s internal/dao/log_item.go)
- gcloud-yaml: `gcloud logging read` (default YAML): `---` documents of LogEntry (core/resource/yaml_printer.py)
- kibana-csv:  Kibana Discover's CSV: @timestamp, kubernetes.pod.name, kubernetes.container.name, message
- log-analytics-csv: the Azure portal's CSV of ContainerLogV2: TimeGenerated [UTC], ..., PodName, LogMessage
- datadog-json: Datadog's Logs API answer {"data": [{"attributes": {"message", "tags": ["pod_name:..."]}}]}
- grafana-txt / grafana-json: Grafana Explore's "Download logs" (inspector/utils/download.ts, logs/utils.ts)
- aws-tail-json: `aws logs tail --format json`: the head, then a Fluent Bit record pretty-printed (indent 4)
--ids A,B,...  measures a subset of a folder.

Times are made up, 10 ms apart from 2024-05-01T10:00:00Z, so that no gap between lines means anything.
--totals-only prints the totals alone (for a held-out folder, whose logs are not to be read).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone
from pathlib import Path

from bench.score_eval import Answer, gangscope_answer

POD, CONTAINER, NAMESPACE = "trainer-worker-0", "pytorch", "team-a"
_BASE = datetime(2024, 5, 1, 10, 0, 0, tzinfo=timezone.utc)


def _time(k: int, digits: int) -> str:
    t = _BASE + timedelta(milliseconds=10 * k)
    head = t.strftime("%Y-%m-%dT%H:%M:%S")
    if digits == 0:
        return head + "Z"
    return f"{head}.{t.microsecond * 1000:09d}"[: 20 + digits] + "Z"


def _kubectl_ts(k: int, line: str) -> str:
    return f"{_time(k, 9)} {line}"


def _kubectl_prefix(k: int, line: str) -> str:
    return f"[pod/{POD}/{CONTAINER}] {line}"


def _kubectl_prefix_ts(k: int, line: str) -> str:
    return f"[pod/{POD}/{CONTAINER}] {_time(k, 9)} {line}"


def _stern(k: int, line: str) -> str:
    return f"{POD} {CONTAINER} {line}"


def _loki(k: int, line: str) -> str:
    labels = f'{{container="{CONTAINER}", namespace="{NAMESPACE}", pod="{POD}"}}'
    return f"{_time(k, 0)} {labels} {line.strip()}"


def _gcp(k: int, line: str) -> str:
    return json.dumps({
        "insertId": f"{k:016x}", "textPayload": line, "timestamp": _time(k, 9), "severity": "ERROR",
        "resource": {"type": "k8s_container", "labels": {"project_id": "proj", "location": "us-central1",
                     "cluster_name": "gpu", "namespace_name": NAMESPACE, "pod_name": POD, "container_name": CONTAINER}},
        "labels": {"k8s-pod/app": "trainer", "compute.googleapis.com/resource_name": "gke-gpu-node-1"},
        "logName": "projects/proj/logs/stderr", "receiveTimestamp": _time(k + 1, 9)})


FORMS = {"kubectl-ts": _kubectl_ts, "kubectl-prefix": _kubectl_prefix, "kubectl-prefix-ts": _kubectl_prefix_ts,
         "stern": _stern, "loki": _loki, "gcp": _gcp}


# [h27d] The forms of issue 16's second part (parsers/envelopes.py block [h27d], pipeline/sources/files.py), each
# with the source that prints it (fixtures/envelopes_h27d/README.md cites them in full).
NODE, CID = "ip-10-3-7-21.ec2.internal", "5f0c" * 16
STREAM = f"{NODE}-application.var.log.containers.{POD}_{NAMESPACE}_{CONTAINER}-{CID}.log"


def _aws_tail(k: int, line: str) -> str:
    # awscli customizations/logs/tail.py DetailedLogEventsFormatter: isoformat(timespec='microseconds'), the stream,
    # the message, `rstrip()`ped
    t = (_BASE + timedelta(milliseconds=10 * k)).isoformat(timespec="microseconds")
    return f"{t} {STREAM} {line}".rstrip()


def _stern_ns(k: int, line: str) -> str:
    return f"{NAMESPACE} {POD} {CONTAINER} {line}"  # stern -A: "{{color .PodColor .Namespace}} " + the default


def _stern_json(k: int, line: str) -> str:
    return json.dumps({"message": line, "nodeName": NODE, "namespace": NAMESPACE, "podName": POD,  # stern -o json
                       "containerName": CONTAINER, "labels": {"app": "trainer"}, "annotations": {}}, separators=(",", ":"))


def _argo(k: int, line: str) -> str:
    return f"trainer-wf-x7kq2-train-2915367441: {line}"  # argo logs: fmt.Sprintf("%s: %s", event.PodName, event.Content)


def _journal(k: int, line: str) -> str:
    # journalctl -o short-iso (systemd logs-show.c output_short: "%Y-%m-%dT%H:%M:%S%z", host, identifier[pid], ": ")
    t = (_BASE + timedelta(milliseconds=10 * k)).strftime("%Y-%m-%dT%H:%M:%S%z")
    return f"{t} gpu-node-7 torchrun[48213]: {line}"


def _cloudwatch_json(lines: list[str]) -> bytes:
    # aws logs filter-log-events: {"events": [FilteredLogEvent...]} printed with indent 4
    start = int(_BASE.timestamp() * 1000)
    events = [{"logStreamName": STREAM, "timestamp": start + 10 * k, "message": line, "ingestionTime": start + 10 * k + 400,
               "eventId": f"{k:056d}"} for k, line in enumerate(lines)]
    return (json.dumps({"events": events, "searchedLogStreams": []}, indent=4) + "\n").encode()


def _gcloud_json(lines: list[str]) -> bytes:
    # gcloud logging read --format=json --order=asc: one indented array of LogEntry
    return (json.dumps([json.loads(_gcp(k, line)) for k, line in enumerate(lines)], indent=2) + "\n").encode()


def _tar_gz(lines: list[str]) -> bytes:
    # tar czf of /var/log/pods: the log a CRI file of its pod's container, its pod named by the member's path
    import io
    import tarfile

    data = "".join(f"{_time(k, 9)} stderr F {line}\n" for k, line in enumerate(lines)).encode("utf-8", "surrogateescape")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        info = tarfile.TarInfo(f"var/log/pods/{NAMESPACE}_{POD}_7d3e2a10-5b1c-4e0f-9a8b-2c4d6e8f0a1b/{CONTAINER}/0.log")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


FORMS.update({"aws-tail": _aws_tail, "stern-ns": _stern_ns, "stern-json": _stern_json, "argo": _argo, "journal": _journal})
FILE_FORMS = {"cloudwatch-json": (".json", _cloudwatch_json), "gcloud-json": (".json", _gcloud_json),
              "tar-gz": (".tar.gz", _tar_gz)}  # a whole file each: (its name's suffix, lines -> bytes)


# [h28e] The forms of issue 16's third part (parsers/envelopes.py block [h28e], pipeline/sources/files.py), each with the
# source that prints it (fixtures/envelopes_h28e/README.md cites them in full).
def _vertex(k: int, line: str) -> str:
    # gcloud ai custom-jobs stream-logs: value(severity, timestamp.date("%Y-%m-%d %H:%M:%S %z"), task_name, message)
    t = (_BASE + timedelta(milliseconds=10 * k)).strftime("%Y-%m-%d %H:%M:%S %z")
    return f"INFO\t{t}\tworkerpool0-0\t{line}"


def _aws_short(k: int, line: str) -> str:
    # aws logs tail --format short: '%s %s' % (strftime("%Y-%m-%dT%H:%M:%S"), message), rstrip()ped
    return f"{(_BASE + timedelta(milliseconds=10 * k)).strftime('%Y-%m-%dT%H:%M:%S')} {line}".rstrip()


def _k9s(k: int, line: str) -> str:
    return f"{_time(k, 9)} {POD} {CONTAINER} {line}"  # k9s's saved view of several pods, timestamps shown


def _gcloud_yaml(lines: list[str]) -> bytes:
    # gcloud logging read: YamlPrinter, `---` before each entry, block style, a string with a newline literal
    import yaml

    return "".join(yaml.safe_dump(json.loads(_gcp(k, line)), explicit_start=True, default_flow_style=False,
                                  allow_unicode=True) for k, line in enumerate(lines)).encode("utf-8", "surrogateescape")


def _csv(header: list[str], rows: list[list[str]], terminator: str = "\n") -> bytes:
    import csv
    import io

    out = io.StringIO()
    writer = csv.writer(out, lineterminator=terminator)
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue().encode("utf-8", "surrogateescape")


def _kibana_csv(lines: list[str]) -> bytes:
    # Kibana Discover's CSV: the columns shown, RFC 4180 quoting, formula cells led by `'`, the default date format
    def cell(line: str) -> str:
        return "'" + line if line[:1] in ("=", "+", "-", "@", "\t", "\r") else line
    rows = [[(_BASE + timedelta(milliseconds=10 * k)).strftime("%b %d, %Y @ %H:%M:%S.%f")[:-3], POD, CONTAINER, cell(line)]
            for k, line in enumerate(lines)]
    return _csv(["@timestamp", "kubernetes.pod.name", "kubernetes.container.name", "message"], rows)


def _log_analytics_csv(lines: list[str]) -> bytes:
    # the Azure portal's CSV export of a ContainerLogV2 query
    rows = [[_time(k, 3), "aks-gpu-1", CONTAINER, POD, NAMESPACE, line, "stdout"] for k, line in enumerate(lines)]
    return _csv(["TimeGenerated [UTC]", "Computer", "ContainerName", "PodName", "PodNamespace", "LogMessage", "LogSource"],
                rows, "\r\n")


def _datadog_json(lines: list[str]) -> bytes:
    # Datadog's Logs API answer (GET /api/v2/logs/events), one line
    data = [{"id": f"AQ{k:020d}", "type": "log", "attributes": {
        "timestamp": _time(k, 3), "host": "gpu-node-1", "service": "trainer", "status": "info", "message": line,
        "tags": [f"pod_name:{POD}", f"kube_container_name:{CONTAINER}", f"kube_namespace:{NAMESPACE}"]}}
        for k, line in enumerate(lines)]
    return (json.dumps({"data": data, "links": {}, "meta": {"page": {}}}) + "\n").encode("utf-8", "surrogateescape")


def _grafana_txt(lines: list[str]) -> bytes:
    # Grafana Explore's "Download logs" (txt): meta items, two blank lines, `<ms>\t<ISO>\t<entry>` a row
    start = int(_BASE.timestamp() * 1000)
    head = f'Common labels: {{"container":"{CONTAINER}","namespace":"{NAMESPACE}","pod":"{POD}"}}\n\n\n'
    return (head + "".join(f"{start + 10 * k}\t{_time(k, 3)}\t{line}\n" for k, line in enumerate(lines))).encode(
        "utf-8", "surrogateescape")


def _grafana_json(lines: list[str]) -> bytes:
    # Grafana Explore's "Download logs" (json): logRowsToReadableJson, JSON.stringify on one line
    start = int(_BASE.timestamp() * 1000)
    rows = [{"line": line, "timestamp": str((start + 10 * k) * 1000000),
             "fields": {"container": CONTAINER, "namespace": NAMESPACE, "pod": POD}} for k, line in enumerate(lines)]
    return (json.dumps(rows, separators=(",", ":")) + "\n").encode("utf-8", "surrogateescape")


def _aws_tail_json(lines: list[str]) -> bytes:
    # aws logs tail --format json: the head, then a JSON message (a Container Insights record) with indent 4
    out = []
    for k, line in enumerate(lines):
        record = {"log": line + "\n", "stream": "stdout", "time": _time(k, 9),
                  "kubernetes": {"pod_name": POD, "namespace_name": NAMESPACE, "container_name": CONTAINER}}
        t = (_BASE + timedelta(milliseconds=10 * k)).isoformat()
        out.append(f"{t} {STREAM} \n{json.dumps(record, indent=4)}".rstrip() + "\n")
    return "".join(out).encode("utf-8", "surrogateescape")


FORMS.update({"vertex": _vertex, "aws-short": _aws_short, "k9s": _k9s})
FILE_FORMS.update({"gcloud-yaml": (".yaml", _gcloud_yaml), "kibana-csv": (".csv", _kibana_csv),
                   "log-analytics-csv": (".csv", _log_analytics_csv), "datadog-json": (".json", _datadog_json),
                   "grafana-txt": (".txt", _grafana_txt), "grafana-json": (".json", _grafana_json),
                   "aws-tail-json": (".log", _aws_tail_json)})


def wrap(text: str, form: str) -> str:
    """The log as the form's tool prints it: every line with its head (a last line ended by a newline adds none)."""
    lines = text.split("\n")
    end = ""
    if lines and lines[-1] == "":
        lines.pop()
        end = "\n"
    make = FORMS[form]
    return "\n".join(make(k, line) for k, line in enumerate(lines)) + end


def wrap_file(text: str, form: str) -> tuple[str, bytes]:
    """[h27d] The log as the form's file: its name's suffix and its bytes."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    suffix, make = FILE_FORMS[form]
    return suffix, make(lines)


def _same(a: Answer, b: Answer) -> tuple[bool, bool | None]:
    return a.category == b.category, (None if b.rank is None else a.rank == b.rank)


def run(folder: Path, forms: list[str], command: list[str], workers: int, timeout: float, ids: list[str] | None = None) -> dict:
    labels = json.loads((folder / "labels.json").read_text())
    if ids is not None:  # [h27d] a subset
        labels = [label for label in labels if str(label["id"]) in ids]
    per_file: dict[str, dict[str, Answer]] = {}
    with tempfile.TemporaryDirectory(prefix="gangscope-envelopes-") as tmp:
        def one(label: dict) -> tuple[str, dict[str, Answer]]:
            ident = str(label["id"])
            path = folder / f"{ident}.log"
            text = path.read_text(encoding="utf-8", errors="surrogateescape")
            answers = {"plain": gangscope_answer(path, command, timeout)}
            for form in forms:
                if form in FILE_FORMS:  # [h27d]
                    suffix, data = wrap_file(text, form)
                    wrapped = Path(tmp) / form / f"{ident}{suffix}"
                    wrapped.write_bytes(data)
                    answers[form] = gangscope_answer(wrapped, command, timeout)
                    wrapped.unlink()
                    continue
                wrapped = Path(tmp) / form / f"{ident}.log"
                wrapped.parent.mkdir(exist_ok=True)
                wrapped.write_text(wrap(text, form), encoding="utf-8", errors="surrogateescape")
                answers[form] = gangscope_answer(wrapped, command, timeout)
                wrapped.unlink()
            return ident, answers

        for form in forms:
            (Path(tmp) / form).mkdir()
        with ThreadPoolExecutor(max_workers=workers) as pool:
            per_file = dict(pool.map(one, labels))
    by_id = {str(label["id"]): label for label in labels}
    totals = {}
    for form in ["plain", *forms]:
        t = {"files": len(per_file), "keep_category": 0, "plain_ranked": 0, "keep_rank": 0, "right_category": 0,
             "ranked": 0, "right_rank": 0, "changed": []}
        for ident, answers in per_file.items():
            a, plain, label = answers[form], answers["plain"], by_id[ident]
            cat, rank = _same(a, plain)
            t["keep_category"] += cat
            if rank is not None:
                t["plain_ranked"] += 1
                t["keep_rank"] += rank
            t["right_category"] += a.category == label.get("category")
            if label.get("first_failing_rank") is not None:
                t["ranked"] += 1
                t["right_rank"] += a.rank == label.get("first_failing_rank")
            if not cat or rank is False:
                t["changed"].append(f"{ident}: {plain.category}/{plain.rank} -> {a.category or a.problem}/{a.rank}")
        totals[form] = t
    return totals


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, action="append",
                        help="an eval folder (NNN.log + labels.json); repeatable; default fixtures/eval/dev")
    parser.add_argument("--forms", default=",".join([*FORMS, *FILE_FORMS]),
                        help="comma-separated forms (default: all): " + ", ".join([*FORMS, *FILE_FORMS]))
    parser.add_argument("--gangscope", default=None, help="the command to run (default: this Python's gangscope)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--ids", default=None, help="[h27d] comma-separated ids: only these logs of the folder (a subset)")
    parser.add_argument("--json", action="store_true", help="totals (and the files whose answer changed) as JSON")
    parser.add_argument("--totals-only", action="store_true", help="no file ids (a held-out folder)")
    args = parser.parse_args(argv)
    forms = [f for f in args.forms.split(",") if f]
    unknown = [f for f in forms if f not in FORMS and f not in FILE_FORMS]
    if unknown:
        parser.error(f"unknown form(s) {', '.join(unknown)}; known: {', '.join([*FORMS, *FILE_FORMS])}")
    command = args.gangscope.split() if args.gangscope else [sys.executable, "-m", "gangscope"]
    out = {}
    for folder in args.folder or [Path("fixtures/eval/dev")]:
        if not (folder / "labels.json").is_file():
            print(f"envelope_robustness: no labels.json in {folder}", file=sys.stderr)
            return 2
        totals = run(folder, forms, command, args.workers, args.timeout, args.ids.split(",") if args.ids else None)
        if args.totals_only:
            for t in totals.values():
                t.pop("changed")
        out[str(folder)] = totals
        if not args.json:
            print(f"{folder}")
            for form, t in totals.items():
                print(f"  {form:18} keeps category {t['keep_category']:3}/{t['files']}  rank {t['keep_rank']:3}/{t['plain_ranked']}"
                      f"   right: category {t['right_category']:3}/{t['files']}  rank {t['right_rank']:3}/{t['ranked']}")
                for line in t.get("changed", [])[:40] if form != "plain" else []:
                    print(f"      {line}")
    if args.json:
        json.dump(out, sys.stdout, indent=1)
        print()
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
