"""The OpenSearch commands as a user runs them, against the real server."""

from pathlib import Path

import pytest
from opensearchpy.helpers import scan

from gangscope.pipeline.sinks import indices
from gangscope.pipeline.run.cli import main

RUNS = Path(__file__).parent.parent / "fixtures" / "runs"


@pytest.fixture
def prefix(opensearch_url, index_prefix):
    value = index_prefix + "-"
    yield value
    indices.delete_all(indices.connect(opensearch_url), value)


def documents(url: str, alias: str) -> dict[str, dict]:
    client = indices.connect(url)
    client.indices.refresh(index=alias)
    return {h["_id"]: h["_source"] for h in scan(client, index=alias, query={"query": {"match_all": {}}})}


def test_replay_into_opensearch_twice_leaves_the_same_documents(opensearch_url, prefix, tmp_path):
    run = str(RUNS / "rank_raises")
    args = ["replay", run, "--opensearch", opensearch_url, "--prefix", prefix, "--out", str(tmp_path), "--no-progress"]
    assert main(["indices", "--opensearch", opensearch_url, "--prefix", prefix]) == 0
    assert main(args) == 0
    first = {kind: documents(opensearch_url, f"{prefix}gangscope-{kind}") for kind in ("trace", "error", "diagnosis")}
    assert main(args) == 0
    second = {kind: documents(opensearch_url, f"{prefix}gangscope-{kind}") for kind in ("trace", "error", "diagnosis")}
    assert first == second
    assert any(d["exception_type"] == "KeyError" for d in first["trace"].values())
    (diagnosis,) = first["diagnosis"].values()
    assert (diagnosis["category"], diagnosis["first_failure"]["rank"]) == ("python_exception", 3)


def test_replay_to_a_server_that_is_down_says_so_in_one_line(capsys, tmp_path):
    code = main(["replay", str(RUNS / "rank_raises"), "--opensearch", "http://127.0.0.1:9", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert "not reachable" in err and "Traceback" not in err


def test_indices_print_renders_the_templates_without_a_server(capsys):
    assert main(["indices", "--opensearch", "http://127.0.0.1:9", "--print"]) == 0
    assert "gangscope-step" in capsys.readouterr().out
