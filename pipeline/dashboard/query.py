"""What every panel query shares: the filters of the page and a search bound to the aliases."""

from __future__ import annotations

import math
import re
import time
from dataclasses import asdict, dataclass
from typing import Any, Mapping

from opensearchpy import OpenSearch
from opensearchpy import exceptions as os_exc

from gangscope.parsers import times
from gangscope.pipeline.sinks import indices
from gangscope.pipeline.sinks.indices import OpenSearchError, OpenSearchUnavailable

# "now-6h", "now-15m/m", or an ISO date/datetime as an <input type=datetime-local> sends it.
_TIME_RE = re.compile(r"^(now(-\d+[smhdw])?(/[smhd])?|\d{4}-\d\d-\d\d([T ]\d\d:\d\d(:\d\d(\.\d{1,9})?)?)?(Z|[+-]\d\d:\d\d)?)$")
_JOB_MAX = 512


@dataclass(frozen=True)
class Filters:
    """The page's filters: one job (or all) and a time range (open ends allowed)."""

    job: str | None = None
    since: str | None = None
    until: str | None = None

    @classmethod
    def from_args(cls, args: Mapping[str, str]) -> tuple["Filters", list[str]]:
        """Filters from query parameters; a value that is not understood is dropped and named."""
        problems: list[str] = []
        job = (args.get("job") or "").strip() or None
        if job and len(job) > _JOB_MAX:
            problems.append("job: too long, ignored")
            job = None
        window = {}
        for key in ("since", "until"):
            value = (args.get(key) or "").strip() or None
            if value and not _TIME_RE.match(value):
                problems.append(f"{key}: not a time (use now-6h or 2026-01-31T12:00), ignored")
                value = None
            window[key] = value
        return cls(job=job, **window), problems

    def clauses(self, time_field: str = "time") -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        if self.job:
            out.append({"term": {"job": self.job}})
        if self.since or self.until:
            bounds = {}
            if self.since:
                bounds["gte"] = _iso(self.since)
            if self.until:
                bounds["lte"] = _iso(self.until)
            out.append({"range": {time_field: bounds}})
        return out

    def query(self, *extra: dict[str, Any], must_not: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        clauses = self.clauses() + list(extra)
        if not clauses and not must_not:
            return {"match_all": {}}
        body: dict[str, Any] = {"filter": clauses}
        if must_not:
            body["must_not"] = must_not
        return {"bool": body}

    def as_dict(self) -> dict[str, str | None]:
        return asdict(self)


def _iso(value: str) -> str:
    # datetime-local sends "2026-01-31T12:00" (no zone); the dashboard speaks UTC throughout.
    if value.startswith("now"):
        return value
    value = value.replace(" ", "T")
    if re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d", value):  # OpenSearch's date formats want the seconds
        value += ":00"
    if re.search(r"(Z|[+-]\d\d:\d\d)$", value) or "T" not in value:
        return value
    return value + "Z"


class Search:
    """Searches over the aliases of one cluster and prefix; a missing index reads as empty."""

    SORT_TTL_S = 60.0

    def __init__(self, client: OpenSearch, prefix: str = "", url: str = "opensearch"):
        self.client = client
        self.prefix = prefix
        self.url = url
        self._sorts: dict[str, tuple[float, tuple[tuple[str, str], ...]]] = {}

    def index_sort(self, kind: str) -> tuple[tuple[str, str], ...]:
        """(field, order) pairs the kind's live index is sorted on; () when it is not sorted, missing, or its
        settings cannot be read (a user allowed to search only). Asked again after SORT_TTL_S: `gangscope
        indices` rebuilds an index whose sort is older than the templates and moves the alias."""
        now = time.monotonic()
        known = self._sorts.get(kind)
        if known and known[0] > now:
            return known[1]
        alias = indices.alias_name(kind, self.prefix)
        try:
            found = self.client.indices.get_settings(index=alias, name="index.sort.*", ignore_unavailable=True,
                                                     allow_no_indices=True)
        except os_exc.ConnectionError as exc:
            raise OpenSearchUnavailable(indices.describe(exc, self.url)) from None
        except os_exc.TransportError:
            found = {}
        sorts = {_sort_pairs(((body.get("settings") or {}).get("index") or {}).get("sort") or {}) for body in found.values()}
        pairs = sorts.pop() if len(sorts) == 1 else ()  # an alias over differently sorted indices: none
        self._sorts[kind] = (now + self.SORT_TTL_S, pairs)
        return pairs

    def __call__(self, kinds: str | tuple[str, ...], body: dict[str, Any]) -> dict[str, Any]:
        names = (kinds,) if isinstance(kinds, str) else kinds
        index = ",".join(indices.alias_name(k, self.prefix) for k in names)
        try:
            return self.client.search(index=index, body=body, ignore_unavailable=True, allow_no_indices=True)
        except os_exc.ConnectionError as exc:
            raise OpenSearchUnavailable(indices.describe(exc, self.url)) from None
        except os_exc.TransportError as exc:
            raise OpenSearchError(indices.describe(exc, self.url)) from None

    def each(self, searches: list[tuple[str, dict[str, Any]]], cached: bool = False) -> list[dict[str, Any]]:
        """Many searches, each (kind, body), in one round trip (_msearch), their answers in order;
        one that failed raises OpenSearchError as a single search does (a missing index reads as empty).
        `cached`: searches of size 1 go to the shard request cache too (OpenSearch caches only size 0
        unless asked; an entry lives until the shard's next refresh, as an aggregation's does)."""
        if not searches:
            return []
        lines: list[dict[str, Any]] = []
        for kind, body in searches:
            head = {"index": indices.alias_name(kind, self.prefix), "ignore_unavailable": True, "allow_no_indices": True}
            lines += [{**head, "request_cache": True} if cached else head, body]
        try:
            answers = self.client.msearch(body=lines)["responses"]
        except os_exc.ConnectionError as exc:
            raise OpenSearchUnavailable(indices.describe(exc, self.url)) from None
        except os_exc.TransportError as exc:
            raise OpenSearchError(indices.describe(exc, self.url)) from None
        for answer in answers:
            if "error" in answer:
                raise OpenSearchError(f"{self.url}: {answer.get('status')} {answer['error'].get('type', answer['error'])}")
        return answers


def _sort_pairs(sort: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    fields, orders = sort.get("field") or [], sort.get("order") or []
    fields = [fields] if isinstance(fields, str) else list(fields)
    orders = [orders] if isinstance(orders, str) else list(orders)
    return tuple((f, orders[i] if i < len(orders) else "asc") for i, f in enumerate(fields))


def hits(response: dict[str, Any]) -> list[dict[str, Any]]:
    return [h["_source"] for h in response.get("hits", {}).get("hits", [])]


def total(response: dict[str, Any]) -> int:
    value = response.get("hits", {}).get("total", 0)
    return int(value["value"] if isinstance(value, dict) else value)


def buckets(response_or_agg: dict[str, Any], *path: str) -> list[dict[str, Any]]:
    node: Any = response_or_agg.get("aggregations", response_or_agg)
    for key in path:
        node = (node or {}).get(key) or {}
    return node.get("buckets", []) if isinstance(node, dict) else []


def value(agg: dict[str, Any], name: str) -> float | None:
    v = (agg.get(name) or {}).get("value")
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else v


def as_string(agg: dict[str, Any], name: str) -> str | None:
    node = agg.get(name) or {}
    return node.get("value_as_string") if node.get("value") is not None else None


_NICE_MS = [1000 * s for s in (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600,
                               43200, 86400, 172800, 604800)]


def time_bounds(search: Search, kinds: str | tuple[str, ...], filters: Filters, *extra: dict[str, Any]) -> tuple[float, float] | None:
    """First and last `time` (epoch ms) of the filtered documents, or None when there are none."""
    r = search(kinds, {"size": 0, "query": filters.query(*extra),
                       "aggs": {"first": {"min": {"field": "time"}}, "last": {"max": {"field": "time"}}}})
    aggs = r.get("aggregations") or {}
    first, last = value(aggs, "first"), value(aggs, "last")
    if first is None or last is None:
        return None
    return first, last


def interval_ms(bounds: tuple[float, float] | None, buckets_wanted: int = 48) -> int:
    """A round bucket width that gives about `buckets_wanted` buckets over the range."""
    if bounds is None:
        return 60_000
    span = max(0.0, bounds[1] - bounds[0])
    want = span / max(1, buckets_wanted)
    for ms in _NICE_MS:
        if ms >= want:
            return ms
    return int(math.ceil(want / 86_400_000) * 86_400_000)


def jobs(search: Search, filters: Filters) -> list[str]:
    """Every job that has any record in the time range (for the job picker)."""
    unscoped = Filters(since=filters.since, until=filters.until)
    r = search(indices.KINDS, {"size": 0, "query": unscoped.query(),
                               "aggs": {"jobs": {"terms": {"field": "job", "size": 500, "order": {"_key": "asc"}}}}})
    return [b["key"] for b in buckets(r, "jobs")]


def iso_ms(value: str | None) -> float | None:
    """Epoch milliseconds of an RFC 3339 time (nanoseconds cut to micro), None when unreadable."""
    instant = times.parse(value)
    if instant is None:
        return None
    micro = int(instant.fraction[:6].ljust(6, "0")) if instant.fraction else 0
    return (instant.whole * 10**6 + micro) / 10**6 * 1000
