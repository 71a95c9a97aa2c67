"""Envelope decoders and format detection (FORMATS.md section 1)."""

from gangscope.parsers.envelopes import (
    decode_cri,
    decode_docker,
    decode_fluentbit,
    detect_format,
)


def test_cri_line_splits_into_time_stream_tag_and_text():
    env = decode_cri("2016-10-06T00:17:09.669794202Z stdout P log content 1")
    assert env.time == "2016-10-06T00:17:09.669794202Z"
    assert env.stream == "stdout"
    assert env.partial is True
    assert env.text == "log content 1"


def test_cri_full_line_with_empty_content_is_an_empty_line():
    env = decode_cri("2019-05-07T18:57:50.904275087+00:00 stderr F ")
    assert env.partial is False and env.text == "" and env.stream == "stderr"


def test_cri_text_keeps_carriage_returns_and_extra_spaces():
    env = decode_cri("2024-01-01T00:00:00Z stderr F  50%|#####  | 5/10\r 60%|######  | 6/10")
    assert env.text == " 50%|#####  | 5/10\r 60%|######  | 6/10"


def test_cri_rejects_lines_that_are_not_cri():
    assert decode_cri("hello world foo bar") is None
    assert decode_cri("2024-01-01T00:00:00Z stdlog F x") is None
    assert decode_cri("") is None


def test_docker_line_without_newline_is_partial():
    env = decode_docker('{"log":"one, ","stream":"stdout","time":"2021-02-01T01:40:03.53413Z"}')
    assert env.partial is True and env.text == "one, "
    env = decode_docker('{"log":"three\\n","stream":"stderr","time":"2021-02-01T01:40:03.53415Z"}')
    assert env.partial is False and env.text == "three" and env.stream == "stderr"


def test_fluentbit_record_gives_text_and_kubernetes_block():
    env = decode_fluentbit(
        '{"@timestamp":1714564800.123456,"time":"2024-05-01T12:00:00.123456789Z","stream":"stderr","_p":"F",'
        '"log":"RuntimeError: boom","kubernetes":{"pod_name":"llama-train-worker-3","namespace_name":"team-a"}}'
    )
    assert env.text == "RuntimeError: boom"
    assert env.time == "2024-05-01T12:00:00.123456789Z"
    assert env.kubernetes["pod_name"] == "llama-train-worker-3"


def test_fluentbit_record_with_only_epoch_timestamp_gets_rfc3339_time():
    env = decode_fluentbit('{"@timestamp":1714564800.5,"log":"x\\n","stream":"stdout"}')
    assert env.time == "2024-05-01T12:00:00.500000Z"
    assert env.text == "x"


def test_fluentbit_rejects_records_with_wrong_types():
    assert decode_fluentbit('{"log": 5, "stream": "stdout"}') is None
    assert decode_fluentbit("[1, 2]") is None
    assert decode_fluentbit("{not json") is None


def test_detect_format_votes_on_the_first_lines():
    cri = ["2024-01-01T00:00:00.1Z stdout F a", "2024-01-01T00:00:00.2Z stderr F b"]
    docker = ['{"log":"a\\n","stream":"stdout","time":"2024-01-01T00:00:00Z"}']
    fluent = ['{"log":"a","stream":"stdout","kubernetes":{"pod_name":"p"}}']
    assert detect_format(cri) == "cri"
    assert detect_format(docker) == "docker"
    assert detect_format(fluent) == "fluentbit"
    assert detect_format(["Epoch 1/10", "loss: 0.3"]) == "text"
