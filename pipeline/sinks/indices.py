"""OpenSearch indices: templates rendered from templates/index, versioned indices behind aliases.

Every record kind lives in a concrete index `<prefix>gangscope-<kind>-v<N>` that readers and the
sink reach through the alias `<prefix>gangscope-<kind>`. `install` creates what is missing and
upgrades what is older than the templates; `Reindex` builds `v<N+1>` beside the live version and
moves every alias in one `_aliases` call, so a reader sees either the old index or the new one,
never a half-built one.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Iterable
from urllib.parse import urlsplit, urlunsplit

import jinja2
from opensearchpy import OpenSearch, Urllib3HttpConnection
from opensearchpy import exceptions as os_exc

import gangscope.templates
from gangscope.parsers.records import RECORD_KINDS
from gangscope.pipeline.errors import SinkError

KINDS: tuple[str, ...] = RECORD_KINDS
# Kinds that grow with every step of every rank; only they get a retention policy.
HIGH_VOLUME_KINDS = ("step", "error")
TEMPLATE_PRIORITY = 200
ISM_PLUGIN = "opensearch-index-management"

_TEMPLATE_DIR = Path(gangscope.templates.__file__).parent / "index"
_VERSION_RE = re.compile(r"-v(\d+)$")


class OpenSearchError(SinkError):
    """A one-line, user-facing failure talking to OpenSearch (the CLI prints it, exit code 2)."""


class OpenSearchUnavailable(OpenSearchError):
    """The server could not be reached at all (refused, timed out, TLS failed)."""


@dataclass(frozen=True)
class IndexSettings:
    """Knobs of the rendered templates. `replicas=None` means 0 on a one-node cluster, else 1."""

    shards: int = 1
    replicas: int | None = None
    refresh_interval: str = "1s"
    total_fields_limit: int = 2000
    retain: str = "7d"


def redact(url: str) -> str:
    """The URL without user:password, for messages."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def connect(
    url: str,
    *,
    username: str | None = None,
    password: str | None = None,
    ca_certs: str | None = None,
    client_cert: str | None = None,
    client_key: str | None = None,
    verify_certs: bool = True,
    timeout: float = 30.0,
    compress: bool = False,
) -> OpenSearch:
    """A client for one cluster URL; credentials from the arguments or from the URL's user:password.

    Retries are ours (the sink backs off; the transport would retry at once), so the client's are off.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise OpenSearchError(f"not an OpenSearch URL (want http[s]://host:port): {redact(url)!r}")
    user = username if username is not None else parts.username
    secret = password if password is not None else parts.password
    host = {"host": parts.hostname, "port": parts.port or (443 if parts.scheme == "https" else 9200)}
    if parts.path.strip("/"):
        host["url_prefix"] = parts.path.rstrip("/")
    for label, path in (("CA bundle", ca_certs), ("client certificate", client_cert), ("client key", client_key)):
        if path and not Path(path).is_file():
            raise OpenSearchError(f"{label} not found: {path}")
    return OpenSearch(
        hosts=[host],
        http_auth=(user, secret or "") if user else None,
        use_ssl=parts.scheme == "https",
        verify_certs=verify_certs,
        ssl_show_warn=verify_certs,
        ca_certs=ca_certs,
        client_cert=client_cert,
        client_key=client_key,
        timeout=timeout,
        max_retries=0,
        retry_on_timeout=False,
        http_compress=compress,
        connection_class=Urllib3HttpConnection,
        # connections kept open: the consumer's bulk thread and its loop (checkpoints, read-backs) use
        # one client at once; urllib3's default of 1 opened a connection per request of the second and
        # warned 'Connection pool is full' each time
        pool_maxsize=4,
    )


def describe(exc: BaseException, url: str) -> str:
    """One line for a transport failure: what happened and where."""
    where = redact(url)
    if isinstance(exc, os_exc.SSLError):
        return f"OpenSearch at {where}: TLS failed ({_root_reason(exc)})"
    if isinstance(exc, os_exc.ConnectionTimeout):
        return f"OpenSearch at {where} did not answer in time"
    if isinstance(exc, os_exc.ConnectionError):
        return f"OpenSearch at {where} is not reachable ({_root_reason(exc)})"
    if isinstance(exc, os_exc.AuthenticationException):
        return f"OpenSearch at {where} refused the credentials (401)"
    if isinstance(exc, os_exc.AuthorizationException):
        return f"OpenSearch at {where} denied the request (403): {_error_reason(exc)}"
    if isinstance(exc, os_exc.TransportError):
        return f"OpenSearch at {where} answered {exc.status_code}: {_error_reason(exc)}"
    return f"OpenSearch at {where}: {exc}"


def _root_reason(exc: BaseException) -> str:
    inner = getattr(exc, "info", None) or exc.__cause__ or exc
    text = str(inner)
    for marker in ("Connection refused", "Name or service not known", "timed out", "CERTIFICATE_VERIFY_FAILED"):
        if marker in text:
            return marker.lower() if marker != "CERTIFICATE_VERIFY_FAILED" else "certificate verify failed"
    return text.splitlines()[0][:200] if text else type(inner).__name__


def _error_reason(exc: os_exc.TransportError) -> str:
    info = exc.info if isinstance(exc.info, dict) else {}
    err = info.get("error")
    if isinstance(err, dict):
        return f"{err.get('type', 'error')}: {err.get('reason', '')}"[:300]
    return str(exc.error)[:300]


# --- names ---------------------------------------------------------------------------------


def alias_name(kind: str, prefix: str = "") -> str:
    return f"{prefix}gangscope-{kind}"


def version_name(kind: str, version: int, prefix: str = "") -> str:
    return f"{alias_name(kind, prefix)}-v{version}"


def component_name(prefix: str = "") -> str:
    return f"{prefix}gangscope-common"


def policy_name(kind: str, prefix: str = "") -> str:
    return f"{prefix}gangscope-{kind}-retired"


# --- rendering -----------------------------------------------------------------------------


@cache
def _jinja() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(_TEMPLATE_DIR),
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # JSON, not HTML: strings go through |tojson
        keep_trailing_newline=True,
    )


def render(name: str, **params: Any) -> dict[str, Any]:
    """Render one template of templates/index and parse it (a template that is not JSON fails here)."""
    text = _jinja().get_template(name).render(**params)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:  # a bug in a template, not user input
        raise OpenSearchError(f"templates/index/{name} does not render to JSON: {exc}") from None


# Bumped whenever a template under templates/index changes a mapping or an index's sort; `install`
# upgrades older indices (2: the step index sorted on job, then time newest first).
SCHEMA = 2


def render_component(settings: IndexSettings, replicas: int) -> dict[str, Any]:
    return render(
        "common.json.j2",
        schema=SCHEMA,
        shards=settings.shards,
        replicas=replicas,
        refresh_interval=settings.refresh_interval,
        total_fields_limit=settings.total_fields_limit,
    )


def render_index_template(kind: str, prefix: str = "") -> dict[str, Any]:
    return render(f"{kind}.json.j2", prefix=prefix, schema=SCHEMA, priority=TEMPLATE_PRIORITY)


def render_policy(kind: str, settings: IndexSettings) -> dict[str, Any]:
    return render("retention_policy.json.j2", kind=kind, retain=settings.retain)


def rendered(prefix: str = "", settings: IndexSettings = IndexSettings(), replicas: int = 1) -> dict[str, Any]:
    """Everything `install` would send, by name (for `gangscope indices --print`)."""
    out: dict[str, Any] = {f"_component_template/{component_name(prefix)}": render_component(settings, replicas)}
    for kind in KINDS:
        out[f"_index_template/{alias_name(kind, prefix)}"] = render_index_template(kind, prefix)
    for kind in HIGH_VOLUME_KINDS:
        out[f"_plugins/_ism/policies/{policy_name(kind, prefix)}"] = render_policy(kind, settings)
    return out


# --- cluster state -------------------------------------------------------------------------


@dataclass
class KindState:
    """Where one kind's alias points, and which versions exist."""

    kind: str
    live: str | None  # concrete index behind the alias
    versions: dict[int, str] = field(default_factory=dict)

    @property
    def live_version(self) -> int | None:
        m = _VERSION_RE.search(self.live or "")
        return int(m.group(1)) if m else None

    @property
    def next_version(self) -> int:
        return max(self.versions, default=0) + 1


def _call(url: str, fn, *args, **kwargs):
    """Run one request, turning transport failures into a one-line OpenSearchError."""
    try:
        return fn(*args, **kwargs)
    except os_exc.ConnectionError as exc:
        raise OpenSearchUnavailable(describe(exc, url)) from None
    except os_exc.TransportError as exc:
        raise OpenSearchError(describe(exc, url)) from None


def _url(client: OpenSearch) -> str:
    conn = client.transport.get_connection()
    return getattr(conn, "host", "opensearch")


def kind_state(client: OpenSearch, kind: str, prefix: str = "") -> KindState:
    return kind_states(client, prefix, (kind,))[kind]


def kind_states(client: OpenSearch, prefix: str = "", kinds: Iterable[str] = KINDS) -> dict[str, KindState]:
    """Where each kind's alias points and which of its versions exist, in one request."""
    kinds = tuple(kinds)
    found = _call(_url(client), client.indices.get, index=",".join(f"{alias_name(k, prefix)}-v*" for k in kinds),
                  ignore_unavailable=True, allow_no_indices=True, expand_wildcards="open,closed")
    states = {k: KindState(k, None) for k in kinds}
    for name, body in found.items():
        m = _VERSION_RE.search(name)
        if not m:
            continue
        for kind in kinds:
            alias = alias_name(kind, prefix)
            if name == f"{alias}-v{m.group(1)}":
                states[kind].versions[int(m.group(1))] = name
                if alias in (body.get("aliases") or {}):
                    states[kind].live = name
    return states


def node_count(client: OpenSearch) -> int:
    return int(_call(_url(client), client.cluster.health)["number_of_nodes"])


def has_ism(client: OpenSearch) -> bool:
    plugins = _call(_url(client), client.cat.plugins, format="json")
    return any(p.get("component") == ISM_PLUGIN for p in plugins)


# --- install / upgrade ---------------------------------------------------------------------


@dataclass
class InstallReport:
    """What `install` did, one line per change, for the CLI."""

    lines: list[str] = field(default_factory=list)
    ism: bool = False

    def say(self, text: str) -> None:
        self.lines.append(text)


def install_templates(client: OpenSearch, prefix: str = "", settings: IndexSettings = IndexSettings(),
                      report: InstallReport | None = None) -> InstallReport:
    """Put the component template and one index template per kind (PUT is idempotent)."""
    report = report or InstallReport()
    url = _url(client)
    replicas = settings.replicas if settings.replicas is not None else (0 if node_count(client) == 1 else 1)
    _call(url, client.cluster.put_component_template, name=component_name(prefix),
          body=render_component(settings, replicas))
    for kind in KINDS:
        _call(url, client.indices.put_index_template, name=alias_name(kind, prefix),
              body=render_index_template(kind, prefix))
    report.say(f"templates: {component_name(prefix)} + {len(KINDS)} index templates (schema {SCHEMA}, "
               f"{settings.shards} shard(s), {replicas} replica(s))")
    return report


def install(client: OpenSearch, prefix: str = "", settings: IndexSettings = IndexSettings(),
            kinds: Iterable[str] = KINDS) -> InstallReport:
    """Install or upgrade templates, indices and aliases; running it again changes nothing.

    A live index older than the templates gets the new mapping in place when the change is additive;
    otherwise a new version is built server-side (`_reindex`) and the alias swapped — run it with
    writers stopped then, as documents they write to the old version meanwhile are not carried over.
    """
    report = install_templates(client, prefix, settings)
    url = _url(client)
    kinds = tuple(kinds)
    for kind, state in kind_states(client, prefix, kinds).items():
        alias = alias_name(kind, prefix)
        if state.live is None:
            if _call(url, client.indices.exists, index=alias):
                raise OpenSearchError(
                    f"{alias} is a concrete index, not an alias (written before `gangscope indices` ran?); "
                    f"move its data away or delete it, then run `gangscope indices` again")
            name = version_name(kind, state.next_version, prefix)
            _create_index(client, name, alias=alias)
            report.say(f"{kind}: created {name} behind {alias}")
            continue
        live_schema = _index_schema(client, state.live)
        if live_schema >= SCHEMA:
            report.say(f"{kind}: {alias} -> {state.live} is current (schema {live_schema})")
            continue
        template = render_index_template(kind, prefix)["template"]
        mapping = template["mappings"]
        common = render_component(settings, 1)["template"]["mappings"]["properties"]
        body = {**mapping, "properties": {**common, **mapping["properties"]}}

        def rebuild() -> None:
            new = version_name(kind, state.next_version, prefix)
            _create_index(client, new)
            _call(url, client.reindex, body={"source": {"index": state.live}, "dest": {"index": new}},
                  refresh=True, wait_for_completion=True, request_timeout=3600)
            swap_aliases(client, {alias: (state.live, new)})
            report.say(f"{kind}: rebuilt as {new} (schema {live_schema} -> {SCHEMA}), alias moved")

        if _index_sort(client, state.live) != (template.get("settings") or {}).get("index", {}).get("sort"):
            rebuild()  # a sort is fixed when an index is created
            continue
        try:
            client.indices.put_mapping(index=state.live, body=body)
        except os_exc.ConnectionError as exc:
            raise OpenSearchUnavailable(describe(exc, url)) from None
        except os_exc.RequestError:
            rebuild()
        else:
            report.say(f"{kind}: {state.live} mapping upgraded in place (schema {live_schema} -> {SCHEMA})")
    report.ism = install_retention(client, prefix, settings, report)
    return report


def install_retention(client: OpenSearch, prefix: str, settings: IndexSettings, report: InstallReport) -> bool:
    """Put the retention policies for the high-volume kinds if the ISM plugin is there; else say so."""
    if not has_ism(client):
        report.say(f"retention: ISM plugin ({ISM_PLUGIN}) is not installed on this cluster; policies for "
                   f"{', '.join(HIGH_VOLUME_KINDS)} not installed (see `gangscope indices --print`)")
        return False
    url = _url(client)
    for kind in HIGH_VOLUME_KINDS:
        name = policy_name(kind, prefix)
        body = render_policy(kind, settings)
        try:
            current = client.transport.perform_request("GET", f"/_plugins/_ism/policies/{name}")
            params = {"if_seq_no": current["_seq_no"], "if_primary_term": current["_primary_term"]}
        except os_exc.NotFoundError:
            params = {}
        _call(url, client.transport.perform_request, "PUT", f"/_plugins/_ism/policies/{name}",
              params=params, body=body)
    report.say(f"retention: ISM policies for retired {', '.join(HIGH_VOLUME_KINDS)} versions (delete at {settings.retain})")
    return True


def _index_sort(client: OpenSearch, index: str) -> dict[str, Any] | None:
    """The index's sort as a template writes it ({"field": [...], "order": [...]}), None when unsorted."""
    found = _call(_url(client), client.indices.get_settings, index=index, name="index.sort.*")
    sort = (found.get(index, {}).get("settings", {}).get("index") or {}).get("sort")
    return {key: sort[key] for key in ("field", "order") if key in sort} if sort else None


def _index_schema(client: OpenSearch, index: str) -> int:
    mapping = _call(_url(client), client.indices.get_mapping, index=index)
    meta = (mapping.get(index, {}).get("mappings", {}).get("_meta") or {}).get("gangscope") or {}
    return int(meta.get("schema", 0))


def _create_index(client: OpenSearch, name: str, alias: str | None = None) -> None:
    """Create a concrete index from its template; an index that already exists is left as it is."""
    body = {"aliases": {alias: {}}} if alias else {}
    try:
        client.indices.create(index=name, body=body, wait_for_active_shards=1)
    except os_exc.RequestError as exc:
        if exc.error != "resource_already_exists_exception":
            raise OpenSearchError(describe(exc, _url(client))) from None
    except os_exc.ConnectionError as exc:
        raise OpenSearchUnavailable(describe(exc, _url(client))) from None
    except os_exc.TransportError as exc:
        raise OpenSearchError(describe(exc, _url(client))) from None


def ensure(client: OpenSearch, prefix: str = "", kinds: Iterable[str] = KINDS,
           settings: IndexSettings = IndexSettings()) -> None:
    """Make sure each kind's alias exists: one request when they do, `install` for the missing ones."""
    missing = [k for k, state in kind_states(client, prefix, kinds).items() if state.live is None]
    if missing:
        install(client, prefix, settings, missing)


# --- alias swap and reindex ----------------------------------------------------------------


def swap_aliases(client: OpenSearch, moves: dict[str, tuple[str | None, str]]) -> None:
    """Move each alias from its old index to its new one, all in ONE atomic `_aliases` call."""
    actions: list[dict[str, Any]] = []
    for alias, (old, new) in moves.items():
        if old:
            actions.append({"remove": {"index": old, "alias": alias}})
        actions.append({"add": {"index": new, "alias": alias}})
    if actions:
        _call(_url(client), client.indices.update_aliases, body={"actions": actions})


class Reindex:
    """Build `v<N+1>` of each kind beside the live version; `commit` swaps the aliases at once.

    The caller writes into `target(kind)` (a concrete index, created on first use). Kinds that got
    no document keep their live index, so replaying one job's logs never empties another kind.
    `abort` (or leaving the `with` block by an exception) deletes the new indices and leaves the
    aliases alone. The previous version is kept for rollback (and gets the retention policy when
    ISM is there); older ones are deleted. Writers that go through the alias meanwhile (a running
    `gangscope consume`) still write to the old version: a reindex rebuilds from its own input.
    """

    def __init__(self, client: OpenSearch, prefix: str = "", kinds: Iterable[str] = KINDS,
                 settings: IndexSettings = IndexSettings()):
        self.client = client
        self.prefix = prefix
        self.settings = settings
        kinds = tuple(kinds)
        install_templates(client, prefix, settings)
        self.states = kind_states(client, prefix, kinds)
        self.targets: dict[str, str] = {}
        for state in self.states.values():
            # A version above the live one is a leftover of a reindex that died: it is half-built.
            for number, name in list(state.versions.items()):
                if state.live_version is not None and number > state.live_version:
                    _call(_url(client), client.indices.delete, index=name)
                    del state.versions[number]
        self.done = False

    def target(self, kind: str) -> str:
        """The new version of `kind`, created on first use."""
        name = self.targets.get(kind)
        if name is None:
            state = self.states.get(kind)
            if state is None:
                raise OpenSearchError(f"reindex: record kind {kind!r} was not part of this reindex")
            name = version_name(kind, state.next_version, self.prefix)
            _create_index(self.client, name)
            self.targets[kind] = name
        return name

    def __enter__(self) -> "Reindex":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if not self.done:
            self.abort() if exc_type else self.commit()

    def commit(self) -> dict[str, str]:
        """Refresh the new indices, then swap every alias that got documents in one call."""
        url = _url(self.client)
        moves: dict[str, tuple[str | None, str]] = {}
        empty: list[str] = []
        if self.targets:
            _call(url, self.client.indices.refresh, index=",".join(self.targets.values()))
        for kind, target in self.targets.items():
            if _call(url, self.client.count, index=target)["count"]:
                moves[alias_name(kind, self.prefix)] = (self.states[kind].live, target)
            else:
                empty.append(target)
        swap_aliases(self.client, moves)
        for target in empty:
            _call(url, self.client.indices.delete, index=target)
        self._retire(moves)
        self.done = True
        return {alias: new for alias, (_, new) in moves.items()}

    def abort(self) -> None:
        """Drop the half-built indices; the aliases never moved."""
        if self.targets:
            self.client.indices.delete(index=",".join(self.targets.values()), ignore_unavailable=True)
        self.done = True

    def _retire(self, moves: dict[str, tuple[str | None, str]]) -> None:
        """Keep the version just replaced (rollback); delete the ones before it."""
        url = _url(self.client)
        ism = None
        for kind, state in self.states.items():
            if alias_name(kind, self.prefix) not in moves:
                continue
            previous = state.live_version
            for number, name in state.versions.items():
                if previous is not None and number < previous:
                    _call(url, self.client.indices.delete, index=name)
            if state.live and kind in HIGH_VOLUME_KINDS:
                ism = has_ism(self.client) if ism is None else ism
                if ism:
                    _call(url, self.client.transport.perform_request, "POST",
                          f"/_plugins/_ism/add/{state.live}", body={"policy_id": policy_name(kind, self.prefix)})


def delete_all(client: OpenSearch, prefix: str) -> None:
    """Remove every index and template of one prefix (tests and tenants that leave)."""
    if not prefix:
        raise OpenSearchError("refusing to delete the unprefixed gangscope indices")
    for state in kind_states(client, prefix).values():
        for name in state.versions.values():
            client.indices.delete(index=name, ignore=[404])
    for kind in KINDS:
        client.indices.delete_index_template(name=alias_name(kind, prefix), ignore=[404])
    client.cluster.delete_component_template(name=component_name(prefix), ignore=[404])
