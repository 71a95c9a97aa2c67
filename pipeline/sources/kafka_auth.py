"""Kafka SASL credentials checked once, before any client is built: a refusal is one line, at once.

Why not leave it to kafka-python (3.0.12): it retries a refused SASL login until its bootstrap
timeout (30 s) and then reports only "Unable to bootstrap"; and since the broker sends its
refusal just before closing (after `connection.failed.authentication.delay.ms`), the client
often reads the answer together with the close and drops it (kafka/net/transport.py,
`_read_from_sock`: an EOF aborts before the bytes read with it are handed on), so even its
logs say "socket disconnected". This check speaks the two SASL requests itself over one
connection and reports what the broker answered.

Wire format (Kafka protocol guide; message specs in apache/kafka
clients/src/main/resources/common/message/): request header v1 (api_key int16, api_version
int16, correlation_id int32, client_id string), response header v0 (correlation_id int32).
SaslHandshake (key 17) v1: mechanism string -> error_code int16, mechanisms [string].
SaslAuthenticate (key 36) v0: auth_bytes bytes -> error_code int16, error_message nullable
string, auth_bytes bytes. PLAIN's token is RFC 4616's `authzid NUL authcid NUL passwd`.
Other mechanisms (SCRAM, OAUTHBEARER) are checked as far as the handshake: offered or not.
"""

from __future__ import annotations

import socket
import ssl
import struct

from gangscope.pipeline.errors import UsageError

SASL_HANDSHAKE, SASL_AUTHENTICATE = 17, 36
# error codes of the protocol guide
UNSUPPORTED_SASL_MECHANISM, ILLEGAL_SASL_STATE, SASL_AUTHENTICATION_FAILED = 33, 34, 58


class KafkaAuthError(UsageError):
    """The broker refused the credentials or the mechanism: a configuration error (exit 2)."""


class _Unreachable(Exception):
    """This server could not be talked to (refused, timed out, TLS, closed early)."""


def _string(text: str | None) -> bytes:
    if text is None:
        return struct.pack(">h", -1)
    raw = text.encode("utf-8")
    return struct.pack(">h", len(raw)) + raw


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.at = data, 0

    def take(self, fmt: str):
        size = struct.calcsize(fmt)
        if self.at + size > len(self.data):
            raise _Unreachable("short answer from the broker")
        (value,) = struct.unpack_from(fmt, self.data, self.at)
        self.at += size
        return value

    def string(self) -> str | None:
        n = self.take(">h")
        if n < 0:
            return None
        raw = self.data[self.at:self.at + n]
        self.at += n
        return raw.decode("utf-8", "replace")


class _Connection:
    """One blocking connection that sends a request and reads its whole answer."""

    def __init__(self, host: str, port: int, cfg, timeout: float):
        try:
            sock = socket.create_connection((host, port), timeout=timeout)
        except OSError as exc:
            raise _Unreachable(exc.strerror or str(exc) or type(exc).__name__) from None
        if cfg.security_protocol == "SASL_SSL":
            try:
                sock = _tls_context(cfg).wrap_socket(sock, server_hostname=host)
            except (ssl.SSLError, OSError) as exc:
                sock.close()
                raise _Unreachable(f"TLS handshake failed: {getattr(exc, 'reason', None) or exc}") from None
        self.sock = sock
        self.client_id = getattr(cfg, "client_id", None) or "gangscope"
        self.correlation = 0

    def ask(self, api_key: int, version: int, body: bytes) -> _Reader:
        self.correlation += 1
        header = struct.pack(">hhi", api_key, version, self.correlation) + _string(self.client_id)
        frame = header + body
        try:
            self.sock.sendall(struct.pack(">i", len(frame)) + frame)
            size = struct.unpack(">i", self._exactly(4))[0]
            answer = _Reader(self._exactly(size))
        except OSError as exc:
            raise _Unreachable(exc.strerror or str(exc) or type(exc).__name__) from None
        if answer.take(">i") != self.correlation:
            raise _Unreachable("answer to another request")
        return answer

    def _exactly(self, n: int) -> bytes:
        chunks, left = [], n
        while left:
            chunk = self.sock.recv(min(left, 1 << 16))
            if not chunk:
                raise _Unreachable("the broker closed the connection")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


def _tls_context(cfg) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=getattr(cfg, "ssl_cafile", None))
    ctx.check_hostname = bool(getattr(cfg, "ssl_check_hostname", True))
    if getattr(cfg, "ssl_certfile", None):
        ctx.load_cert_chain(cfg.ssl_certfile, getattr(cfg, "ssl_keyfile", None))
    return ctx


def _servers(bootstrap: str) -> list[tuple[str, int]]:
    out = []
    for item in (s.strip() for s in bootstrap.split(",")):
        if not item:
            continue
        host, _, port = item.rpartition(":")
        if not host or not port.isdigit():
            raise UsageError(f"Kafka bootstrap server {item!r} is not host:port")
        out.append((host.strip("[]"), int(port)))
    return out


def _login(conn: _Connection, where: str, cfg) -> None:
    mechanism = cfg.sasl_mechanism
    answer = conn.ask(SASL_HANDSHAKE, 1, _string(mechanism))
    code = answer.take(">h")
    offered = [answer.string() for _ in range(max(0, answer.take(">i")))]
    if code == UNSUPPORTED_SASL_MECHANISM:
        raise KafkaAuthError(f"Kafka at {where} does not offer SASL mechanism {mechanism} "
                             f"(it offers {', '.join(m for m in offered if m) or 'none'})")
    if code == ILLEGAL_SASL_STATE:
        raise KafkaAuthError(f"Kafka at {where} does not expect SASL on this listener "
                             f"(security_protocol is {cfg.security_protocol}; is it a PLAINTEXT or SSL listener?)")
    if code:
        raise KafkaAuthError(f"Kafka at {where} refused the SASL handshake (error code {code})")
    if mechanism != "PLAIN":
        return
    token = b"\0" + (cfg.sasl_username or "").encode("utf-8") + b"\0" + (cfg.sasl_password or "").encode("utf-8")
    answer = conn.ask(SASL_AUTHENTICATE, 0, struct.pack(">i", len(token)) + token)
    code = answer.take(">h")
    message = answer.string()
    if code:
        what = "authentication failed" if code == SASL_AUTHENTICATION_FAILED else f"login refused (error code {code})"
        said = f": {message}" if message else ""
        raise KafkaAuthError(f"Kafka at {where}: SASL {what} for user {cfg.sasl_username!r} "
                             f"(mechanism {mechanism}){said}")


def check(cfg, context: str, timeout: float = 15.0) -> None:
    """With a SASL security_protocol: log in once to the first bootstrap server that answers.

    Raises KafkaAuthError when a broker refuses the user or the mechanism, UsageError when no
    bootstrap server could be talked to; returns quietly otherwise (and without SASL).
    `context` starts the message ("consume", "--from-kafka")."""
    if not str(cfg.security_protocol).startswith("SASL"):
        return
    try:
        _check(cfg, timeout)
    except UsageError as exc:
        raise type(exc)(f"{context}: {exc}") from None


def _check(cfg, timeout: float) -> None:
    problems = []
    for host, port in _servers(cfg.bootstrap):
        where = f"{host}:{port}"
        try:
            conn = _Connection(host, port, cfg, timeout)
        except _Unreachable as exc:
            problems.append(f"{where}: {exc}")
            continue
        try:
            _login(conn, where, cfg)
            return
        except _Unreachable as exc:
            problems.append(f"{where}: {exc}")
        finally:
            conn.close()
    raise UsageError(f"cannot reach Kafka at {cfg.bootstrap} ({'; '.join(problems) or 'no servers'})")
