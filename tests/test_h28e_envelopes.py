"""[h28e] Logs as users fetch them, third part (issue 16): `gcloud logging read`'s YAML, `gcloud ai custom-jobs
stream-logs`, `aws logs tail --format short / json`, CSV exports (Kibana / OpenSearch Dashboards, Log Analytics,
Datadog, Grafana), Log Analytics / Datadog / Grafana JSON, Grafana's text download, k9s's saved logs. Each is read as
the plain log, its time and pod/container from the tool's head or columns; a plain log with a comma or a `---` line
stays plain text (near misses); bad input (a quoted cell never closed, a YAML document cut in the middle, a 10 MB
cell) is counted, never a traceback. Fixtures: fixtures/envelopes_h28e (README.md cites each printing source)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from gangscope.parsers import envelopes
from gangscope.parsers.envelopes import detect_format, read_fluentbit
from gangscope.pipeline.run import replay
from gangscope.pipeline.sources import files

TRACE = [
    "Traceback (most recent call last):",
    '  File "/workspace/train.py", line 412, in <module>',
    "    main()",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.14 GiB",
]
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "envelopes_h28e"
POD = "llama-train-worker-1"


def _records(path: Path, **options):
    records = []
    result = replay.run(replay.ReplayOptions(paths=[str(path)], **options), records.extend)
    return result, records


def _failed(result) -> list[str]:
    return [d.category for d in result.diagnoses if d.category not in ("success", "running")]


def _read(path: Path) -> bytes:
    stream = files.open_binary(str(path))
    try:
        return stream.read()
    finally:
        stream.close()


# --- each fixture: read as the plain log, in the container the form names -----------------------------------

@pytest.mark.parametrize("name, pod", [
    ("gcloud_read.yaml", POD),
    ("vertex_stream_logs.log", "workerpool0-1"),
    ("aws_tail_json.log", POD),
    ("kibana_discover.csv", POD),
    ("log_analytics.csv", POD),
    ("log_analytics.json", POD),
    ("datadog_api.json", POD),
    ("grafana_logs.txt", POD),
    ("grafana_logs.json", POD),
    ("k9s_saved.log", POD),
])
def test_each_form_reads_as_the_plain_log_in_its_container(name, pod):
    result, records = _records(FIXTURES / name)
    assert _failed(result) == ["cuda_oom"]
    traces = [r for r in records if r.kind == "trace"]
    assert traces and {r.pod for r in traces} == {pod}
    assert result.curation.unreadable_lines == 0 and result.stage_failures.summary() == []


@pytest.mark.parametrize("name", ["datadog.csv", "aws_tail_short.log"])
def test_forms_that_name_no_container_read_as_the_files_own(name):
    result, records = _records(FIXTURES / name)
    assert _failed(result) == ["cuda_oom"]
    assert {r.pod for r in records if r.kind == "trace"} == {Path(name).stem}


def test_a_csv_row_carries_its_time_when_the_column_is_rfc3339():
    result, records = _records(FIXTURES / "datadog.csv")
    trace = next(r for r in records if r.kind == "trace")
    assert trace.time.startswith("2024-05-01T10:00:04")


# --- one line each ------------------------------------------------------------------------------------------

def test_vertex_stream_logs_gives_the_time_and_the_task():
    env = envelopes.decode_vertex("ERROR\t2024-05-01 12:00:04 +0200\tworkerpool0-3\tTraceback (most recent call last):")
    assert env == envelopes.Envelope("2024-05-01T12:00:04+02:00", "stdout", False, "Traceback (most recent call last):",
                                     {"pod_name": "workerpool0-3"})


def test_grafana_text_download_gives_the_time_and_its_common_labels_the_pod():
    read = envelopes.reader("grafana")
    assert read('Common labels: {"pod":"w-2","container":"pytorch"}').time is None  # a meta line
    env = read("1714557604017\t2024-05-01T10:00:04.017Z\tTraceback (most recent call last):")
    assert (env.time, env.text, env.kubernetes) == ("2024-05-01T10:00:04.017Z", TRACE[0],
                                                    {"pod_name": "w-2", "container_name": "pytorch"})
    assert read(TRACE[1]).time == "2024-05-01T10:00:04.017Z"  # an entry's further line continues it


def test_k9s_saved_lines_name_pod_and_container():
    env = envelopes.decode_k9s(f"2024-05-01T10:00:04.017000000Z {POD} pytorch {TRACE[0]}")
    assert (env.time, env.text, env.kubernetes) == ("2024-05-01T10:00:04.017000000Z", TRACE[0],
                                                    {"pod_name": POD, "container_name": "pytorch"})


def test_a_log_analytics_row_names_the_container_and_its_json_message_stays_a_line():
    row = {"TimeGenerated": "2024-05-01T10:00:04.017Z", "PodName": "w-1", "ContainerName": "pytorch",
           "PodNamespace": "team-a", "Computer": "aks-node-4", "LogSource": "stderr",
           "LogMessage": {"level": "error", "msg": "boom"}}
    env = read_fluentbit(json.dumps(row))
    assert env.kubernetes == {"pod_name": "w-1", "container_name": "pytorch", "namespace_name": "team-a",
                              "host": "aks-node-4"}
    assert (env.stream, json.loads(env.text)) == ("stderr", {"level": "error", "msg": "boom"})


def test_datadog_api_event_names_the_pod_from_its_tags():
    entry = {"id": "x", "type": "log", "attributes": {"timestamp": "2024-05-01T10:00:04.017Z", "message": TRACE[3],
                                                      "tags": ["pod_name:w-1", "kube_container_name:pytorch", "env:a"]}}
    env = read_fluentbit(json.dumps(entry))
    assert (env.text, env.kubernetes) == (TRACE[3], {"pod_name": "w-1", "container_name": "pytorch"})


def test_a_csv_exports_rows_are_read_with_kibanas_formula_escape_taken_off(tmp_path):
    path = tmp_path / "discover.csv"
    path.write_text('"@timestamp","kubernetes.pod_name",message\n'
                    '"May 1, 2024 @ 10:00:04.017","w-1","\'-- step 1 --"\n'
                    '"May 1, 2024 @ 10:00:05.017","w-1","a ""quoted"", multi-line\r\ncell"\n')
    lines = [line for block in files.read_lines(str(path), files.ReadStats()) for line in block]
    envs = [read_fluentbit(line) for line in lines]
    assert [e.text for e in envs] == ["-- step 1 --", 'a "quoted", multi-line\r\ncell']
    assert envs[0].kubernetes == {"pod_name": "w-1"} and envs[0].time is None  # Kibana's date format: no time


def test_aws_logs_tail_json_holds_the_pretty_printed_record():
    read = envelopes.reader("aws-tail")
    stream = f"node-application.var.log.containers.{POD}_team-a_pytorch-{'7a1e' * 16}.log"
    assert read(f"2024-05-01T10:00:04.017000+00:00 {stream} ") is envelopes.HELD  # the head before the message
    record = json.dumps({"log": TRACE[0] + "\n", "stream": "stderr", "kubernetes": {"pod_name": "w-9"}}, indent=4)
    got = [read(line) for line in record.split("\n")]
    assert got[:-1] == [envelopes.HELD] * (len(got) - 1)
    assert (got[-1].text, got[-1].stream, got[-1].kubernetes["pod_name"]) == (TRACE[0], "stderr", "w-9")


# --- near misses: plain text stays plain text -----------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "epoch,step,loss,message\n1,10,2.3,ok\n",  # a metrics CSV: no time or pod column
    "---\nstep 1, loss 2.3\n---\n" + "\n".join(TRACE) + "\n",  # a `---` line before a plain log
    "--- config ---\nlr: 0.1\ntimestamp: now\n",
    "step 1, loss 2.3, lr 0.1\n" + "\n".join(TRACE) + "\n",
])
def test_a_plain_log_with_commas_or_dashes_is_passed_through_as_it_is(tmp_path, text):
    path = tmp_path / "plain.log"
    path.write_bytes(text.encode())
    assert _read(path) == path.read_bytes()


def test_a_plain_log_with_a_dashes_line_and_commas_diagnoses_as_before(tmp_path):
    path = tmp_path / "plain.log"
    path.write_text("---\nstep 1, loss 2.3\n---\n" + "\n".join(TRACE) + "\n")
    result, records = _records(path)
    assert _failed(result) == ["cuda_oom"] and detect_format(path.read_text().split("\n")) == "text"


def test_k9s_head_needs_few_container_names():
    lines = [f"2024-05-01T10:00:0{i}.000000000Z some-thing {w} happened" for i, w in enumerate(
        ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"])]
    assert detect_format(lines) == "kubectl"
    lines = [f"2024-05-01T10:00:0{i}.000000000Z {POD} pytorch line {i}" for i in range(8)]
    assert detect_format(lines) == "k9s"


# --- bad input: counted, never a traceback ---------------------------------------------------------------------

def _csv(rows) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([["@timestamp", "kubernetes.pod_name", "message"], *rows])
    return out.getvalue()


def test_a_quoted_cell_never_closed_is_counted_after_the_rows_before_it(tmp_path):
    rows = [[f"2024-05-01T10:00:0{i}Z", "w-1", t] for i, t in enumerate(["step 1", "\n".join(TRACE)])]
    path = tmp_path / "cut.csv"
    path.write_text(_csv(rows) + '2024-05-01T10:00:09Z,w-1,"never closed\nstep 2\n')
    result, records = _records(path)
    failures = result.stage_failures.summary()
    assert failures and failures[0]["stage"] == "sources"
    assert result.curation.unreadable_lines == 1
    assert _failed(result) == ["cuda_oom"]


def test_a_yaml_document_cut_in_the_middle_is_counted(tmp_path):
    text = (FIXTURES / "gcloud_read.yaml").read_text()
    path = tmp_path / "read.yaml"
    path.write_text(text + "---\ninsertId: x\nresource:\n  labels: [unclosed\n")
    result, records = _records(path)
    failures = result.stage_failures.summary()
    assert failures and failures[0]["stage"] == "sources"
    assert result.curation.unreadable_lines == 1
    assert _failed(result) == ["cuda_oom"]


def test_a_10_mb_cell_is_cut_and_counted(tmp_path):
    rows = [["2024-05-01T10:00:00Z", "w-1", "x" * (10 << 20)], ["2024-05-01T10:00:01Z", "w-1", "\n".join(TRACE)]]
    path = tmp_path / "big.csv"
    path.write_text(_csv(rows))
    result, records = _records(path)
    assert result.read.long_lines_cut == 1 and result.curation.unreadable_lines == 1
    assert _failed(result) == ["cuda_oom"]


def test_a_yaml_document_longer_than_the_limit_is_a_counted_line(tmp_path):
    big = "---\ntextPayload: " + "y" * (files.MAX_DOCUMENT + 10) + "\ntimestamp: '2024-05-01T10:00:00Z'\n"
    path = tmp_path / "big.yaml"
    path.write_text(big + (FIXTURES / "gcloud_read.yaml").read_text())
    result, records = _records(path)
    assert result.curation.unreadable_lines == 1 and _failed(result) == ["cuda_oom"]


def test_an_overlong_aws_json_message_is_a_skip():
    read = envelopes.reader("aws-tail")
    stream = f"node-application.var.log.containers.{POD}_team-a_pytorch-{'7a1e' * 16}.log"
    read(f"2024-05-01T10:00:04.017000+00:00 {stream} ")
    assert read("{") is envelopes.HELD
    got = read('    "log": "' + "z" * envelopes.MAX_HELD_BYTES + '"')
    assert type(got) is envelopes.Rejected and got.kind == "too_long"
    assert read("}") is envelopes.HELD


def test_az_ml_job_stream_reads_as_the_plain_log(tmp_path):
    # azure-ai-ml operations/_job_ops_helper.py stream_logs_until_completion / _incremental_print
    name = "user_logs/std_log_process_0.txt"
    path = tmp_path / "stream.log"
    path.write_text("RunId: keen_hat_3q7w\nWeb View: https://ml.azure.com/runs/keen_hat_3q7w?wsid=/subscriptions/x\n"
                    f"\nStreaming {name}\n{'=' * (len(name) + 10)}\n\n" + "step 1 loss 2.3\n" + "\n".join(TRACE) + "\n"
                    "\nExecution Summary\n=================\nRunId: keen_hat_3q7w\n")
    assert detect_format(path.read_text().split("\n")) == "text"
    result, records = _records(path)
    assert _failed(result) == ["cuda_oom"]


def test_a_csv_header_needs_a_text_column_and_a_time_or_pod_column():
    assert files.csv_log_header(b"@timestamp,kubernetes.pod.name,message") == ["@timestamp", "kubernetes.pod.name",
                                                                               "message"]
    assert files.csv_log_header(b'"TimeGenerated [UTC]",PodName,LogMessage\r') is not None
    assert files.csv_log_header(b"epoch,step,loss,message") is None  # no time or pod column
    assert files.csv_log_header(b"time,loss,lr") is None  # no text column
    assert files.csv_log_header(b"2024-05-01 10:00:00,123 INFO message, time") is None
    assert files.csv_log_header(b"step 1, loss 2.3, message, time") is None  # a name with a space is no column


def test_a_csv_read_in_small_blocks_gives_the_same_rows(tmp_path, monkeypatch):
    text = ('@timestamp,kubernetes.pod_name,message\r\n2024-05-01T10:00:00Z,w-1,"a, ""b""\r\nc"\r\n'
            '2024-05-01T10:00:01Z,,\r\n\r\n2024-05-01T10:00:02Z,w-2,"x"\r\n')
    path = tmp_path / "t.csv"
    path.write_bytes(text.encode())
    whole = b"".join(files.CsvRecordLines(open(path, "rb"), files.csv_log_header(text.split("\n")[0].encode())).read()
                     for _ in [0])
    for size in (1, 2, 3, 7):
        monkeypatch.setattr(files, "BLOCK", size)
        got = files.CsvRecordLines(open(path, "rb"), files.csv_log_header(text.split("\n")[0].encode()))
        data = b""
        while True:
            chunk = got.read(64)
            if not chunk:
                break
            data += chunk
        assert data == whole
    rows = [json.loads(line) for line in whole.decode().splitlines()]
    assert [r.get("message") for r in rows] == ['a, "b"\r\nc', "", "x"]
    assert rows[1]["kubernetes.pod_name"] == ""


def test_aws_logs_tail_json_at_a_whole_second_keeps_its_event(tmp_path):
    # isoformat() has no fraction at a whole second: the head is still taken where the stream names a container
    stream = f"node-application.var.log.containers.{POD}_team-a_pytorch-{'7a1e' * 16}.log"
    events = []
    for k, line in enumerate(["[rank3]: step 1", *(f"[rank3]: {t}" for t in TRACE)]):
        record = {"log": line + "\n", "stream": "stderr", "kubernetes": {"pod_name": POD, "container_name": "pytorch"}}
        t = f"2024-05-01T10:00:0{k}" + ("+00:00" if k == 0 else ".250000+00:00")
        events.append(f"{t} {stream} \n{json.dumps(record, indent=4)}\n")
    path = tmp_path / "tail.log"
    path.write_text("".join(events))
    result, records = _records(path)
    assert _failed(result) == ["cuda_oom"] and result.curation.unreadable_lines == 0
    assert {r.pod for r in records if r.kind == "trace"} == {POD}
    assert [(d.first_failure or {}).get("rank") for d in result.diagnoses if d.category == "cuda_oom"] == [3]


def test_a_folder_reads_a_csv_export_but_not_a_table_a_run_writes_beside_its_log(tmp_path):
    """A run's folder holds tables that are no log (Lightning's CSVLogger `metrics.csv`): read as plain text, it
    would be a pod and a job of its own (`running`). A log store's export in the same folder is read; a table named
    on the command line is read as given."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "metrics.csv").write_text("epoch,step,train_loss\n0,49,0.53\n0,99,0.41\n")
    (run / "train.log").write_text("\n".join(TRACE) + "\n")
    (run / "export.csv").write_bytes((FIXTURES / "kibana_discover.csv").read_bytes())
    result, _ = _records(run)
    jobs = sorted(d.job for d in result.diagnoses)
    assert "default/metrics" not in jobs
    assert "default/train" in jobs and len(jobs) == 2
    alone, _ = _records(run / "metrics.csv")
    assert [d.job for d in alone.diagnoses] == ["default/metrics"]


def test_a_folder_leaves_out_a_pretty_printed_object_that_is_no_log_but_reads_the_forms_that_print_so(tmp_path):
    """A Hugging Face output folder's config.json / trainer_state.json (json.dumps(..., indent=2)) beside the run's log
    are no log: each would be a job of its own. CloudWatch's pretty-printed answer and journalctl -o json-pretty in the
    same folder are read; JSON lines are read whatever their keys; a file named on the command line is read as given."""
    run = tmp_path / "out"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLM"], "hidden_size": 64}, indent=2) + "\n")
    state = {"best_metric": None, "global_step": 20, "log_history": [{"epoch": 0.5, "loss": 2.1, "step": 10}]}
    (run / "trainer_state.json").write_text(json.dumps(state, indent=2, sort_keys=True) + "\n")
    (run / "train.log").write_text("\n".join(TRACE) + "\n")
    (run / "events.json").write_bytes((FIXTURES.parent / "envelopes_h27d" / "cloudwatch_get_log_events.json").read_bytes())
    (run / "journal.json").write_bytes((FIXTURES.parent / "envelopes_h27d" / "journal_pretty.json").read_bytes())
    (run / "app.json").write_text(json.dumps({"event": "step", "loss": 2.0}) + "\n")
    found = sorted(Path(p).name for p in files._log_files([str(run)])[0])
    assert found == ["app.json", "events.json", "journal.json", "train.log"]
    alone, _ = _records(run / "config.json")
    assert [d.job for d in alone.diagnoses] == ["default/config"]


def _byte_level_vocab(words: list[str]) -> dict[str, int]:
    """A vocabulary laid out as a byte-level BPE tokenizer saves it: 256 byte symbols, then merges by frequency,
    then whole words; `words` come after 600 merges, where a real vocabulary's common words are."""
    vocab = {chr(0x100 + i): i for i in range(256)}
    vocab.update({f"\u0120m{i}": 256 + i for i in range(600)})
    vocab.update({w: 856 + i for i, w in enumerate(words)})
    return vocab


def test_a_folder_leaves_out_a_one_line_object_that_is_no_log_but_reads_one_line_json_logs(tmp_path):
    """A model folder's tokenizer.json / vocab.json / config.json saved compact (json.dumps with no indent: one object
    on one line) beside the run's log are no log: each was a job of its own (`running`). A one-record JSON-lines file
    of a JSON logger (structlog's `event`, loguru's `text`, Docker's `log`) is read; so is any of them named on the
    command line."""
    run = tmp_path / "out"
    run.mkdir()
    vocab = _byte_level_vocab(["time", "data", "log", "message", "event", "level"])
    tokenizer = {"version": "1.0", "truncation": None, "padding": None,
                 "added_tokens": [{"id": 0, "content": "<|endoftext|>", "special": True}],
                 "normalizer": None, "pre_tokenizer": {"type": "ByteLevel"}, "decoder": {"type": "ByteLevel"},
                 "model": {"type": "BPE", "vocab": vocab, "merges": ["\u0120 t", "h e"]}}
    (run / "tokenizer.json").write_text(json.dumps(tokenizer))
    (run / "vocab.json").write_text(json.dumps(vocab))
    (run / "config.json").write_text(json.dumps({"architectures": ["GPT2LMHeadModel"], "n_layer": 2}) + "\n")
    (run / "special_tokens_map.json").write_text(json.dumps({"bos_token": "<s>", "eos_token": "</s>"}))
    (run / "train.log").write_text("\n".join(TRACE) + "\n")
    (run / "app.json").write_text(json.dumps({"step": 3, "loss": 2.0, "event": "step", "level": "info"}) + "\n")
    (run / "loguru.json").write_text(json.dumps({"text": "2026-05-01 10:00:29.680 | INFO | step 1\n",
                                                 "record": {"message": "step 1"}}) + "\n")
    (run / "docker.json").write_text(json.dumps({"log": "step 1 loss 2.4\n", "stream": "stdout",
                                                 "time": "2026-05-01T10:00:29.5Z"}))
    found = sorted(Path(p).name for p in files._log_files([str(run)])[0])
    assert found == ["app.json", "docker.json", "loguru.json", "train.log"]
    result, _ = _records(run)
    assert "default/tokenizer" not in [d.job for d in result.diagnoses]
    alone, _ = _records(run / "tokenizer.json")
    assert [d.job for d in alone.diagnoses] == ["default/tokenizer"]
