"""A job's records in OpenSearch, as the consumer service reads them back and corrects them.

The service writes records as they are curated; what needs a job's whole picture (its diagnosis,
its attempts cut anew by a late event) reads them back from the index, and a correction is a
bulk request of its own: an attempt field updated in place, or documents no longer made deleted.
"""

from __future__ import annotations

from typing import Iterable

from opensearchpy.helpers import bulk, scan

from gangscope.parsers.records import Record, from_dict
from gangscope.pipeline.sinks import indices
from gangscope.pipeline.sinks.indices import OpenSearchError


def job_records(client, prefix: str, job: str, kinds: Iterable[str]) -> list[Record]:
    """Every record of `job` of these kinds (the indices refreshed first: what was just written counts)."""
    names = ",".join(indices.alias_name(k, prefix) for k in kinds)
    client.indices.refresh(index=names, ignore_unavailable=True, allow_no_indices=True)
    hits = scan(client, index=names, query={"query": {"term": {"job": job}}}, size=5000,
                ignore_unavailable=True, allow_no_indices=True)
    return [from_dict(h["_source"]) for h in hits]


def set_attempts(client, prefix: str, records: Iterable[Record]) -> int:
    """Write each record's `attempt` into its document (the rest of the document stays)."""
    actions = [{"_op_type": "update", "_index": indices.alias_name(r.kind, prefix), "_id": r.id,
                "doc": {"attempt": r.attempt}} for r in records]
    return _send(client, actions, missing_ok=False)


def delete(client, prefix: str, records: Iterable[Record]) -> int:
    """Delete the documents of these records (one already gone is no error)."""
    actions = [{"_op_type": "delete", "_index": indices.alias_name(r.kind, prefix), "_id": r.id} for r in records]
    return _send(client, actions, missing_ok=True)


def _send(client, actions: list[dict], missing_ok: bool) -> int:
    if not actions:
        return 0
    done, errors = bulk(client, actions, raise_on_error=False, max_retries=3, initial_backoff=0.5)
    bad = [e for e in errors if not (missing_ok and next(iter(e.values())).get("status") == 404)]
    if bad:
        first = next(iter(bad[0].values()))
        raise OpenSearchError(f"{len(bad)} of {len(actions)} corrections refused (first: {first.get('status')} "
                              f"{str(first.get('error'))[:200]})")
    return done
