"""Redaction: secrets in logs never reach a sink; what only looks like a secret stays.

Every secret below is a made-up value with the real shape of its kind.
"""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gangscope.parsers import redact
from gangscope.parsers.records import ChainLink, ErrorRecord, EventRecord, Frame, TraceRecord
from gangscope.parsers.redact import MASK, Redactor, sensitive_name
from gangscope.pipeline.run.cli import main
from gangscope.pipeline.curate.container import ContainerCurator
from gangscope.pipeline.curate.stats import CurationStats
from gangscope.pipeline.sources.files import PodIdentity

UID = "0c6d1111-2222-3333-4444-555566667777"
POD = PodIdentity(namespace="team-a", pod="llama-train-worker-1", pod_uid=UID, container="pytorch")

AWS_KEY_ID = "AKIAZ3MQ7VXKQ4TR2NWB"
AWS_SECRET = "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"
HF = "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"
GHP = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
GITHUB_PAT = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWX0123"
SLACK = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
OPENAI = "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78"
WANDB = "3f2a9c4b8e1d7f6a5b4c3d2e1f0a9b8c7d6e5f4a"  # 40 hex, like a git sha: only its name gives it away
JWT = "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJzdWIiOiJzeXN0ZW06c2EifQ.c2lnbmF0dXJlLXZhbHVlLWhlcmU"
DB_PASSWORD = "S3cr3tPa55w0rd"
KEY_BODY = "MIIEpAIBAAKCAQEAw7Zb9c3dG1qF2kPzX8yVt4nR"

SECRET_SAMPLES = [
    (f"export AWS_ACCESS_KEY_ID={AWS_KEY_ID}", AWS_KEY_ID),
    (f"using credentials {AWS_KEY_ID} from the instance profile", AWS_KEY_ID),
    (f"AWS_SECRET_ACCESS_KEY={AWS_SECRET}", AWS_SECRET),
    (f"aws_secret_access_key = {AWS_SECRET}", AWS_SECRET),
    (f'{{"SecretAccessKey": "{AWS_SECRET}", "Expiration": "2026-03-02T10:00:00Z"}}', AWS_SECRET),
    (f"HF_TOKEN={HF}", HF),
    (f"huggingface-cli login --token {HF}", HF),
    (f"load_dataset('org/private', use_auth_token='{HF}')", HF),
    (f"curl -H 'Authorization: Bearer {JWT}' https://api.internal/v1", JWT),
    (f"headers={{'Authorization': 'token {GHP}'}}", GHP),
    (f"Authorization: Basic dHJhaW5lcjp{DB_PASSWORD}", DB_PASSWORD),
    (f"git clone https://x-access-token:{GHP}@github.com/org/repo", GHP),
    (f"GITHUB_TOKEN={GITHUB_PAT}", GITHUB_PAT),
    (f"posting to slack with {SLACK}", SLACK),
    (f"client = OpenAI(api_key='{OPENAI}')", OPENAI),
    (f"OPENAI_API_KEY is {OPENAI}", OPENAI),
    (f"WANDB_API_KEY={WANDB}", WANDB),
    (f"wandb: settings {{'api_key': '{WANDB}', 'project': 'llama'}}", WANDB),
    (f"db = postgresql://trainer:{DB_PASSWORD}@db.internal:5432/runs", DB_PASSWORD),
    (f"redis://:{DB_PASSWORD}@cache:6379/0", DB_PASSWORD),
    (f"host=db port=5432 user=ml password={DB_PASSWORD} dbname=runs", DB_PASSWORD),
    (f"Server=db;Database=runs;User Id=ml;Password={DB_PASSWORD};", DB_PASSWORD),
    (f"jdbc:postgresql://db/runs?user=ml&password={DB_PASSWORD}&ssl=true", DB_PASSWORD),
    (f'{{"DB_PASSWORD": "{DB_PASSWORD}", "num_tokens": 1024}}', DB_PASSWORD),
    (f"environ({{'PATH': '/usr/bin', 'MLFLOW_TRACKING_PASSWORD': '{DB_PASSWORD}'}})", DB_PASSWORD),
    (f"      CLIENT_SECRET:  {DB_PASSWORD}", DB_PASSWORD),
    (f"--db-password={DB_PASSWORD}", DB_PASSWORD),
    (f'{{"name": "REGISTRY_CREDENTIALS", "value": "{DB_PASSWORD}"}}', DB_PASSWORD),
    (f"machine api.wandb.ai login user password {WANDB}", WANDB),
    (f"-----BEGIN RSA PRIVATE KEY-----\n{KEY_BODY}\n{KEY_BODY[::-1]}\n-----END RSA PRIVATE KEY-----", KEY_BODY),
    (f"-----BEGIN OPENSSH PRIVATE KEY-----\n{KEY_BODY}", KEY_BODY),  # cut short: masked to the end
]


@pytest.mark.parametrize("text, secret", SECRET_SAMPLES, ids=[s[0][:40] for s in SECRET_SAMPLES])
def test_secret_is_masked(text, secret):
    out = Redactor().text(text)
    assert secret not in out
    assert MASK in out


NEAR_MISSES = [
    "saved checkpoint sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "git commit 4f2b1c9e8d7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c, model hash 0x7f3e9a2b4c6d8e0f",
    "step 120 | 1532.4 tokens/s | num_tokens: 1024 | max_tokens=512",
    "out = attn(query, key, value, key_padding_mask=key_padding_mask)",
    "tokenizer.pad_token_id = 0; eos_token: </s>; bos_token='<s>'",
    "TOKENIZERS_PARALLELISM=false MAX_TOKENS=4096",
    "KeyError: 'labels'",
    "scraping http://10.0.0.1:8080/metrics for user@example.com",
    "password: None",
    "sort_key=step cache_key: 'epoch-3'",
    "loss_scale: 65536.0 grad_norm: 1.25 hf_device_map={'': 0}",
    "task-7 disk-usage 93%",
]


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_miss_stays_untouched(text):
    assert Redactor().text(text) == text


@pytest.mark.parametrize(
    "name, secret",
    [("HF_TOKEN", True), ("AWS_SECRET_ACCESS_KEY", True), ("WANDB_API_KEY", True), ("DB_PASSWORD", True),
     ("GOOGLE_APPLICATION_CREDENTIALS", True), ("api_key", True), ("accessToken", True), ("clientSecret", True),
     ("X-Api-Key", True), ("MAX_TOKENS", False), ("TOKENIZERS_PARALLELISM", False), ("num_tokens", False),
     ("key_padding_mask", False), ("pad_token_id", False), ("eos_token", False), ("KeyError", False),
     ("sort_key", False)],
)  # fmt: skip
def test_names_that_say_secret(name, secret):
    assert sensitive_name(name) is secret


def test_text_without_a_hint_is_returned_as_is():
    text = "2024-05-01 epoch 3 step 1200 loss 1.234 lr 3e-4"
    assert Redactor().text(text) is text


def test_redaction_is_idempotent():
    r = Redactor()
    for text, _secret in SECRET_SAMPLES:
        once = r.text(text)
        assert r.text(once) == once

def test_a_mask_that_unblocks_an_earlier_rule_is_applied_in_the_same_call():
    # Found by bench/fuzz_parsers.py (target redact): masking the assignment's value removed the
    # `//` that had stopped the URL-password rule, so a second call masked more.
    r = Redactor()
    once = r.text("up://:TOKEN=xO://x:p@,O")
    assert once == "up://:[REDACTED]@,O"
    assert r.text(once) == once



def test_masks_are_counted_per_rule():
    r = Redactor()
    r.text(f"HF_TOKEN={HF} and {AWS_KEY_ID}")
    assert r.counts["huggingface_token"] == 1
    assert r.counts["aws_access_key_id"] == 1


def test_extra_patterns_from_configuration_are_masked():
    r = Redactor(extra=[r"\bcorp-[0-9a-f]{12}\b"])
    assert r.text("license corp-0123456789ab ok") == f"license {MASK} ok"
    assert r.counts["extra_1"] == 1


def test_an_invalid_extra_pattern_is_one_clear_error():
    with pytest.raises(ValueError, match=r"extra_1: not a valid regex .*: \(unclosed"):
        Redactor(extra=["(unclosed"])


def test_configure_replaces_the_redactor_records_go_through():
    try:
        redact.configure(extra=[r"\bcorp-[0-9a-f]{12}\b"])
        record = redact.redact_record(ErrorRecord(message="corp-0123456789ab", line="corp-0123456789ab"))
        assert record.message == MASK
    finally:
        redact.configure()


def test_every_text_field_of_a_trace_is_masked():
    trace = TraceRecord(
        exception_type="RuntimeError",
        message=f"token {HF} rejected",
        text=f"Traceback ...\n    login(token='{HF}')\nRuntimeError: token {HF} rejected",
        frames=[Frame(file="train.py", line=3, function="main", code=f"login(token='{HF}')")],
        chain=[ChainLink(exception_type="ValueError", message=f"bad {HF}",
                         frames=[Frame(file="a.py", line=1, function="f", code=f"x = '{HF}'")])],
        details={"exceptions": [{"message": f"sub {HF}"}], "env": {"DB_PASSWORD": DB_PASSWORD}},
    )  # fmt: skip
    Redactor().record(trace)
    encoded = json.dumps(redact_fields(trace))
    assert HF not in encoded and DB_PASSWORD not in encoded


def redact_fields(trace):
    from gangscope.parsers.records import to_dict

    return to_dict(trace)


def test_event_message_and_details_are_masked():
    event = EventRecord(reason="Failed", message=f"pull with {GHP} failed", details={"note": f"HF_TOKEN={HF}"})
    Redactor().record(event)
    assert GHP not in event.message and HF not in event.details["note"]


def test_curated_records_are_masked_before_they_leave_the_curator():
    lines = [
        "2024-05-01T12:00:00.100000000Z stderr F Traceback (most recent call last):",
        '2024-05-01T12:00:00.100000001Z stderr F   File "/workspace/train.py", line 12, in <module>',
        f"2024-05-01T12:00:00.100000002Z stderr F     hub.login(token='{HF}')",
        f"2024-05-01T12:00:00.100000003Z stderr F ValueError: invalid token {HF}",
    ]
    cur = ContainerCurator(POD, "cri", CurationStats())
    out = cur.feed_lines(lines) + cur.close()
    traces = [r for r in out if r.kind == "trace"]
    assert traces and traces[0].exception_type == "ValueError"
    assert all(HF not in json.dumps(redact_fields(r)) for r in out)


def test_a_private_key_printed_inside_a_traceback_message_is_masked_over_its_lines():
    t = "2024-05-01T12:00:00.2000000{:02d}Z stderr F {}"
    body = [
        "Traceback (most recent call last):",
        '  File "/workspace/ssh.py", line 4, in <module>',
        "    connect(key)",
        "ValueError: could not parse key:",
        "-----BEGIN OPENSSH PRIVATE KEY-----",
        KEY_BODY,
        KEY_BODY[::-1],
        "-----END OPENSSH PRIVATE KEY-----",
    ]
    cur = ContainerCurator(POD, "cri", CurationStats())
    out = cur.feed_lines([t.format(i, line) for i, line in enumerate(body)]) + cur.close()
    trace = next(r for r in out if r.kind == "trace")
    assert "-----END OPENSSH PRIVATE KEY-----" in trace.text  # the block is one trace
    assert KEY_BODY not in trace.text and KEY_BODY[::-1] not in trace.text
    assert KEY_BODY not in (trace.message or "")


# ----------------------------------------------------------------------------- end to end

SECRETS = [HF, AWS_KEY_ID, AWS_SECRET, WANDB, DB_PASSWORD, GHP]


def _log_lines():
    def at(i, stream, text):
        return f"2024-05-01T12:00:{i // 100:02d}.{i % 100:02d}0000000Z {stream} F {text}"

    dump = [  # the environment printed at start-up, and again inside an exception message
        f"HF_TOKEN={HF}",
        f"AWS_ACCESS_KEY_ID={AWS_KEY_ID}",
        f"AWS_SECRET_ACCESS_KEY={AWS_SECRET}",
        f"WANDB_API_KEY={WANDB}",
    ]
    lines = [at(i, "stdout", text) for i, text in enumerate(dump)]
    lines.append(at(10, "stdout", "epoch 1 step 10/100 loss 2.345"))
    lines.append(at(11, "stderr", f"OSError: [Errno 5] Input/output error: 'https://ml:{DB_PASSWORD}@minio.internal/ckpt/step-10.pt'"))
    trace = [
        "[rank0]: Traceback (most recent call last):",
        '[rank0]:   File "/workspace/train.py", line 40, in <module>',
        f"[rank0]:     api = HfApi(token='{HF}')",
        f"[rank0]: RuntimeError: launch failed with {GHP}; environment:",
        *(f"[rank0]: {text}" for text in dump),
    ]
    base = 2000
    lines += [f"2024-05-01T12:00:20.{base + i:04d}00000Z stderr F {text}" for i, text in enumerate(trace)]
    return lines


def test_replay_output_holds_no_secret_anywhere(tmp_path):
    logs = tmp_path / "logs" / f"team-a_llama-train-worker-0_{UID}" / "pytorch"
    logs.mkdir(parents=True)
    (logs / "0.log").write_text("\n".join(_log_lines()) + "\n")
    events = tmp_path / "events.ndjson"
    event = {
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": "llama-train-worker-0.1", "namespace": "team-a", "uid": "e1"},
        "involvedObject": {"kind": "Pod", "namespace": "team-a", "name": "llama-train-worker-0"},
        "reason": "Failed", "type": "Warning",
        "message": f"Failed to pull image: https://bot:{DB_PASSWORD}@registry.internal/llama:1",
        "firstTimestamp": "2024-05-01T12:00:30Z", "lastTimestamp": "2024-05-01T12:00:30Z", "count": 1,
    }  # fmt: skip
    events.write_text(json.dumps(event) + "\n")
    out = tmp_path / "out"
    main(["replay", str(tmp_path / "logs"), "--events", str(events), "--out", str(out), "--no-progress"])

    written = {p.name: p.read_text(errors="replace") for p in out.rglob("*") if p.is_file()}
    assert "report.html" in written and "trace.ndjson" in written
    everything = "\n".join(written.values())
    assert MASK in everything  # the secrets were there, and were masked
    for secret in SECRETS:
        leaks = [name for name, text in written.items() if secret in text]
        assert not leaks, f"{secret[:8]}... leaked into {leaks}"


@settings(max_examples=300, derandomize=True)
@given(st.lists(st.sampled_from(list(redact._active._hints) + ["loss", "step", "Tok", "KEY", "Pass", " ", "\n", "x"]), max_size=12))
def test_the_one_pass_hint_scan_agrees_with_the_substring_search(pieces):
    """Hyperscan (caseless literals) and `in` on the lowercased text find the same hints."""
    r = redact._active
    text = "".join(pieces)
    by_substring = any(h in text.lower() for h in r._hints)
    assert r._may_hold_secret(text, text.lower()) == by_substring


def test_a_github_or_npm_token_whose_checksum_holds_is_masked_even_glued_to_other_text():
    from gangscope.parsers.redact_rules import base62_crc32

    token = "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"  # base62-token.js's example: its CRC-32 holds
    assert base62_crc32(token[4:-6]) == token[-6:]
    redact_text = Redactor().text
    assert redact_text(f"payload=%7B%22t%22%3A%22{token}%22%7D") == f"payload=%7B%22t%22%3A%22{MASK}%22%7D"
    npm = "npm_" + token[4:]
    assert redact_text(f"x{npm}y") == f"x{MASK}y"
    # a wrong checksum glued to text is no token; standing alone, the shape is masked all the same
    wrong = token[:-1] + ("8" if token[-1] != "8" else "9")
    assert redact_text(f"%22{wrong}") == f"%22{wrong}"
    assert redact_text(f"token {wrong}") == f"token {MASK}"
