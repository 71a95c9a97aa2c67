"""Envelope decoders: the wrapping a container runtime or shipper puts around a log line.

Each decoder takes one raw line (without its newline) and returns an `Envelope`
or None when the line is not of that format. Formats (FORMATS.md section 1):

- cri: `<RFC3339Nano> <stdout|stderr> <P|F>[:tags] <content>` (kubelet / containerd / CRI-O;
  k8s.io/cri-api constants.go, containerd internal/cri/io/logger.go). `P` chunks are joined
  with the next `F` of the same stream by the caller (`PartialJoiner`).
- docker: json-file `{"log": "...\n", "stream": "stdout", "time": "..."}`; a `log` without
  a trailing newline is a partial chunk (fluent-bit flb_ml_parser_docker.c).
- fluentbit: a JSON record as Fluent Bit's outputs write it: `log` (or `message`), `stream`,
  `time` (string) or `@timestamp` (epoch seconds, out_kafka default), optional `_p`, and the
  `kubernetes` block of filter_kubernetes.
- text: anything else; one line, no time.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

import msgspec

from gangscope.parsers import json_logs, times


class Envelope(NamedTuple):
    time: str | None
    stream: str
    partial: bool
    text: str
    kubernetes: dict[str, Any] | None = None


FORMATS = ("cri", "docker", "fluentbit", "text")

_CRI_HEAD = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d) (?:stdout|stderr) [A-Z](?::[A-Z])* ")


def decode_cri(raw: str) -> Envelope | None:
    parts = raw.split(" ", 3)
    if len(parts) < 3:
        return None
    ts, stream, tag = parts[0], parts[1], parts[2]
    if stream != "stdout" and stream != "stderr":
        return None
    if not ts[:4].isdigit() or len(ts) < 20 or ts[10] != "T":
        return None
    return Envelope(ts, stream, tag[:1] == "P", parts[3] if len(parts) == 4 else "")  # the tag may be empty (fuzzing)


_json_decoder = msgspec.json.Decoder()


def _json_object(raw: str) -> dict[str, Any] | None:
    if not raw.startswith("{"):
        return None
    try:
        obj = _json_decoder.decode(raw)
    except (msgspec.DecodeError, RecursionError):  # deep nesting raises RecursionError (fuzzing, issue 10)
        return None
    return obj if isinstance(obj, dict) else None


def decode_docker(raw: str) -> Envelope | None:
    obj = _json_object(raw)
    if obj is None:
        return None
    log, stream, ts = obj.get("log"), obj.get("stream"), obj.get("time")
    if not isinstance(log, str) or not isinstance(ts, str):
        return None
    if log.endswith("\n"):
        text, partial = log[:-1], False
        if text.endswith("\r"):
            text = text[:-1]
    else:
        text, partial = log, True
    return Envelope(ts, stream if stream in ("stdout", "stderr") else "stdout", partial, text)


class Rejected(NamedTuple):
    """A record of the format whose fields have the wrong type: counted as a skip of `kind`
    (`wrong_type`), `detail` naming the field; never an envelope."""

    kind: str
    detail: str


# filter_kubernetes' block (FORMATS.md 1.4): the fields that name a container are strings, labels
# and annotations objects of strings. Anything else in them would key or name a pod wrongly.
KUBERNETES_TEXT_FIELDS = ("namespace_name", "pod_name", "pod_id", "container_name", "host")
KUBERNETES_MAP_FIELDS = ("labels", "annotations")


def kubernetes_problem(kube: Any) -> str | None:
    """What is wrong with a Fluent Bit `kubernetes` block (`kubernetes.pod_name is a JSON list`),
    or None when every field it is read for has its type. The one check of the block."""
    if type(kube) is not dict:
        return f"kubernetes is a JSON {_json_type(kube)}, not an object"
    for name in KUBERNETES_TEXT_FIELDS:
        v = kube.get(name)
        if v is not None and type(v) is not str:
            return f"kubernetes.{name} is a JSON {_json_type(v)}, not a string"
    for name in KUBERNETES_MAP_FIELDS:
        v = kube.get(name)
        if v is None:
            continue
        if type(v) is not dict:
            return f"kubernetes.{name} is a JSON {_json_type(v)}, not an object"
        for key, value in v.items():
            if type(value) is not str:
                return f"kubernetes.{name}[{_start_of(key)!r}] is a JSON {_json_type(value)}, not a string"
    return None


_WORD = r"[A-Za-z0-9_+/=-]+"  # the characters of a token's body (base64, base62, hex)


def _start_of(name: str, chars: int = 40) -> str:
    """A name cut to `chars` for a message, never inside a word: a token cut short is no longer
    one the redactor recognises, so its start would be shown (`eyJhbGci...` of a JWT)."""
    if len(name) <= chars:
        return name
    cut = name[:chars]
    if re.fullmatch(_WORD, name[chars - 1:chars + 1]):
        cut = re.sub(_WORD + "$", "", cut)
    return cut + "..."


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", list: "list", dict: "object"}.get(type(value), type(value).__name__)


def decode_fluentbit(raw: str) -> Envelope | None:
    """A Fluent Bit line as an envelope; None when it is not one, or its fields have the wrong
    type (`read_fluentbit` says which)."""
    env = read_fluentbit(raw)
    return env if type(env) is Envelope else None


def read_fluentbit(raw: str) -> Envelope | Rejected | None:
    """A Fluent Bit line: its envelope, `Rejected` when a field has the wrong type, None when
    it is no JSON object with log text."""
    obj = _json_object(raw)
    if obj is None:
        return None
    return read_record(obj)


def envelope_from_record(obj: dict[str, Any]) -> Envelope | None:
    """A Fluent Bit record (already parsed JSON) as an envelope; None if it carries no log text
    or a field of the wrong type (`read_record` says which)."""
    env = read_record(obj)
    return env if type(env) is Envelope else None


def read_record(obj: dict[str, Any]) -> Envelope | Rejected | None:
    """A Fluent Bit record (already parsed JSON) as an envelope; `Rejected` when a field it is
    read for has the wrong type (the `kubernetes` block, `stream`, `_p`), None when it carries
    no log text. The one reading of the record's fields."""
    if TABLE_ROW in obj:  # [h28e] a row of a CSV export: its columns named as the exporting tool names them
        return table_row(obj)
    text = obj.get("log")
    if not isinstance(text, str):
        # No `log`: an application's JSON log line is the record (a file of such lines, or Fluent Bit's
        # Merge_Log with Keep_Log Off lifting its fields into the record). A traceback it carries in a field
        # of its own (python-json-logger's `exc_info`, structlog's `exception`, ...) follows its message
        # (parsers/json_logs.py). With `log` kept, the JSON line itself is the text and is read there.
        text = json_logs.failure_text(obj)
        if text is None:
            text = obj.get("message")
            if not isinstance(text, str):
                return log_store_entry(obj)  # [h26c] a Cloud Logging or logcli record, or None
    partial = obj.get("_p") == "P"
    if text.endswith("\n"):
        text = text[:-1]
        if text.endswith("\r"):
            text = text[:-1]
    ts = obj.get("time")
    if not isinstance(ts, str):
        ts = obj.get("@timestamp", obj.get("date"))
        ts = ts if isinstance(ts, str) else epoch_to_rfc3339(ts)  # [h27d] Elasticsearch's `@timestamp` is RFC 3339 text
    stream = obj.get("stream")
    kube = obj.get("kubernetes")
    if kube is not None:
        if type(kube) is dict and type(kube.get("pod")) is dict:  # [h27d] Beats' / ECS's block
            kube = ecs_kubernetes(kube)
        problem = kubernetes_problem(kube)
        if problem is not None:
            return Rejected("wrong_type", problem)
    elif "logStreamName" in obj or "podName" in obj or "ingestionTime" in obj or _STERN_EXTJSON.issuperset(obj):  # [h27d]
        return named_record(obj, text, partial, ts)  # CloudWatch's event, stern's json / extjson
    return Envelope(
        ts,
        stream if stream in ("stdout", "stderr") else "stdout",
        partial,
        text,
        kube,
    )


def decode_text(raw: str) -> Envelope:
    return Envelope(None, "stdout", False, raw)


DECODERS = {"cri": decode_cri, "docker": decode_docker, "fluentbit": decode_fluentbit, "text": decode_text}


DETECT_WINDOW = 20  # lines voted on, from the first line of any envelope on


def detect_format(sample: list[str]) -> str:
    """The envelope of a file, from its first lines: the format most of them parse as.

    Lines before the first one of any envelope (a banner a wrapper script printed before the
    runtime's lines) do not vote: the vote is over `DETECT_WINDOW` lines from there on, so 25
    lines of junk before a CRI log leave it CRI (the junk is then counted unreadable). A file
    whose lines are mostly none of them is text."""
    votes = {"cri": 0, "docker": 0, "fluentbit": 0}
    nonempty = 0
    started = False
    for raw in sample:
        fmt = _format_of(raw)
        if not started:
            if fmt is None:
                continue
            started = True
        if raw.strip():
            nonempty += 1
        if fmt is not None:
            votes[fmt] += 1
        if nonempty >= DETECT_WINDOW:
            break
    best = max(votes, key=votes.__getitem__)
    if votes[best] and votes[best] * 2 >= nonempty:
        return best
    return detect_kube_head(sample)  # [h26c] a tool's head on every line, or "text"


def _format_of(raw: str) -> str | None:
    """The envelope one line parses as, None when it is of none (text)."""
    if _CRI_HEAD.match(raw):
        return "cri"
    if raw.startswith(_TABLE_ROW_HEAD):  # [h28e] a CSV export's row, its end perhaps past the sample (a 10 MB cell)
        return "fluentbit"
    obj = _json_object(raw)
    if obj is None:
        return None
    if isinstance(obj.get("kubernetes"), dict) or "@timestamp" in obj or "_p" in obj:
        return "fluentbit"
    if isinstance(obj.get("log"), str) and isinstance(obj.get("time"), str):
        return "docker"
    if isinstance(obj.get("log"), str) or isinstance(obj.get("message"), str):
        return "fluentbit"
    if log_store_entry(obj) is not None:  # [h26c] read as Fluent Bit's records are
        return "fluentbit"
    return None


def epoch_to_rfc3339(value: Any) -> str | None:
    """Fluent Bit's `@timestamp` (epoch seconds) as RFC 3339, six fraction digits; None if not a number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return times.from_seconds(float(value), fixed=True)
    except OverflowError:  # an int too large for a float
        return None


# [h26c] The heads Kubernetes users' log tools put before every line of a container's log, read as
# the plain log is read: the head gives the line its time and, where it names them, its pod and
# container (an envelope's `kubernetes` block, as Fluent Bit's filter_kubernetes gives one: a file
# of several pods' lines is then several containers, FluentBitCurator splitting it as it splits a
# Fluent Bit file). A line of such a file without the head (kubectl's own "error: ..." under
# --ignore-errors, a note pasted in) is read as a plain text line (no time, the file's own pod).
# Tried only where the file is none of the envelopes above (`detect_format`), a file of such heads
# is taken as one only when most lines of its window carry one (near misses: tests/test_h26c_kube_envelopes.py).
#
# Times: kubelet's `timestamps=true` writes `timeFormatOut = "2006-01-02T15:04:05.000000000Z07:00"` then
# a space before each line (kubernetes/kubernetes pkg/kubelet/kuberuntime/logs/logs.go); stern's
# --timestamps and logcli's RFC 3339 (`time.RFC3339`, no fraction) are read by the same pattern.
_H26C_SGR = r"(?:\x1b?\[[0-9;]*m)*"  # a colour code around a name (its ESC lost when copied from a terminal)
_H26C_TIME = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:\d\d)"
_H26C_DNS_NAME = r"[a-z0-9](?:[-a-z0-9.]{0,251}[a-z0-9])?"  # a pod's name (DNS-1123 subdomain)
_H26C_DNS_LABEL = r"[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?"  # a container's name (DNS-1123 label)
# kubectl logs --timestamps (kubectl logs -f deploy/x --timestamps, logcli --no-labels too): "<time> <line>".
_KUBECTL_TIME = re.compile(f"({_H26C_TIME}) ")
# kubectl logs --prefix: "[pod/<pod>/<container>] " before every line (kubernetes/kubectl pkg/cmd/logs/logs.go
# addPrefixIfNeeded: fmt.Sprintf("[pod/%s/%s] ", ref.Name, containerName) through prefixingWriter, one Write
# per line of DefaultConsumeRequest); with --timestamps the kubelet's time follows it. The container name
# is empty when it could not be read from the reference's field path ("[pod/<pod>/] ").
_KUBECTL_PREFIX = re.compile(rf"\[pod/({_H26C_DNS_NAME})/({_H26C_DNS_LABEL}|)\] (?:({_H26C_TIME}) )?")
# stern's default output: "{{color .PodColor .PodName}} {{color .ContainerColor .ContainerName}} {{.Message}}"
# (stern/stern cmd/cmd.go generateTemplate, output "default"; plain with --color never or into a pipe), its
# message led by the kubelet's time with --timestamps. Only a pod name with a "-" (every controller's pod:
# "<owner>-<suffix>") is taken, and `detect_format` wants most lines of a window from few pods.
# --all-namespaces puts the namespace first ("{{color .PodColor .Namespace}} " + ...): not read (a
# namespace, a pod and a container cannot be told from a pod, a container and a message's first word).
_STERN = re.compile(rf"{_H26C_SGR}({_H26C_DNS_NAME}){_H26C_SGR} {_H26C_SGR}({_H26C_DNS_LABEL}){_H26C_SGR} (?:({_H26C_TIME}) )?")
# grafana/loki logcli query's default output: fmt.Fprintf(o.w, "%s %s %s\n", timestamp, padLabel(lbls, maxLabelsLen),
# line) with `line = strings.TrimSpace(line)` (pkg/logcli/output/default.go): the stream's labels as
# loghttp.LabelSet.String() writes them ('{app="x", pod="y"}'), padded with spaces to the widest of the batch.
# The line's own leading blanks were trimmed by logcli, so every blank after the labels is padding.
_LOKI = re.compile(rf"({_H26C_TIME}) (\{{(?:[A-Za-z_][A-Za-z0-9_.]*=\"(?:[^\"\\]|\\.)*\"(?:, )?)*\}}) +")
_LOKI_LABEL = re.compile(r"([A-Za-z_][A-Za-z0-9_.]*)=\"((?:[^\"\\]|\\.)*)\"")
# The labels that name a pod, its container and namespace: promtail's kubernetes_sd relabelling ("pod",
# "container", "namespace"), the OpenTelemetry collector's / Alloy's ("k8s_pod_name", ...), Fluent Bit's names.
_LOKI_POD = ("pod", "k8s_pod_name", "pod_name")
_LOKI_CONTAINER = ("container", "k8s_container_name", "container_name")
_LOKI_NAMESPACE = ("namespace", "k8s_namespace_name", "namespace_name")

KUBE_HEAD_FORMATS = ("kubectl", "kubectl-prefix", "stern", "loki")  # the first one names no pod
POD_HEAD_FORMATS = ("kubectl-prefix", "stern", "loki")  # read as Fluent Bit files are: one curator per container


def _kube_block(pod: str | None, container: str | None, namespace: str | None = None) -> dict[str, Any] | None:
    if not pod:
        return None
    block = {"pod_name": pod}
    if container:
        block["container_name"] = container
    if namespace:
        block["namespace_name"] = namespace
    return block


def decode_kubectl(raw: str) -> Envelope:
    """A line of `kubectl logs --timestamps`: its time taken off; a line without one is plain text."""
    m = _KUBECTL_TIME.match(raw)
    if m is None:
        return decode_text(raw)
    return Envelope(m.group(1), "stdout", False, raw[m.end():])


def decode_kubectl_prefix(raw: str) -> Envelope:
    """A line of `kubectl logs --prefix` (and --timestamps): its pod and container, its time."""
    m = _KUBECTL_PREFIX.match(raw)
    if m is None:
        return decode_text(raw)
    return Envelope(m.group(3), "stdout", False, raw[m.end():], _kube_block(m.group(1), m.group(2)))


def decode_stern(raw: str) -> Envelope:
    """A line of stern's default output: its pod and container, its time when --timestamps."""
    m = _STERN.match(raw)
    if m is None or "-" not in m.group(1):
        return decode_text(raw)
    return Envelope(m.group(3), "stdout", False, raw[m.end():], _kube_block(m.group(1), m.group(2)))


def decode_loki(raw: str) -> Envelope:
    """A line of logcli's default output: its time, and the pod, container, namespace and stream its labels name."""
    m = _LOKI.match(raw)
    if m is None:
        return decode_kubectl(raw)  # logcli --no-labels: "<time> <line>"
    labels = {k: v.replace('\\"', '"').replace("\\\\", "\\") for k, v in _LOKI_LABEL.findall(m.group(2))}

    def first(names: tuple[str, ...]) -> str | None:
        return next((labels[n] for n in names if labels.get(n)), None)

    stream = labels.get("stream")
    return Envelope(m.group(1), stream if stream in ("stdout", "stderr") else "stdout", False, raw[m.end():],
                    _kube_block(first(_LOKI_POD), first(_LOKI_CONTAINER), first(_LOKI_NAMESPACE)))


DECODERS.update({"kubectl": decode_kubectl, "kubectl-prefix": decode_kubectl_prefix, "stern": decode_stern,
                 "loki": decode_loki})
FORMATS = FORMATS[:-1] + KUBE_HEAD_FORMATS + FORMATS[-1:]


def _kube_head_of(raw: str) -> tuple[str, tuple] | None:
    """The tool's head a line starts with (its format, and the pod and container it names), None if none."""
    if raw.startswith("[pod/"):
        m = _KUBECTL_PREFIX.match(raw)
        return ("kubectl-prefix", (m.group(1), m.group(2))) if m else None
    head = _h27d_head_of(raw)  # [h27d] aws logs tail, journalctl, argo logs
    if head is not None:
        return head
    head = _h28e_head_of(raw)  # [h28e] gcloud ai custom-jobs stream-logs, Grafana's download, k9s
    if head is not None:
        return head
    if raw[:1].isdigit():
        if _LOKI.match(raw):
            return "loki", ()
        if _KUBECTL_TIME.match(raw):
            return "kubectl", ()
    m = _STERN.match(raw)
    if m is not None and "-" in m.group(1):
        return "stern", (m.group(1), m.group(2))
    return None


def detect_kube_head(sample: list[str]) -> str:
    """The tool's head most of a text file's first lines carry ("text" when none does): from its first
    line with one on, over `DETECT_WINDOW` non-empty lines, at least half of them. Stern's head (two
    lower-case names) is the weakest: it is taken only from two lines on, when they name one container
    name or few (at most a quarter as many as its lines; the pods may be many), as a stern log of a gang
    does (its pods run the same containers) and a log whose lines begin with two lower-case words does not."""
    sample = join_wrapped_heads(sample)  # the rows of a terminal's copy vote as the lines they were
    votes = {fmt: 0 for fmt in KUBE_HEAD_FORMATS}
    heads: set[tuple] = set()
    argo_pods: set[str] = set()  # [h27d]
    ns_votes, ns_names, ns_containers = 0, set(), set()  # [h27d] stern --all-namespaces: the same lines read as three names
    streams: set[str] = set()  # [h27d] aws logs tail's stream names
    k9s_containers: set[str] = set()  # [h28e]
    nonempty = 0
    started = False
    last = None
    for raw in sample:
        head = _kube_head_of(raw)
        if not started:
            if head is None:
                continue
            started = True
        if head is None and last in ("aws-tail", "grafana"):
            continue  # [h27d] a CloudWatch event's further lines: no head, no vote ([h28e] a Grafana row's)
        last = head[0] if head is not None else last
        if raw.strip():
            nonempty += 1
        if head is not None:
            votes[head[0]] += 1
            if head[0] == "aws-tail":
                streams.add(head[1][0])
            if head[0] == "stern":
                heads.add(head[1][1])  # the container's name
                ns_head = _stern_ns_head_of(raw)
                if ns_head is not None:
                    ns_votes += 1
                    ns_names.add(ns_head[0])
                    ns_containers.add(ns_head[2])
            elif head[0] == "argo":
                argo_pods.add(head[1][0])
            elif head[0] == "k9s":
                k9s_containers.add(head[1][1])
                votes["kubectl"] += 1  # [h28e] its lines are kubectl --timestamps' too
        if nonempty >= DETECT_WINDOW:
            break
    best = max(votes, key=votes.__getitem__)
    if not votes[best] or votes[best] * 2 < nonempty:
        return "text"
    if best == "stern" and _few(ns_votes, ns_containers) and _few(ns_votes, ns_names) and ns_votes * 2 >= nonempty:
        return "stern-ns"  # [h27d] three names, the first and the third from few: namespaces and containers
    if best == "kubectl" and votes["k9s"] * 2 >= nonempty and _few(votes["k9s"], k9s_containers):
        return "k9s"  # [h28e] most lines name a pod and one of few containers after the time
    if best in ("stern", "argo", "aws-tail") and not _few(votes[best], {"stern": heads, "argo": argo_pods,
                                                                           "aws-tail": streams}[best]):
        return "text"
    return best


def _few(votes: int, names: set) -> bool:
    """[h27d] Whether `names`, read off `votes` lines, are few: one, or at most a quarter as many as the lines (and
    the lines two or more)."""
    return votes >= 2 and (len(names) <= 1 or len(names) * 4 <= votes)


# [h26c] Log stores' exports, one JSON object a line, read as Fluent Bit records (`read_record` falls back to it):
# - Google Cloud Logging's LogEntry (a sink's export to Cloud Storage / Pub/Sub, `gcloud logging read --format=json`'s
#   entries one a line): the line in `textPayload` (or `jsonPayload.message`), `timestamp` (RFC 3339), the container in
#   `resource.labels` {namespace_name, pod_name, container_name} of resource type k8s_container, the pod's labels as
#   `labels["k8s-pod/<key>"]`, its node as `labels["compute.googleapis.com/resource_name"]`, the stream in the log's
#   name ("projects/<p>/logs/stderr") (googleapis/googleapis google/logging/v2/log_entry.proto LogEntry; GKE's
#   k8s_container resource, cloud.google.com/kubernetes-engine/docs/concepts/about-logs).
# - grafana/loki logcli's jsonl output: {"labels": {...}, "line": ..., "timestamp": <RFC 3339 nano>}
#   (pkg/logcli/output/jsonl.go JSONLOutput.FormatAndPrintln; "labels" left out with --no-labels).
# gcloud's default --format=json is one indented JSON array, not a line per entry: not read (a file to convert first).
_GCP_POD_LABEL = "k8s-pod/"


def log_store_entry(obj: dict[str, Any]) -> Envelope | None:
    """A Cloud Logging LogEntry or a logcli jsonl record as an envelope (its container as a `kubernetes`
    block); None when it is neither."""
    if "__REALTIME_TIMESTAMP" in obj:  # [h27d] a journal entry (journalctl -o json)
        return journal_entry(obj)
    source = obj.get("_source")
    if type(source) is dict:  # [h27d] an Elasticsearch hit exported whole: its document
        env = read_record(source)
        return env if type(env) is Envelope else None
    if "LogMessage" in obj or TABLE_ROW in obj:  # [h28e] a row of a log store's table (Log Analytics, a CSV export)
        return table_row(obj)
    if "attributes" in obj or "fields" in obj:  # [h28e] Datadog's Logs API, Grafana's JSON download
        env = api_entry(obj)
        if env is not None:
            return env
    text = obj.get("textPayload")
    if not isinstance(text, str):
        payload = obj.get("jsonPayload")
        text = payload.get("message") if type(payload) is dict else None
    if isinstance(text, str):
        ts = obj.get("timestamp")
        resource = obj.get("resource")
        rlabels = resource.get("labels") if type(resource) is dict else None
        rlabels = rlabels if type(rlabels) is dict else {}
        labels = obj.get("labels")
        labels = labels if type(labels) is dict else {}
        kube = _kube_block(*(v if isinstance(v, str) else None for v in
                             (rlabels.get("pod_name"), rlabels.get("container_name"), rlabels.get("namespace_name"))))
        if kube is not None:
            pod_labels = {k[len(_GCP_POD_LABEL):]: v for k, v in labels.items()
                          if k.startswith(_GCP_POD_LABEL) and isinstance(v, str)}
            if pod_labels:
                kube["labels"] = pod_labels
            node = labels.get("compute.googleapis.com/resource_name")
            if isinstance(node, str) and node:
                kube["host"] = node
        log_name = obj.get("logName")
        stream = "stderr" if isinstance(log_name, str) and log_name.endswith("/stderr") else "stdout"
    else:
        text, ts = obj.get("line"), obj.get("timestamp")
        lbls = obj.get("labels", {})
        if not isinstance(text, str) or not isinstance(ts, str) or type(lbls) is not dict:
            return None
        first = lambda names: next((lbls[n] for n in names if isinstance(lbls.get(n), str) and lbls[n]), None)  # noqa: E731
        kube = _kube_block(first(_LOKI_POD), first(_LOKI_CONTAINER), first(_LOKI_NAMESPACE))
        stream = lbls.get("stream") if lbls.get("stream") in ("stdout", "stderr") else "stdout"
    if text.endswith("\n"):
        text = text[:-1]
        if text.endswith("\r"):
            text = text[:-1]
    return Envelope(ts if isinstance(ts, str) else None, stream, False, text, kube)


# [h26c] logcli trims every line (`line = strings.TrimSpace(line)`, pkg/logcli/output/default.go): a Python traceback
# loses the indentation CPython gives it (traceback.py: '  File "{}", line {}, in {}' then the source line indented
# by four, 3.11's carets under it), and without it the frames read as text of the exception's message. `LokiReader`
# gives it back, per stream: two spaces before a frame's line, four before the line that follows a frame (its source)
# unless that line is one a traceback goes on with instead (another frame, an exception's header, the chain's
# connectors), four before a line of carets under a source line.
_PY_FRAME = re.compile(r'File "[^"]*", line \d+')
_NOT_SOURCE = re.compile(r"Traceback \(most recent call last\)|During handling of|The above exception"
                         r"|[A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit|Warning)\b|\[Previous line repeated")
_CARETS = re.compile(r"[~^]+\Z")


class LokiReader:
    """logcli's default output, a line at a time (`decode_loki`), a traceback's indentation given back."""

    def __init__(self) -> None:
        self._last: dict[Any, int] = {}  # stream -> 1 after a frame's line, 2 after a source line

    def __call__(self, raw: str) -> Envelope:
        env = decode_loki(raw)
        m = _LOKI.match(raw)
        key = m.group(2) if m is not None else None  # the stream's labels
        text, last, now = env.text, self._last.get(key, 0), 0
        if _PY_FRAME.match(text):
            text, now = "  " + text, 1
        elif last == 1 and text and not _NOT_SOURCE.match(text):
            text, now = "    " + text, 2
        elif last == 2 and _CARETS.match(text):
            text = "    " + text
        self._last[key] = now
        return env._replace(text=text) if text is not env.text else env


def reader(fmt: str):
    """A line -> envelope function for a file of `fmt`, with its own state where the format needs one (logcli)."""
    if fmt == "grafana":  # [h28e]
        return GrafanaReader()
    if fmt in H27D_HEAD_FORMATS or fmt in H28E_HEAD_FORMATS:  # [h27d] a line without the head continues the container before it
        return ContinuingReader(fmt)
    return LokiReader() if fmt == "loki" else DECODERS[fmt]


# [h26c] A tool's output copied from a terminal is hard-wrapped as any text is: the first row of a long line carries
# the tool's head, the rows after it none. `join_wrapped_heads` joins them back as parsers/wraps.py joins a plain
# log's rows, a line that carries a tool's head (`_kube_head_of`) never taken for the rest of the line before it:
# the head is shown to wraps.join_wrapped as a logger's level of the same length (one of its `HEAD`s), then put back.
def join_wrapped_heads(lines: list[str]) -> list[str]:
    """`lines` (a block of a file of a tool's heads) with the rows of each terminal-wrapped line joined."""
    from gangscope.parsers.wraps import join_wrapped

    masked, heads = [], []
    for raw in lines:
        size = _kube_head_size(raw)
        heads.append(size)
        masked.append(raw if size < 5 else "INFO:" + "-" * (size - 5) + raw[size:])
    joined = join_wrapped(masked)
    if joined is masked or len(joined) == len(masked):
        return lines
    out, i = [], 0
    for line in joined:
        j, got = i + 1, masked[i]
        while got != line and j < len(masked):  # the rows the line was joined from
            got = got.rstrip("\r") + masked[j]
            j += 1
        size = heads[i]
        out.append(lines[i][:size] + line[size:] if size >= 5 else line)
        i = j
    return out


def _kube_head_size(raw: str) -> int:
    """The length of the tool's head a line starts with, 0 if none."""
    for pattern in (_KUBECTL_PREFIX, _AWS_TAIL, _JOURNAL, _ARGO, _VERTEX, _GRAFANA, _K9S, _LOKI, _KUBECTL_TIME, _STERN):  # [h27d] [h28e]
        m = pattern.match(raw)
        if m is not None and (pattern is not _STERN or "-" in m.group(1)) and (pattern is not _K9S or "-" in m.group(2)):
            return m.end()
    return 0


# [h27d] More tools' heads (issue 16, second part), read as h26c's are: the head gives the line its time and, where it
# names them, its pod and container (a `kubernetes` block); a line without the head continues the container of the line
# before it (a multi-line CloudWatch event, journald's indented continuation) and is read as its text. Sources:
# - `aws logs tail` (default --format detailed): '%s %s %s' % (timestamp.isoformat(timespec='microseconds'),
#   logStreamName, message), the time a UTC datetime ("+00:00"), each name optionally in colour (colorama), the event
#   written with `log.rstrip() + '\n'` (aws/aws-cli awscli/customizations/logs/tail.py DetailedLogEventsFormatter).
#   The stream names its container where Fluent Bit's cloudwatch_logs output named it after the tag
#   (`<prefix>kube.var.log.containers.<pod>_<namespace>_<container>-<id>.log`); a message that is a Fluent Bit record
#   (Container Insights: {"log", "stream", "kubernetes"}) is read as that record.
# - stern --all-namespaces (or more than one --namespace): "{{color .PodColor .Namespace}} " before the default
#   template (stern/stern cmd/cmd.go generateTemplate).
# - `argo logs WORKFLOW`: fmt.Println(ansiFormat(fmt.Sprintf("%s: %s", event.PodName, event.Content), ansiColorCode(...)))
#   (argoproj/argo-workflows cmd/argo/commands/common/logs.go; the whole line in one colour unless --no-color). Argo's
#   pod names end in `-<fnv32 decimal>` (workflow/util/pod_name.go: fmt.Sprintf("%s-%v", prefix, h.Sum32()); v1's node
#   ids the same) or are the workflow's name, `generateName` + five of k8s' rand alphabet "bcdfghjklmnpqrstvwxz2456789"
#   (k8s.io/apimachinery pkg/util/rand): only such a name before ": " is taken for a pod.
# - journalctl (systemd src/shared/logs-show.c output_short): strftime "%b %d %H:%M:%S" (short, no year: no time is
#   taken), ".%06llu" after it (short-precise), "%Y-%m-%dT%H:%M:%S%z" (short-iso), then " <_HOSTNAME>", " <SYSLOG_IDENTIFIER
#   or _COMM>", "[<_PID>]", ": ", the message's further lines indented to the message's column. The host is read as
#   the pod (a bare-metal launcher's rank is a host), the identifier as its container.
_H27D_SGR = r"(?:\x1b?\[[0-9;]*m)?"
_AWS_TAIL = re.compile(rf"{_H27D_SGR}(\d{{4}}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{{6}}\+00:00){_H27D_SGR} {_H27D_SGR}(\S+?){_H27D_SGR} ")
# [h28e] Within a file taken as `aws logs tail`'s: `--format json` writes `isoformat()` (no timespec), which has no
# fraction at a whole second (awscli logs/tail.py PrettyJSONLogEventsFormatter); detection keeps the six digits.
_AWS_TAIL_READ = re.compile(_AWS_TAIL.pattern.replace(r"\.\d{{6}}", r"(?:\.\d{{6}})?").replace(r"\.\d{6}", r"(?:\.\d{6})?"))
_STERN_NS = re.compile(rf"{_H26C_SGR}({_H26C_DNS_LABEL}){_H26C_SGR} {_H26C_SGR}({_H26C_DNS_NAME}){_H26C_SGR} "
                       rf"{_H26C_SGR}({_H26C_DNS_LABEL}){_H26C_SGR} (?:({_H26C_TIME}) )?")
_ARGO = re.compile(r"(?:\x1b?\[[0-9;]*m)?([a-z0-9](?:[-a-z0-9.]{0,240})-(?:\d{7,10}|[bcdfghjklmnpqrstvwxz2456789]{5})): ")
_SGR_END = "\x1b[0m"
_MONTHS = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec"
_JOURNAL = re.compile(rf"(?:(?:{_MONTHS}) [ 0-3]\d \d\d:\d\d:\d\d(?:\.\d{{6}})?|(\d{{4}}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{{6}})?[+-]\d{{4}})) "
                      r"(\S+) ([^\s\[\]]+?)(?:\[\d+\])?: ")
# The container a Fluent Bit tag names, as a CloudWatch stream's name carries it (fluent-bit filter_kubernetes kube_regex.h).
_TAG_CONTAINER = re.compile(r"([a-z0-9](?:[-a-z0-9.]*[a-z0-9])?)_([^_]+)_(.+)-([a-z0-9]{64})\.log$")

H27D_HEAD_FORMATS = ("aws-tail", "stern-ns", "argo", "journal")


def _stream_container(name: str) -> dict[str, Any] | None:
    """The container a CloudWatch stream's name carries (a Fluent Bit tag of a kubelet's log file), None if none."""
    cut = max(name.rfind("containers."), name.rfind("containers/"))
    m = _TAG_CONTAINER.match(name, cut + 11 if cut >= 0 else 0)
    return _kube_block(m.group(1), m.group(3), m.group(2)) if m else None


def _stream_name(name: str) -> bool:
    """Whether a word may be a CloudWatch stream's name as tools name them (`<host>-application.var.log.containers...`,
    Lambda's `2024/05/01/[$LATEST]<id>`, ECS's `<prefix>/<container>/<task>`, SageMaker's `algo-1-<epoch>`): a `/`, `.`,
    `_` or a digit in it, unlike a logger's level."""
    return any(c in "/._0123456789" for c in name)


def _carried_record(text: str, ts: str | None, kube: dict[str, Any] | None) -> Envelope | None:
    """A CloudWatch message that is a Fluent Bit record (Container Insights: {"log", "stream", "kubernetes"}) read as that
    record, the event's time and stream's container where the record names none; None when the message is no record."""
    if not text.startswith("{"):
        return None
    obj = _json_object(text)
    if obj is None or not isinstance(obj.get("log"), str):
        return None
    env = read_record(obj)
    if type(env) is not Envelope:
        return None
    return env._replace(time=env.time or ts, kubernetes=env.kubernetes or kube)


def _str_field(obj: dict[str, Any], key: str) -> str | None:
    """A record's field where it is text, else None (a field of the wrong type names nothing)."""
    value = obj.get(key)
    return value if isinstance(value, str) else None


def decode_aws_tail(raw: str) -> Envelope:
    """A line of `aws logs tail`: its time, and its container (the stream's name, or the Fluent Bit record it carries)."""
    m = _AWS_TAIL_READ.match(raw)  # [h28e] (was _AWS_TAIL)
    if m is None:
        return decode_text(raw)
    text = raw[m.end():]
    if text.endswith(_SGR_END):
        text = text[:-len(_SGR_END)]
    kube = _stream_container(m.group(2))
    carried = _carried_record(text, m.group(1), kube)
    if carried is not None:
        return carried
    return Envelope(m.group(1), "stdout", False, text, kube)  # other streams: the file's own pod


def decode_stern_ns(raw: str) -> Envelope:
    """A line of stern --all-namespaces: its namespace, pod and container, its time when --timestamps."""
    m = _STERN_NS.match(raw)
    if m is None or "-" not in m.group(2):
        return decode_text(raw)
    return Envelope(m.group(4), "stdout", False, raw[m.end():], _kube_block(m.group(2), m.group(3), m.group(1)))


def decode_argo(raw: str) -> Envelope:
    """A line of `argo logs`: its pod (the colour around the line taken off)."""
    m = _ARGO.match(raw)
    if m is None:
        return decode_text(raw)
    text = raw[m.end():]
    if raw[:1] in ("\x1b", "[") and text.endswith(_SGR_END):
        text = text[:-len(_SGR_END)]
    return Envelope(None, "stdout", False, text, _kube_block(m.group(1), None))


def decode_journal(raw: str) -> Envelope:
    """A line of journalctl's short output: its host (as the pod), its identifier (as the container), its time when
    the format has a year (short-iso)."""
    m = _JOURNAL.match(raw)
    if m is None:
        return decode_text(raw)
    return Envelope(m.group(1), "stdout", False, raw[m.end():], _kube_block(m.group(2), m.group(3)))


class ContinuingReader:
    """A tool's lines a line at a time, a line without the head read as the text of the container of the line
    before it (a CloudWatch event of several lines, journald's continuation lines, indented to the message's column:
    that indentation taken off)."""

    def __init__(self, fmt: str):
        self._decode = DECODERS[fmt]
        self._pattern = {"aws-tail": _AWS_TAIL_READ, "stern-ns": _STERN_NS, "argo": _ARGO, "journal": _JOURNAL}.get(fmt) \
            or _CONTINUING_PATTERNS[fmt]  # [h28e]
        self._last: Envelope | None = None
        self._indent = 0
        self._json: list[str] | None = None  # [h28e] `aws logs tail --format json`: a message's pretty-printed lines
        self._json_size = 0

    def __call__(self, raw: str) -> Envelope | Rejected:
        if self._json is not None or (raw == "{" and self._last is not None and self._last.text == ""
                                      and self._pattern is _AWS_TAIL_READ):
            return self._json_message(raw)
        env = self._decode(raw)
        if env.kubernetes is not None or env.time is not None:
            self._last = env
            m = self._pattern.match(raw)
            self._indent = m.end() if m else 0
            if env.text == "" and self._pattern is _AWS_TAIL_READ:
                return HELD  # [h28e] `--format json`'s head before its message's lines (an empty event: no line)
            return env
        last = self._last
        if last is None:
            return env
        text = raw
        if self._indent and raw[:self._indent].isspace():
            text = raw[self._indent:]
        return Envelope(last.time, last.stream, False, text, last.kubernetes)

    def _json_message(self, raw: str) -> Envelope | Rejected:
        """[h28e] `aws logs tail --format json` writes a message that is JSON as `json.dumps(..., indent=4)` on the
        lines after the head (aws/aws-cli awscli/customizations/logs/tail.py PrettyJSONLogEventsFormatter): its lines
        are held to the closing `}` at the start of a line, then read as the record (a Fluent Bit record as
        `_carried_record` reads it) or as the JSON line it was. A message longer than MAX_HELD_BYTES is a skip."""
        held = self._json if self._json is not None else []
        self._json = held
        self._json_size += len(raw) + 1
        if self._json_size <= MAX_HELD_BYTES:
            held.append(raw)
        elif held:
            held.clear()
            return Rejected("too_long", f"a JSON message of aws logs tail longer than {MAX_HELD_BYTES} bytes")
        if raw != "}":
            return HELD
        self._json, self._json_size = None, 0
        if not held:
            return HELD
        last = self._last
        text = "\n".join(held)
        obj = _json_object(text)
        if obj is not None:
            text = msgspec.json.encode(obj).decode()
            carried = _carried_record(text, last.time, last.kubernetes)
            if carried is not None:
                return carried
        return Envelope(last.time, last.stream, False, text, last.kubernetes)


MAX_HELD_BYTES = 1 << 20
HELD = Rejected("held", "")  # [h28e] a line a reader holds until the lines after it complete it: no skip, no line


DECODERS.update({"aws-tail": decode_aws_tail, "stern-ns": decode_stern_ns, "argo": decode_argo, "journal": decode_journal})
KUBE_HEAD_FORMATS = KUBE_HEAD_FORMATS + H27D_HEAD_FORMATS
POD_HEAD_FORMATS = POD_HEAD_FORMATS + H27D_HEAD_FORMATS
FORMATS = FORMATS[:-1] + H27D_HEAD_FORMATS + FORMATS[-1:]


def _h27d_head_of(raw: str) -> tuple[str, tuple] | None:
    """[h27d] The head of one of the tools above a line starts with (its format and what it names), None if none."""
    c = raw[:1]
    if c.isdigit() or c == "\x1b" or c == "[":
        m = _AWS_TAIL.match(raw)
        if m is not None and _stream_name(m.group(2)):
            return "aws-tail", (m.group(2),)
        m = _AWS_TAIL_READ.match(raw)  # [h28e] isoformat() at a whole second: taken where the stream names a container
        if m is not None and _stream_container(m.group(2)) is not None:
            return "aws-tail", (m.group(2),)
    if c.isdigit() or c in "ADFJMNOS":
        m = _JOURNAL.match(raw)
        if m is not None:
            return "journal", (m.group(2), m.group(3))
    m = _ARGO.match(raw)
    if m is not None:
        return "argo", (m.group(1),)
    return None


def _stern_ns_head_of(raw: str) -> tuple | None:
    m = _STERN_NS.match(raw)
    if m is None or "-" not in m.group(2):
        return None
    return m.group(1), m.group(2), m.group(3)


# [h27d] Records of one JSON object a line (or of a JSON document, pipeline/sources/files.py JsonDocumentLines) that name
# their container in fields of their own:
# - CloudWatch Logs' events (`aws logs get-log-events` / `filter-log-events`, `aws logs tail --format none`... as botocore
#   data logs/2014-03-28/service-2.json's OutputLogEvent {timestamp, message, ingestionTime} and FilteredLogEvent
#   {logStreamName, timestamp, message, ingestionTime, eventId}): `timestamp` in epoch milliseconds; the container from
#   the stream's name (Fluent Bit's tag, above); a message that is a Fluent Bit record is read as that record.
# - stern `--output json` ("{{json .}}" of stern's Log: message, nodeName, namespace, podName, containerName, labels,
#   annotations; stern/stern stern/log.go), and `--output extjson` / `ppextjson` ('"pod": ..., "container": ...,
#   "message": {{extjson .Message}}', "namespace" first with -A; cmd/cmd.go generateTemplate): a message that is itself
#   JSON is embedded as an object and is then no line of text (not read).
# - Beats (Filebeat's add_kubernetes_metadata, ECS): `kubernetes: {pod: {name, uid}, namespace, container: {name},
#   node: {name}, labels}` with `message` and `@timestamp` (elastic/beats libbeat/common/kubernetes/metadata.go);
#   an Elasticsearch / Kibana NDJSON export of such documents (`_source` lifted where the hit is exported whole).
# - the journal's JSON (`journalctl -o json`, systemd src/shared/logs-show.c output_json): every field a string,
#   `__REALTIME_TIMESTAMP` in microseconds, MESSAGE (an array of byte values when not printable UTF-8), _HOSTNAME,
#   SYSLOG_IDENTIFIER / _COMM.
_STERN_EXTJSON = frozenset(("namespace", "pod", "container", "message"))


def named_record(obj: dict[str, Any], text: str, partial: bool, ts: str | None) -> Envelope:
    """A CloudWatch event or a stern json line as an envelope: its time, container and text."""
    name = lambda k: _str_field(obj, k)  # noqa: E731
    if "pod" in obj and _STERN_EXTJSON.issuperset(obj):  # stern -o extjson / ppextjson: {"namespace"?, "pod", "container", "message"}
        return Envelope(ts, "stdout", partial, text, _kube_block(name("pod"), name("container"), name("namespace")))
    if "podName" in obj:
        kube = _kube_block(name("podName"), name("containerName"), name("namespace"))
        if kube is not None:
            if name("nodeName"):
                kube["host"] = name("nodeName")
            labels = obj.get("labels")
            if type(labels) is dict and all(isinstance(v, str) for v in labels.values()):
                kube["labels"] = labels
        return Envelope(ts, "stdout", partial, text, kube)
    if ts is None:
        ms = obj.get("timestamp")
        ts = epoch_to_rfc3339(ms / 1000) if isinstance(ms, (int, float)) and not isinstance(ms, bool) else None
    stream_name = obj.get("logStreamName")
    kube = _stream_container(stream_name) if isinstance(stream_name, str) else None
    carried = _carried_record(text, ts, kube)
    if carried is not None:
        return carried
    return Envelope(ts, "stdout", partial, text, kube)


def ecs_kubernetes(block: dict[str, Any]) -> dict[str, Any]:
    """Beats' `kubernetes` block in Fluent Bit's names (pod_name, pod_id, container_name, namespace_name, host, labels)."""
    def name(*path: str) -> Any:
        v: Any = block
        for p in path:
            v = v.get(p) if type(v) is dict else None
        return v

    out = {"pod_name": name("pod", "name"), "pod_id": name("pod", "uid"), "container_name": name("container", "name"),
           "namespace_name": block.get("namespace") if not isinstance(block.get("namespace"), dict) else name("namespace", "name"),
           "host": name("node", "name"), "labels": block.get("labels")}
    return {k: v for k, v in out.items() if v is not None}


def journal_entry(obj: dict[str, Any]) -> Envelope | None:
    """A journal entry (journalctl -o json) as an envelope: its host as the pod, its identifier as the container."""
    message = obj.get("MESSAGE")
    if isinstance(message, list) and all(type(b) is int and 0 <= b < 256 for b in message):
        message = bytes(message).decode("utf-8", "replace")
    if not isinstance(message, str):
        return None
    usec = obj.get("__REALTIME_TIMESTAMP")
    ts = epoch_to_rfc3339(int(usec) / 1e6) if isinstance(usec, str) and usec.isdigit() else None
    name = lambda k: _str_field(obj, k)  # noqa: E731
    kube = _kube_block(name("_HOSTNAME"), name("SYSLOG_IDENTIFIER") or name("_COMM"))
    return Envelope(ts, "stdout", False, message.removesuffix("\n"), kube)


# [h28e] Logs as users fetch them, third part (issue 16; fixtures/envelopes_h28e/README.md cites each source).
#
# Rows of a table a log store exports, one JSON object a row: a CSV export read a row a line by
# pipeline/sources/files.py (CsvRecordLines, each row's cells under the header's names, TABLE_ROW set to its row
# number), or the rows of a JSON answer (`az monitor log-analytics query`). Column names are field paths, as the
# exporting tool names its columns:
# - Kibana / OpenSearch Dashboards Discover CSV (elastic/kibana generate_csv, escape_value.ts createEscapeValue:
#   a cell quoted when it has a non-alphanumeric character, `"` doubled, a cell starting with =, +, -, @ (or tab,
#   CR) led by a `'` under csv:escapeFormulaValues): the document's fields by their paths (`@timestamp`, `message`,
#   `kubernetes.pod.name` of Beats, `kubernetes.pod_name` of Fluent Bit, `log`, `stream`); dates as the data view
#   formats them (not RFC 3339 by default: no time taken then);
# - Azure Monitor Log Analytics' ContainerLogV2 (learn.microsoft.com azure-monitor/reference/tables/containerlogv2):
#   TimeGenerated, Computer, ContainerName, PodName, PodNamespace, LogMessage (dynamic: a JSON log line is an
#   object), LogSource (stdout / stderr); the portal's CSV export writes a datetime column as `TimeGenerated [UTC]`;
# - Datadog's Log Explorer CSV (the columns shown: Date, Host, Service, Message / Content);
# - Grafana Explore's CSV of a Loki query (Date, Time, Line, tsNs, id).
TABLE_ROW = "\u0000row"  # the key CsvRecordLines gives a row its number under: no log record has it
_TABLE_ROW_HEAD = '{"\\u0000row":'  # how each row's line begins (its first key)
_COLUMN_UNIT = re.compile(r" \[[^\]]*\]\Z")  # Log Analytics' "TimeGenerated [UTC]"
TABLE_TEXT = ("log", "message", "LogMessage", "Message", "MESSAGE", "Line", "line", "Content", "content", "textPayload",
              "jsonPayload.message", "msg")
TABLE_TIME = ("@timestamp", "time", "timestamp", "TimeGenerated", "Date", "date", "Time", "_time")
TABLE_STREAM = ("stream", "LogSource", "kubernetes.stream", "log.iostream")
TABLE_POD = ("kubernetes.pod_name", "kubernetes.pod.name", "PodName", "pod_name", "pod", "k8s.pod.name",
             "resource.labels.pod_name", "kube_pod_name")
TABLE_CONTAINER = ("kubernetes.container_name", "kubernetes.container.name", "ContainerName", "container_name",
                   "container", "k8s.container.name", "resource.labels.container_name", "kube_container_name")
TABLE_NAMESPACE = ("kubernetes.namespace_name", "kubernetes.namespace", "kubernetes.namespace.name", "PodNamespace",
                   "namespace_name", "namespace", "k8s.namespace.name", "resource.labels.namespace_name", "kube_namespace")
TABLE_HOST = ("kubernetes.host", "kubernetes.node.name", "Computer", "host.name", "node_name")
_FORMULA_ESCAPED = ("'=", "'+", "'-", "'@", "'\t", "'\r")


def table_row(obj: dict[str, Any]) -> Envelope | None:
    """A row of a log store's table (its columns by name, see above) as an envelope; None when no column holds its
    text."""
    if any(" [" in k for k in obj):
        obj = {_COLUMN_UNIT.sub("", k): v for k, v in obj.items()}

    def first(names: tuple[str, ...]) -> Any:
        return next((obj[n] for n in names if obj.get(n) not in (None, "")), None)

    text = first(TABLE_TEXT)
    if isinstance(text, (dict, list)):  # ContainerLogV2's LogMessage of a JSON log line: the line as it was logged
        text = msgspec.json.encode(text).decode()
    if not isinstance(text, str):
        return None
    if TABLE_ROW in obj and text[:2] in _FORMULA_ESCAPED:
        text = text[1:]  # Kibana's csv:escapeFormulaValues
    if text.endswith("\n"):
        text = text[:-1]
    ts = first(TABLE_TIME)
    ts = ts if isinstance(ts, str) and times.parse(ts) is not None else None
    stream = first(TABLE_STREAM)
    name = lambda names: (lambda v: v if isinstance(v, str) else None)(first(names))  # noqa: E731
    kube = _kube_block(name(TABLE_POD), name(TABLE_CONTAINER), name(TABLE_NAMESPACE))
    if kube is not None and name(TABLE_HOST):
        kube["host"] = name(TABLE_HOST)
    return Envelope(ts, stream if stream in ("stdout", "stderr") else "stdout", False, text, kube)


# [h28e] JSON answers of log stores' APIs, one entry a line (a JSON document is read so by files.py JsonDocumentLines):
# - Datadog's Logs API (`GET /api/v2/logs/events`, datadog-api-client Log / LogAttributes): {"data": [{"id", "type":
#   "log", "attributes": {"timestamp", "host", "service", "status", "message", "tags": ["pod_name:x",
#   "kube_container_name:y", "kube_namespace:z", ...], "attributes": {...}}}]}; the pod from its Kubernetes tags
#   (the Agent's kubelet tagger: pod_name, kube_container_name / container_name, kube_namespace);
# - Grafana Explore's "Download logs" as JSON (grafana/grafana public/app/features/logs/utils.ts logRowsToReadableJson:
#   [{"line", "timestamp" (epoch nanoseconds), "fields": {labels...}}], written by JSON.stringify on one line).
_DD_POD_TAGS = {"pod_name": "pod", "kube_container_name": "container", "container_name": "container",
                "kube_namespace": "namespace"}


def api_entry(obj: dict[str, Any]) -> Envelope | None:
    """A Datadog Logs API event or a Grafana JSON download's row as an envelope; None when it is neither."""
    attrs = obj.get("attributes")
    if type(attrs) is dict and isinstance(attrs.get("message"), str):
        names: dict[str, str] = {}
        tags = attrs.get("tags")
        for tag in tags if type(tags) is list else ():
            if isinstance(tag, str) and ":" in tag:
                key, _, value = tag.partition(":")
                if key in _DD_POD_TAGS and value:
                    names.setdefault(_DD_POD_TAGS[key], value)
        ts = attrs.get("timestamp")
        return Envelope(ts if isinstance(ts, str) and times.parse(ts) is not None else None, "stdout", False,
                        attrs["message"].removesuffix("\n"),
                        _kube_block(names.get("pod"), names.get("container"), names.get("namespace")))
    fields = obj.get("fields")
    line = obj.get("line")
    if type(fields) is dict and isinstance(line, str):
        ns = obj.get("timestamp")
        ts = None
        if isinstance(ns, str) and ns.isdigit() or type(ns) is int:
            ts = times.from_seconds(int(ns) / 1e9, fixed=True) if int(ns) < 1 << 63 else None
        first = lambda names: next((fields[n] for n in names if isinstance(fields.get(n), str) and fields[n]), None)  # noqa: E731
        stream = fields.get("stream")
        return Envelope(ts, stream if stream in ("stdout", "stderr") else "stdout", False, line.removesuffix("\n"),
                        _kube_block(first(_LOKI_POD), first(_LOKI_CONTAINER), first(_LOKI_NAMESPACE)))
    return None


# [h28e] More tools' heads, read as h27d's are (ContinuingReader: a line without the head continues the container
# of the line before it):
# - `gcloud ai custom-jobs stream-logs` (Vertex AI; `gcloud ai-platform jobs stream-logs` the same): the format
#   'value(severity, timestamp.date("%Y-%m-%d %H:%M:%S %z", tz="LOCAL"), task_name, message)' (google-cloud-sdk
#   lib/googlecloudsdk/command_lib/ai/log_util.py LOG_FORMAT), the value printer's cells separated by tabs; the
#   task (`workerpool0-0`, resource.labels.task_name, "unknown_task" when none) is read as the pod; a multi-line
#   message is split into lines each with the head (_SplitMultiline) unless --allow-multiline-logs.
# - Grafana Explore's "Download logs" as text (grafana/grafana public/app/features/inspector/utils/download.ts
#   downloadLogsModelAsTxt): the query's meta items (`<label>: <JSON value>`, "Common labels: {...}" among them),
#   two blank lines, then `<epoch ms>\t<toISOString()>\t<entry>` a row, an entry's further lines without the head;
#   the common labels name the pod, container and namespace where they carry them.
# - k9s's saved logs (derailed/k9s internal/view/log.go SaveCmd writes the view's text; internal/dao/log_item.go
#   Render: `<time> ` when timestamps are shown, then `<pod>` and ` <container> ` in a view of several pods /
#   containers, then the line): `<RFC 3339 time> <pod> <container> <line>` is read here (k9s's other forms are
#   kubectl --timestamps' and stern's, read as h26c's).
_SEVERITIES = "DEFAULT|DEBUG|INFO|NOTICE|WARNING|ERROR|CRITICAL|ALERT|EMERGENCY"
_VERTEX = re.compile(rf"(?:{_SEVERITIES})\t(\d{{4}}-\d\d-\d\d) (\d\d:\d\d:\d\d) ([+-]\d\d)(\d\d)\t([^\t]+)\t")
_GRAFANA = re.compile(r"\d{10,16}\t(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)\t")
_GRAFANA_COMMON = re.compile(r"Common labels: (\{.*\})\s*\Z")
_K9S = re.compile(rf"({_H26C_TIME}) ({_H26C_DNS_NAME}) ({_H26C_DNS_LABEL}) ")

H28E_HEAD_FORMATS = ("vertex", "grafana", "k9s")


def decode_vertex(raw: str) -> Envelope:
    """A line of `gcloud ai custom-jobs stream-logs`: its time, its task as the pod."""
    m = _VERTEX.match(raw)
    if m is None:
        return decode_text(raw)
    d, t, oh, om, task = m.groups()
    return Envelope(f"{d}T{t}{oh}:{om}", "stdout", False, raw[m.end():], _kube_block(task, None))


def decode_grafana(raw: str) -> Envelope:
    """A row of Grafana's text download: its time."""
    m = _GRAFANA.match(raw)
    if m is None:
        return decode_text(raw)
    return Envelope(m.group(1), "stdout", False, raw[m.end():])


def decode_k9s(raw: str) -> Envelope:
    """A line of k9s's saved logs of several pods with timestamps: its time, pod and container."""
    m = _K9S.match(raw)
    if m is None or "-" not in m.group(2):
        return decode_kubectl(raw)
    return Envelope(m.group(1), "stdout", False, raw[m.end():], _kube_block(m.group(2), m.group(3)))


class GrafanaReader(ContinuingReader):
    """Grafana's text download: rows as ContinuingReader reads them, in the container its "Common labels" name."""

    def __init__(self) -> None:
        super().__init__("grafana")
        self._common: dict[str, Any] | None = None

    def __call__(self, raw: str) -> Envelope:
        if self._last is None and raw.startswith("Common labels: "):
            m = _GRAFANA_COMMON.match(raw)
            labels = _json_object(m.group(1)) if m else None
            if labels is not None:
                first = lambda names: next((labels[n] for n in names if isinstance(labels.get(n), str) and labels[n]), None)  # noqa: E731
                self._common = _kube_block(first(_LOKI_POD), first(_LOKI_CONTAINER), first(_LOKI_NAMESPACE))
        env = super().__call__(raw)
        return env._replace(kubernetes=self._common) if self._common is not None and env.kubernetes is None else env


DECODERS.update({"vertex": decode_vertex, "grafana": decode_grafana, "k9s": decode_k9s})
_CONTINUING_PATTERNS = {"vertex": _VERTEX, "grafana": _GRAFANA, "k9s": _K9S}
KUBE_HEAD_FORMATS = KUBE_HEAD_FORMATS + H28E_HEAD_FORMATS
POD_HEAD_FORMATS = POD_HEAD_FORMATS + H28E_HEAD_FORMATS
FORMATS = FORMATS[:-1] + H28E_HEAD_FORMATS + FORMATS[-1:]


def _h28e_head_of(raw: str) -> tuple[str, tuple] | None:
    """[h28e] The head of one of the tools above a line starts with (its format and what it names), None if none."""
    c = raw[:1]
    if c.isdigit():
        if _GRAFANA.match(raw):
            return "grafana", ()
        m = _K9S.match(raw)
        if m is not None and "-" in m.group(2):
            return "k9s", (m.group(2), m.group(3))
    elif "\t" in raw[:10]:
        m = _VERTEX.match(raw)
        if m is not None:
            return "vertex", (m.group(5),)
    return None
