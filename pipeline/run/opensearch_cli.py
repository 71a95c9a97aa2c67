"""The command line's OpenSearch side: connection options, `indices`, `dashboard`, and the
sink `replay --opensearch` writes through.

Every option also reads an environment variable (SPEC.md): the URL from
GANGSCOPE_OPENSEARCH_URL, and GANGSCOPE_OPENSEARCH_{USERNAME,PASSWORD,CA_CERTS,
CLIENT_CERT,CLIENT_KEY,TIMEOUT}, GANGSCOPE_INDEX_PREFIX (GANGSCOPE_OPENSEARCH_PREFIX, older), GANGSCOPE_OPENSEARCH_PASSWORD_FILE, GANGSCOPE_DASHBOARD_TOKEN
(or _TOKEN_FILE). Secrets come from a file or the environment: given as flags (`--password`,
`--token`) they show in the process list, and are taken with a warning.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING

from gangscope.pipeline.errors import UsageError
from gangscope.pipeline.run.deprecated import DeprecatedAlias

if TYPE_CHECKING:  # rich loads with the command that prints, not with `gangscope --help`
    from rich.console import Console


def _env(name: str, default=None):
    return os.environ.get(f"GANGSCOPE_{name}", default)


def add_connection(p: argparse.ArgumentParser, *, url_required: bool = False) -> None:
    """--opensearch URL and the options a real cluster needs."""
    group = p.add_argument_group("OpenSearch")
    group.add_argument(
        "--opensearch",
        action=_GivenURL,
        default=_env("OPENSEARCH_URL"),
        metavar="URL",
        help="OpenSearch URL, http[s]://[user:password@]host:port (env GANGSCOPE_OPENSEARCH_URL)"
        + ("" if url_required else "; with it, records go to OpenSearch instead of --out"),
    )
    # One name for one thing: `consume` always said --index-prefix; --prefix stays for old scripts.
    group.add_argument("--index-prefix", dest="prefix", default=_env("INDEX_PREFIX") or _env("OPENSEARCH_PREFIX", ""),
                       metavar="P", help="put before every index and alias name (env GANGSCOPE_INDEX_PREFIX)")
    group.add_argument("--prefix", dest="prefix", action=DeprecatedAlias, replacement="--index-prefix", metavar="P")
    group.add_argument("--username", default=_env("OPENSEARCH_USERNAME"), help="basic auth user (env GANGSCOPE_OPENSEARCH_USERNAME)")
    group.add_argument("--password-file", default=None, metavar="PATH",
                       help="file whose first line is the basic auth password (env GANGSCOPE_OPENSEARCH_PASSWORD_FILE; "
                            "or the password itself in GANGSCOPE_OPENSEARCH_PASSWORD)")
    group.add_argument("--password", default=None, help="deprecated: the password shows in the process list; use "
                       "--password-file or GANGSCOPE_OPENSEARCH_PASSWORD")
    group.add_argument("--ca-certs", default=_env("OPENSEARCH_CA_CERTS"), metavar="FILE", help="CA bundle for TLS")
    group.add_argument("--client-cert", default=_env("OPENSEARCH_CLIENT_CERT"), metavar="FILE", help="client certificate")
    group.add_argument("--client-key", default=_env("OPENSEARCH_CLIENT_KEY"), metavar="FILE", help="client certificate key")
    group.add_argument(
        "--timeout", type=float, default=float(_env("OPENSEARCH_TIMEOUT", "30")), metavar="S", help="request timeout (s)"
    )


def connection(args) -> dict:
    return {
        "username": args.username,
        "password": opensearch_password(args),
        "ca_certs": args.ca_certs,
        "client_cert": args.client_cert,
        "client_key": args.client_key,
        "timeout": args.timeout,
    }


def opensearch_password(args) -> str | None:
    """The basic auth password: --password (kept for old scripts, with a warning: every user of
    the machine reads it in the process list), else the file --password-file names (its first
    line), else GANGSCOPE_OPENSEARCH_PASSWORD_FILE's, else GANGSCOPE_OPENSEARCH_PASSWORD. Never printed."""
    from gangscope.pipeline.run.config import password_flag_warning, read_secret_file

    if args.password is not None:
        if not getattr(args, "password_warned", False):
            sys.stderr.write(password_flag_warning("--password", "--password-file", "GANGSCOPE_OPENSEARCH_PASSWORD"))
            args.password_warned = True
        return args.password
    if args.password_file:
        return read_secret_file(args.password_file, "--password-file")
    path, password = _env("OPENSEARCH_PASSWORD_FILE"), _env("OPENSEARCH_PASSWORD")
    if path and password:
        raise UsageError("GANGSCOPE_OPENSEARCH_PASSWORD and GANGSCOPE_OPENSEARCH_PASSWORD_FILE are both set: set one")
    return read_secret_file(path, "GANGSCOPE_OPENSEARCH_PASSWORD_FILE") if path else password


class _GivenURL(argparse.Action):
    """Stores --opensearch and notes that it came from the command line, not the environment."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)
        namespace.opensearch_given = True


def url_from_environment(args) -> bool:
    """True when --opensearch holds GANGSCOPE_OPENSEARCH_URL and was not given on the command line."""
    return bool(args.opensearch) and not getattr(args, "opensearch_given", False)


def _url(args) -> str:
    if not args.opensearch:
        raise UsageError("--opensearch URL is required (or set GANGSCOPE_OPENSEARCH_URL)")
    from gangscope.pipeline.run.config import check_url, warn_of_url_password

    check_url(args.opensearch, "--opensearch")
    if getattr(args, "opensearch_given", False) and not getattr(args, "url_password_warned", False):
        warn_of_url_password(args.opensearch, "--opensearch", "--password-file")
        args.url_password_warned = True
    return args.opensearch


def redacted_url(url: str) -> str:
    from gangscope.pipeline.sinks.indices import redact

    return redact(url)


def make_sink(args):
    """The sink of `replay --opensearch` (reindex: fill new index versions, swap aliases at close)."""
    from gangscope.pipeline.sinks.opensearch import OpenSearchSink

    dead_letter = os.path.join(args.out, "dead-letter.ndjson") if getattr(args, "out", None) else None
    return OpenSearchSink(
        _url(args), prefix=args.prefix, reindex=getattr(args, "reindex", False), dead_letter=dead_letter, **connection(args)
    )


def add_parsers(sub) -> None:
    indices = sub.add_parser(
        "indices",
        help="install or upgrade the index templates and aliases in OpenSearch",
        description="Install or upgrade gangscope's index templates, versioned indices and aliases "
        "(gangscope-<kind> -> gangscope-<kind>-v<N>). Running it again changes nothing.",
    )
    add_connection(indices, url_required=True)
    indices.add_argument("--shards", type=int, default=1, help="primary shards per index (default 1)")
    indices.add_argument("--replicas", type=int, default=None, help="replicas (default: 0 on one node, else 1)")
    indices.add_argument("--retain", default="7d", help="how long retired versions of step/error indices are kept (ISM)")
    indices.add_argument("--print", action="store_true", help="print the rendered templates instead of installing them")

    dashboard = sub.add_parser(
        "dashboard",
        help="serve the dashboard panels from OpenSearch over HTTP",
        description="Serve the panels (epoch progress, step metrics, errors, stack traces, gang events, "
        "diagnoses) from OpenSearch. Binds 127.0.0.1 by default.",
    )
    add_connection(dashboard, url_required=True)
    dashboard.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    dashboard.add_argument("--port", type=int, default=8050, help="port (default 8050; 0 lets the system pick a free one, printed when it listens)")
    dashboard.add_argument(
        "--token-file", default=_env("DASHBOARD_TOKEN_FILE"), metavar="PATH",
        help="file holding the bearer token every request must send (env GANGSCOPE_DASHBOARD_TOKEN_FILE; "
        "or the token itself in GANGSCOPE_DASHBOARD_TOKEN)",
    )  # fmt: skip
    dashboard.add_argument(
        "--trusted-proxy", default=_env("DASHBOARD_TRUSTED_PROXY"), metavar="ADDR",
        help="the address of the reverse proxy that ends TLS in front of the dashboard: its X-Forwarded-Proto is "
        "believed, so the token cookie is Secure behind https ('*' for any; env GANGSCOPE_DASHBOARD_TRUSTED_PROXY)",
    )  # fmt: skip
    dashboard.add_argument(
        "--token", default=None, metavar="TOKEN",
        help="deprecated: the token shows in the process list; use --token-file or GANGSCOPE_DASHBOARD_TOKEN",
    )  # fmt: skip


def cmd_indices(args, err: Console) -> int:
    from gangscope.pipeline.sinks import indices

    settings = indices.IndexSettings(shards=args.shards, replicas=args.replicas, retain=args.retain)
    if args.print:
        json.dump(indices.rendered(args.prefix, settings), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    client = indices.connect(_url(args), **connection(args))
    report = indices.install(client, args.prefix, settings)
    for line in report.lines:
        err.print(line, markup=False, soft_wrap=True)
    return 0


def dashboard_token(args, err: Console) -> str | None:
    """The dashboard's token: --token (kept for old scripts, with a warning: every user of the
    machine reads it in the process list), else the file --token-file names (its first line),
    else GANGSCOPE_DASHBOARD_TOKEN. Never printed."""
    if args.token is not None:
        err.print("gangscope: warning: --token shows the token to every user of this machine (the process list); "
                  "use --token-file PATH or GANGSCOPE_DASHBOARD_TOKEN", markup=False)  # fmt: skip
        return args.token or None
    if args.token_file:
        from gangscope.pipeline.run.config import read_secret_file

        return read_secret_file(args.token_file, "dashboard: --token-file").strip()
    return _env("DASHBOARD_TOKEN") or None


def cmd_dashboard(args, err: Console) -> int:
    from gangscope.pipeline.dashboard import serve

    token = dashboard_token(args, err)
    if not token and not loopback(args.host):
        raise UsageError(f"dashboard: --host {args.host} is reachable from other machines: it needs a token "
                         "(--token-file PATH or GANGSCOPE_DASHBOARD_TOKEN), or anyone who reaches it reads the logs")

    def listening(port: int) -> None:
        err.print(f"gangscope dashboard on http://{args.host}:{port}/ (Ctrl-C stops it)", markup=False)

    serve(_url(args), host=args.host, port=args.port, prefix=args.prefix, token=token, on_listening=listening,
          trusted_proxy=args.trusted_proxy, **connection(args))
    return 0


def loopback(host: str) -> bool:
    """Whether an address to bind is reachable from this machine only (127.0.0.0/8, ::1, localhost)."""
    import ipaddress

    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name: it may resolve to anything
        return False
