"""Issue 20's corpus through the other sink: every secret shape of tests/secrets_corpus.py, planted
in CRI logs, Fluent Bit records, events and tracebacks, replayed into a real OpenSearch; no
document of any kind holds one, and the look-alikes are there whole (the corpus and its planting
are tests/test_redact_corpus.py's)."""

from __future__ import annotations

import json

import pytest
from opensearchpy.helpers import scan

from gangscope.parsers.records import RECORD_KINDS
from gangscope.parsers.redact import MASK
from gangscope.pipeline.run.cli import main
from gangscope.pipeline.sinks import indices

from secrets_corpus import HARMLESS
from test_redact_corpus import CORPUS, _leaks, planted  # noqa: F401 -- planted is a fixture


@pytest.fixture
def prefix(opensearch_url, index_prefix):
    value = index_prefix + "-"
    yield value
    indices.delete_all(indices.connect(opensearch_url), value)


def test_no_secret_of_the_corpus_reaches_an_index(planted, opensearch_url, prefix, tmp_path):  # noqa: F811
    paths, events = planted
    assert main(["indices", "--opensearch", opensearch_url, "--prefix", prefix]) == 0
    assert main(["replay", *paths, "--events", events, "--opensearch", opensearch_url, "--prefix", prefix,
                 "--out", str(tmp_path), "--no-progress"]) == 0  # fmt: skip
    client = indices.connect(opensearch_url)
    indexed: dict[str, str] = {}
    for kind in RECORD_KINDS:
        alias = f"{prefix}gangscope-{kind}"
        client.indices.refresh(index=alias)
        indexed[alias] = "\n".join(json.dumps(h["_source"]) for h in scan(client, index=alias, query={"query": {"match_all": {}}}))
    assert not _leaks(indexed)
    for kind in ("trace", "error", "event"):
        assert indexed[f"{prefix}gangscope-{kind}"].count(MASK) >= len(CORPUS), kind
    messages = {json.loads(line)["message"] for line in indexed[f"{prefix}gangscope-event"].splitlines()}
    assert not [text for text in HARMLESS if text not in messages]
