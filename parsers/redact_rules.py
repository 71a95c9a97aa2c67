"""The detectors redaction runs: a table of `RedactionRule`s, each with the shape it finds, the
part of a match it masks, and the source of the shape (issue 20).

Each rule finds spans of a text to mask (`spans_of`); parsers/redact.py runs every rule whose
hints are in the text over the WHOLE text and masks the union of their spans, so no match of one
rule hides a secret from another (a harmless `Environment: ...` used to swallow the
`DB_PASSWORD=...` after it). A rule whose match can cover the start of another secret of its own
kind (`resume`) searches again from inside a match it did not mask.

Sources (facts carry over, their code does not): gitleaks config/gitleaks.toml (rules generated
from cmd/generate/config/rules/*.go), detect-secrets detect_secrets/plugins/*.py, trufflehog
pkg/detectors/*, and the issuers' own documentation named beside each rule.

Names and values: a name says secret strongly (password, secret, credential, passwd, pwd) or
weakly (token, key, auth, sig). After a strong name any value is masked but a placeholder
(none, true, yes, `$VAR`, `<...>`, `***`, ...) or a path; after a weak name only a value that
looks like a key (`looks_secret`): a small number, a boolean, a path, a model or tokenizer name
or a plain word stays. Names that say what the value is about rather than what it is
(`TOKEN_LIMIT`, `PASSWORD_MIN_LENGTH`, `SECRET_NAME`, `HF_TOKEN_PATH`) and exception names
(`NoCredentialsError`) are no secret names.
"""

from __future__ import annotations

import base64
import binascii
import re
import zlib
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterable

MASK = "[REDACTED]"

Span = tuple[int, int]


@dataclass(frozen=True)
class RedactionRule:
    """One kind of secret. `pattern` finds candidates; `secret` names the group masked (0: the
    whole match) or is a function of the match giving the spans to mask (none: a harmless
    match). `hints` are lowercase substrings one of which the text holds whenever the rule can
    match (the rule is skipped without them; empty: always run). `resume`: the group from whose
    start the search goes on after a match that masked nothing (a value that may hold another
    assignment). `source`: where the shape is documented. `after_hint`: for a rule whose spans all
    come from matches that hold one of its hints followed by what `after_hint` matches there (a
    secret name, the rest of the name and its separator: `_ASSIGNMENT`), an ASCII text where no
    hint is so followed is answered with no span without the rule's search (`hint_followed`);
    `in_long_option`: such a hint must also stand in a long option's name (`--` before it in its
    run of option-name characters, within the name's 66)."""

    name: str
    pattern: re.Pattern[str]
    secret: int | str | Callable[[re.Match[str]], Iterable[Span]] = 0
    hints: tuple[str, ...] = ()
    source: str = ""
    resume: str | None = None
    after_hint: re.Pattern[str] | None = None
    in_long_option: bool = False

    def spans_of(self, text: str, lower: str | None = None, present: frozenset[str] | set[str] | None = None) -> list[Span]:
        """The spans to mask. `lower`: `text.lower()` where the caller has it; `present`: the hints
        the ASCII `text` holds (caseless), where the caller found them (see `hint_followed`)."""
        if self.after_hint is not None and text.isascii() and not self.hint_followed(text, lower, present):
            return []
        spans: list[Span] = []
        search = self.pattern.search
        secret = self.secret
        pos = 0
        n = len(text)
        while pos <= n:
            m = search(text, pos)
            if m is None:
                break
            found = list(secret(m)) if callable(secret) else [m.span(secret)]
            found = [(s, e) for s, e in found if e > s and text[s:e] != MASK]
            spans.extend(found)
            if not found and self.resume is not None and m.start(self.resume) > m.start():
                pos = m.start(self.resume)
            else:
                pos = max(m.end(), m.start() + 1)
        return spans

    def hint_followed(self, text: str, lower: str | None = None, present: frozenset[str] | set[str] | None = None) -> bool:
        """Whether one of the hints (caseless) stands in the ASCII `text` followed by what
        `after_hint` matches from its end. A hint's occurrences are found with str.find on the
        lowered text (the same offsets: ASCII), each tried once with a bounded match: linear.
        `lower`: `text.lower()` where the caller made it already (a pass runs several rules over
        one text); `present`: the hints the text holds where the caller knows them (a Hyperscan
        scan's answer): a hint not among them finds nothing, and is not searched for."""
        if lower is None:
            lower = text.lower()
        follows = self.after_hint.match  # type: ignore[union-attr]
        for hint in self.hints:
            if present is not None and hint not in present:
                continue
            at = lower.find(hint)
            while at >= 0:
                if follows(text, at + len(hint)) is not None and (not self.in_long_option or _in_long_option(text, at)):
                    return True
                at = lower.find(hint, at + 1)
        return False


_OPTION_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def _in_long_option(text: str, at: int) -> bool:
    """Whether `--` stands before offset `at` in its run of option-name characters, within 66 of
    them (a name `--[A-Za-z][A-Za-z0-9_-]{0,63}` holding the hint from `at` starts there)."""
    start = at
    while start > 0 and at - start < 66 and text[start - 1] in _OPTION_CHARS:
        start -= 1
    return "--" in text[start:at]


# ----------------------------------------------------------------------------- names

_STRONG = ("secret", "password", "passwd", "credential", "passphrase")
# Lowercase names ending in `key` are secret only with one of these before it
# (`api_key`, `accessKey`, `private_key`); `sort_key`, `cache_key` are not.
_KEY_QUALIFIERS = frozenset(
    ("api", "access", "secret", "private", "auth", "signing", "encryption", "client", "account", "service",
     "master", "session", "ssh", "wandb", "openai", "hf", "license", "subscription", "x", "shared", "storage",
     "admin", "app", "user", "consumer", "webhook", "deploy", "sas")
)  # fmt: skip
# Tokenizer special tokens are printed in every model config; they are not credentials.
_SPECIAL_TOKENS = frozenset(("pad", "eos", "bos", "unk", "sep", "cls", "mask", "special", "additional", "start", "end",
                             "eot", "eod", "sot", "im", "image", "video", "audio", "vision", "default", "next", "max",
                             "min", "num", "first", "last", "new", "stop", "prefix", "suffix", "middle"))  # fmt: skip
# Names whose words do not say secret but whose tool's source does: OpenRLHF and the trainers
# built on it take the W&B API key as `--use_wandb` (`parser.add_argument("--use_wandb",
# type=str, default=None, help="wandb API key")`, then `wandb.login(key=args.use_wandb)`), and
# print their args. `use_wandb=True` stays: the name is weak, the value must look like a key.
_KEY_NAMES = frozenset(("use_wandb",))
# Last words of a name that say what the value is about, not that it is the secret:
# `TOKEN_LIMIT=4096`, `PASSWORD_MIN_LENGTH=12`, `SECRET_NAME=db-credentials`, `HF_TOKEN_PATH=...`.
_ABOUT = frozenset(("length", "len", "limit", "limits", "size", "count", "max", "min", "type", "types", "file", "files",
                    "path", "paths", "dir", "name", "names", "env", "enabled", "enable", "disabled", "mode", "ids",
                    "version", "expiry", "expires", "expiration", "ttl", "timeout", "prefix", "suffix", "field",
                    "fields", "header", "param", "policy", "rotation", "format", "hint", "prompt", "location", "ref",
                    "store", "manager", "provider", "backend", "index", "idx", "parallelism", "padding", "mask",
                    "budget", "rate", "url", "uri", "endpoint", "host", "port", "user", "username", "login", "kind",
                    "required", "set", "exists", "source", "sources", "strategy", "schema", "scope", "scopes",
                    "method", "algorithm", "error", "errors", "exception", "warning", "exit", "fault",
                    "str", "id", "hasher", "hashers", "scheme", "strength", "complexity", "validators", "scanning",
                    "reset", "age", "changed", "rotated"))  # fmt: skip
_KEY_ID_QUALIFIERS = frozenset(("private", "access", "secret", "api"))
_WEAK_ALONE = frozenset(("key", "auth", "sig", "signature", "apikey", "authkey", "token"))
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+")
_SEGMENT_SPLIT = re.compile(r"[_.\-]+")

STRONG, WEAK = 2, 1


@lru_cache(maxsize=8192)
def name_strength(name: str) -> int:
    """How strongly a variable, key or flag name says its value is a secret: STRONG, WEAK or 0."""
    name = name.lstrip("-")
    if not name:
        return 0
    if name.lower() in _KEY_NAMES:
        return WEAK
    letters = [c for c in name if c.isalpha()]
    if letters and all(c.isupper() for c in letters):
        segs = [s for s in _SEGMENT_SPLIT.split(name.lower()) if s]
    else:
        segs = [s.lower() for part in _SEGMENT_SPLIT.split(name) for s in _CAMEL.findall(part)]
    if not segs:
        return 0
    last = segs[-1]
    before = segs[-2] if len(segs) > 1 else ""
    if last == "id" and before == "key" and len(segs) > 2 and segs[-3] in _KEY_ID_QUALIFIERS:
        return WEAK  # GCP `private_key_id`, `AWS_ACCESS_KEY_ID`
    if last in _ABOUT or last.endswith(("error", "exception")):
        return 0
    if any(word in seg for seg in segs for word in _STRONG) or last in ("pwd", "pass", "passwd"):
        return STRONG
    if last in ("signature", "sig"):
        return WEAK
    if letters and all(c.isupper() for c in letters):
        # environment variables: a segment ending in TOKEN or KEY (`HF_TOKEN`, `GITHUB_APIKEY`)
        if any(seg.endswith(("token", "key")) for seg in segs) and last not in ("tokens", "keys"):
            return WEAK
        return WEAK if last in _WEAK_ALONE else 0
    if len(segs) == 1 and last in _WEAK_ALONE or last in ("signature", "sig"):
        return WEAK  # `key=`, `auth=`, and a request's signature (`X-Amz-Signature`, SAS `sig`)
    if last.endswith("token") and last != "tokens":
        return 0 if before in _SPECIAL_TOKENS or last[:-5] in _SPECIAL_TOKENS else WEAK
    if last in ("apikey", "secretkey", "accesskey", "privatekey", "authkey", "accountkey"):
        return WEAK
    if last == "key" and before in _KEY_QUALIFIERS:
        return WEAK
    return 0


def sensitive_name(name: str) -> bool:
    """Whether a variable / key name says its value may be a secret (strongly or weakly)."""
    return name_strength(name) > 0


# ----------------------------------------------------------------------------- values

_SAFE_VALUES = frozenset(("", "none", "null", "nil", "true", "false", "yes", "no", "on", "off", "undefined", "unset",
                          "0", "1", "enabled", "disabled", "n/a", "na", "empty", "missing", "required", "optional", "redacted", "hidden", "masked",
                          MASK.lower(), "<redacted>", "-", "--"))  # fmt: skip
_PLACEHOLDER = re.compile(r"\$\{?[A-Za-z_]|\{\{|\{[A-Za-z_][\w.]*\}|%\(|<[^<>]*>$|\*{3,}|x{5,}$|X{5,}$|\.\.\.$|\[REDACTED\]")
_PATH = re.compile(r"(?:~?/|\.\.?/|[A-Za-z]:\\)[^\s]*$")
# Code, not a value: an attribute of an object (`args.password`) or a call (`getpass.getpass()`),
# as a frame's code line prints them.
_CODE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(.*)?$|[A-Za-z_]\w*\($")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_RUN = re.compile(r"[A-Za-z0-9]+")


def placeholder(value: str) -> bool:
    """A value that is no secret whatever its name: nothing, a boolean, a placeholder or mask,
    a variable reference, or a path (a file that holds a secret is not the secret)."""
    v = value.strip()
    return (v.lower() in _SAFE_VALUES or _PLACEHOLDER.match(v) is not None or _PATH.match(v) is not None
            or _CODE.match(v) is not None)


def looks_secret(value: str) -> bool:
    """Whether a value after a weak name (token, key) looks like a key rather than a count, a
    word or a name: a run of 16 or more letters and digits, or of 10 or more mixing letters and
    digits (gitleaks' generic-api-key takes 10 characters and more; the runs keep model names
    such as `meta-llama/Llama-2-7b-hf` or `cl100k_base`, whose runs are short)."""
    v = value.strip()
    if len(v) < 8 or placeholder(v) or _NUMBER.fullmatch(v):
        return False
    for run in _RUN.findall(v):
        if len(run) >= 16 and not run.isdigit():
            return True
        if len(run) >= 10 and not run.isalpha() and not run.isdigit():
            return True
    return False


def secret_value(value: str, strength: int) -> bool:
    """Whether a value under a name of this strength is to be masked."""
    if strength >= STRONG:
        return not placeholder(value)
    if strength == WEAK:
        return looks_secret(value)
    return False


# A Python string literal's prefix before its quote: a bytes repr (`b'...'`, as requests and
# botocore print header dicts), raw, unicode, f-strings in a frame's code line.
_STRING_PREFIX = r"(?:[rR][bBfF]?|[bBfF][rR]?|[uU])"
_PREFIX_QUOTE = re.compile(_STRING_PREFIX + r"?(?=['\"])")


def _unquoted(value: str) -> tuple[int, int]:
    """The offsets of a value's content inside its quotes (a closing quote may be missing), past
    a string literal's prefix (`b'...'`)."""
    prefix = _PREFIX_QUOTE.match(value)
    if prefix is not None:
        p = prefix.end()
        end = len(value) - 1 if len(value) > p + 1 and value.endswith(value[p]) else len(value)
        return p + 1, end
    return 0, len(value)


def _named_value(name_group: str = "name", value_group: str = "value") -> Callable[[re.Match[str]], list[Span]]:
    """Spans of a match whose value is masked when the name says secret and the value fits."""

    def spans(m: re.Match[str]) -> list[Span]:
        strength = name_strength(m[name_group])
        if not strength:
            return []
        value = m[value_group]
        a, b = _unquoted(value)
        if not secret_value(value[a:b], strength):
            return []
        start = m.start(value_group)
        end = start + b
        if b == len(value) and end < len(m.string) and value[:1] not in ("'", '"'):
            # a bare value cut at the pattern's length bound: mask the rest of the word too
            rest = _BARE_REST.match(m.string, end)
            end = rest.end() if rest else end
        return [(start + a, end)]

    return spans


def _basic_credentials(m: re.Match[str]) -> list[Span]:
    """A `Basic` credential is base64 of `user:password` (RFC 7617 section 2)."""
    token = m["secret"]
    try:
        decoded = base64.b64decode(token + "=" * (-len(token) % 4), validate=True)
    except (binascii.Error, ValueError):
        return []
    if b":" in decoded and all(32 <= c < 127 for c in decoded):
        return [m.span("secret")]
    return []


def _mixed_case_key(m: re.Match[str]) -> list[Span]:
    s = m["secret"]
    has = (any(c.isupper() for c in s), any(c.islower() for c in s), any(c.isdigit() or c in "+/" for c in s))
    return [m.span("secret")] if all(has) else []


def _url_password(m: re.Match[str]) -> list[Span]:
    # `https://host:8080/a@b` has a port and a path, not a user and a password
    if re.fullmatch(r"\d{1,5}(?:/.*)?", m["secret"]):
        return []
    return [m.span("secret")]


def _not_a_flag(m: re.Match[str]) -> list[Span]:
    value = m["secret"]
    a, b = _unquoted(value)
    if placeholder(value[a:b]) or value.startswith("-"):
        return []
    return [(m.start("secret") + a, m.start("secret") + b)]


def _not_a_number(m: re.Match[str]) -> list[Span]:
    # `docker run -u 1000:1000` is a uid and a gid
    return [] if m["secret"].isdigit() or placeholder(m["secret"]) else [m.span("secret")]


_COOKIE_PAIR = re.compile(r"[ \t]*[^=;\s]+=(?P<value>[^;]*)")


def _cookie_values(m: re.Match[str]) -> list[Span]:
    spans: list[Span] = []
    base = m.start("pairs")
    pairs = m["pairs"]
    for pair in _COOKIE_PAIR.finditer(pairs):
        value = pair["value"].strip()
        if value and not placeholder(value):
            spans.append((base + pair.start("value"), base + pair.end("value")))
        if m["header"].lower() == "set-cookie":
            break  # after the first pair come the attributes (Path, Expires, ...)
        if pair.end() < len(pairs) and pairs[pair.end()] != ";":
            break
    return spans


def _keep_armor(m: re.Match[str]) -> list[Span]:
    return [m.span("body")]


BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"  # digits, upper, lower (GMP order)


def base62_crc32(text: str) -> str:
    """The CRC-32 of a token's random part in six base62 digits, as GitHub and npm end their
    tokens with it (github.blog 2021-04-05 'Behind GitHub's new authentication token formats';
    npm's format of 2021-09-23 is the same)."""
    n = zlib.crc32(text.encode("ascii"))
    digits = []
    for _ in range(6):
        n, r = divmod(n, 62)
        digits.append(BASE62[r])
    return "".join(reversed(digits))


def _checksum_holds(m: re.Match[str]) -> list[Span]:
    return [m.span()] if base62_crc32(m["body"]) == m["crc"] else []


_OPTION_VALUE = r"""(?P<value>"[^"\n]{1,512}"|'[^'\n]{1,512}'|[^\s'"][^\s]{0,511})"""
# The rest of a command line after the command's name: up to the next command a shell runs
# after it (`&&`, `||`, `|`, `;` between spaces), so that `mongosh ... && ssh -p 2222` keeps the port.
_COMMAND_REST = r"(?P<rest>(?:(?![ \t](?:&&|\|\|?|;)[ \t])[^\n]){0,1024})"


def _command_options(spaced: str, joined: str = "") -> Callable[[re.Match[str]], list[Span]]:
    """Spans of the passwords in the rest of a command line: the word after each option in
    `spaced` (`-P VALUE`; not a flag, not a placeholder or variable), the rest of each option in
    `joined` (`-pVALUE`)."""
    forms = [rf"[ \t](?:{spaced})[ \t]+{_OPTION_VALUE}"] if spaced else []
    if joined:
        forms.append(rf"[ \t](?:{joined})(?P<joined>[^\s\-'\"][^\s]*|'[^'\n]+'|\"[^\"\n]+\")")
    option = re.compile("|".join(f"(?:{f})" for f in forms))

    def spans(m: re.Match[str]) -> list[Span]:
        out: list[Span] = []
        base = m.start("rest")
        for o in option.finditer(m["rest"]):
            group = "value" if o["value"] is not None else "joined"
            value = o[group]
            a, b = _unquoted(value)
            if value.startswith("-") or placeholder(value[a:b]):
                continue
            out.append((base + o.start(group) + a, base + o.start(group) + b))
        return out

    return spans


def _command(name: str, commands: str, spaced: str, joined: str, source: str, hints: Iterable[str]) -> RedactionRule:
    """A command whose options take a password (its manual is the source): the option's value
    in the rest of the line is masked; the same letter on other commands (`mkdir -p`,
    `srun -p gpu`, `ssh -p 2222`) is left alone."""
    pattern = re.compile(rf"(?<![\w\-.])(?:{commands})(?=[ \t]){_COMMAND_REST}")
    return RedactionRule(name, pattern, _command_options(spaced, joined), tuple(hints), source)


# A value: a mask, a quoted string (its closing quote may be missing when a line was cut), or a
# bare word up to a separator; bounded so that a search resumed inside a long value stays linear.
_VALUE = (r"""(?:\[REDACTED\]|""" + _STRING_PREFIX + r"""?(?:"(?:[^"\\\n]|\\.){0,8192}"?|'(?:[^'\\\n]|\\.){0,8192}'?)"""
          r"""|[^\s,;&'"}\])>]{1,512})""")
_BARE_REST = re.compile(r"""[^\s,;&'"}\])>]+""")
_NAME = r"-{0,2}[A-Za-z_][A-Za-z0-9_.\-]{0,127}"
# `(?<![...])`: a name starts only where an identifier starts.
_ASSIGNMENT = re.compile(
    rf"(?<![A-Za-z0-9_.\-])(?P<name>{_NAME})"
    r"(?P<sep>[\"']?[ \t]*(?:=>|=|:(?!//))[ \t]*)"
    rf"(?P<value>{_VALUE})"
)
# What follows a hint inside a match of _ASSIGNMENT whose name says secret: the rest of the name
# (its characters, fewer than 128: _NAME) and the start of its separator. _named_value masks only
# after a name of nonzero name_strength, and every such name holds one of _HINTS_NAMED (its STRONG
# words, pwd/pass/passwd, sig/signature, the token and key forms, _WEAK_ALONE, _KEY_NAMES):
# secret_assignment needs no search of a text where no hint is followed by this.
_AFTER_NAMED_HINT = re.compile(r"[A-Za-z0-9_.\-]{0,127}[\"']?[ \t]*(?:=|:(?!//))")
# secret_flag's: the rest of an option's name and the blank before its value (its name holds a hint
# as above, and starts with `--`: in_long_option).
_AFTER_FLAG_HINT = re.compile(r"[A-Za-z0-9_\-]{0,63}[ \t]")
# Every match of _K8S_ENV holds `value` followed by this (its `["']?value["']?[ \t]*:`).
_AFTER_ENV_VALUE = re.compile(r"[\"']?[ \t]*:")
# Kubernetes container env as printed in a pod spec: JSON {"name": ..., "value": ...} or YAML.
_K8S_ENV = re.compile(
    r"[\"']?name[\"']?[ \t]*:[ \t]*[\"']?(?P<name>[A-Za-z_][A-Za-z0-9_.\-]{0,127})[\"']?"
    r"[ \t]*(?:,|\n)[ \t\-]*[\"']?value[\"']?[ \t]*:[ \t]*"
    rf"(?P<value>{_VALUE})"
)
_HINTS_NAMED = ("secret", "passw", "credential", "token", "key", "pwd", "pass", "auth", "sig", *_KEY_NAMES)


_WINDOWS_VARIABLE = re.compile(r"%[A-Za-z_][A-Za-z0-9_]*%")


def _password_span(m: re.Match[str], group: str, start: int = 0) -> list[Span]:
    """The span of a password in `group` from `start` (quotes taken off), none when it is empty,
    a placeholder, a variable (`$PW`, `%PW%`) or a path."""
    value = m[group][start:]
    a, b = _unquoted(value)
    inner = value[a:b]
    if not inner or placeholder(inner) or _WINDOWS_VARIABLE.fullmatch(inner):
        return []
    base = m.start(group) + start
    return [(base + a, base + b)]


# Samba's `-U [DOMAIN\\|/]USERNAME[%PASSWORD]` (smbclient(1), rpcclient(1), net(8)): the part after
# the first `%` of the value is the password.
_SAMBA_USER = re.compile(r"""[ \t](?:-U[ \t]*|--user(?:=|[ \t]+))(?P<value>"[^"\n]{1,512}"|'[^'\n]{1,512}'|[^\s'"]\S{0,511})""")


def _samba_passwords(m: re.Match[str]) -> list[Span]:
    out: list[Span] = []
    base = m.start("rest")
    for o in _SAMBA_USER.finditer(m["rest"]):
        value = o["value"]
        a, b = _unquoted(value)
        cut = value.find("%", a, b)
        if cut < 0 or cut + 1 >= b:
            continue  # no password, or an empty one (`guest%`)
        inner = value[cut + 1:b]
        if placeholder(inner) or _WINDOWS_VARIABLE.fullmatch(inner):
            continue
        out.append((base + o.start("value") + cut + 1, base + o.start("value") + b))
    return out


# An Oracle logon `username/password[@connect_identifier]` (the user may be quoted, `C##APP`,
# `sys`); the password ends at `@`, a blank or a quote.
_ORACLE_LOGON = r"""["']?(?:[A-Za-z0-9_$#.]{1,128}|"[^"\n]{1,128}")/(?P<secret>"[^"\n]{1,256}"|[^\s@/"'`]{1,256})(?=[@\s"'`]|$)"""


def _shape(name: str, pattern: str, hints: Iterable[str], source: str, flags: int = 0) -> RedactionRule:
    """A provider token recognised by its shape alone: the whole match is masked."""
    return RedactionRule(name, re.compile(pattern, flags), 0, tuple(hints), source)


# ----------------------------------------------------------------------------- the table

RULES: tuple[RedactionRule, ...] = (
    RedactionRule(
        "private_key",
        re.compile(r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----(?P<body>.*?)(?:-----END [A-Z0-9 ]{0,40}"
                   r"PRIVATE KEY(?: BLOCK)?-----|\Z)", re.DOTALL),  # fmt: skip
        _keep_armor, ("private key",),
        "RFC 7468 (PEM armor); gitleaks rule private-key; a block cut short is masked to the end of the text",
    ),
    RedactionRule(
        "url_password",
        re.compile(r"\b[A-Za-z][A-Za-z0-9+.\-]{0,30}://[^\s/:@'\"]{0,256}:(?P<secret>[^\s'\"]{1,256})@"),
        _url_password, ("://",),
        "RFC 3986 section 3.2.1 userinfo; the password runs to the LAST @ of the word, so `/` and `@` in it "
        "are masked too (detect-secrets plugins/basic_auth.py takes the first @ only)",
    ),
    RedactionRule(
        "authorization_header",
        re.compile(r"\b(?:proxy-)?authorization[\"']?[ \t]*[:=][ \t]*(?:" + _STRING_PREFIX + r"?[\"'])?(?:(?:bearer|basic|token|digest|negotiate|apikey)"
                   r"[ \t]+)?(?P<secret>[^\s\"',;]+)", re.IGNORECASE),  # fmt: skip
        "secret", ("authorization",), "RFC 9110 section 11.6.2 (Authorization: <scheme> <credentials>)",
    ),
    RedactionRule("bearer_token", re.compile(r"\b[Bb]earer[ \t]+(?P<secret>[A-Za-z0-9\-._~+/]{16,}=*)"), "secret",
                  ("bearer",), "RFC 6750 section 2.1 (b64token)"),  # fmt: skip
    RedactionRule("basic_credentials", re.compile(r"\b[Bb]asic[ \t]+(?P<secret>[A-Za-z0-9+/]{6,}={0,2})(?![A-Za-z0-9+/=])"),
                  _basic_credentials, ("basic",), "RFC 7617 section 2: base64 of user-id `:` password, with or "
                  "without the Authorization name"),  # fmt: skip
    _shape("aws_access_key_id", r"\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z2-7]{16}\b", ("akia", "asia", "abia", "acca", "a3t"),
           "AWS IAM unique id prefixes; gitleaks rule aws-access-token"),
    RedactionRule(
        "aws_secret_access_key",
        re.compile(r"(?<![A-Za-z0-9/+=])(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"),
        _mixed_case_key, ("aws", "akia", "asia", "secret", "boto", "s3", "credential"),
        "trufflehog pkg/detectors/aws: 40 base64 characters in the text of an access key id or an AWS word; "
        "both cases and a digit or +/ (a git sha, lowercase hex, is kept)",
    ),
    _shape("huggingface_token", r"\b(?:hf|api_org)_[A-Za-z0-9]{30,}\b", ("hf_", "api_org_"),
           "huggingface.co/docs/hub/security-tokens; gitleaks rules huggingface-access-token, huggingface-organization-api-token"),
    _shape("github_token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})\b",
           ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
           "GitHub docs 'About authentication to GitHub' (token prefixes); gitleaks rules github-pat, github-fine-grained-pat"),
    _shape("gitlab_token", r"\bgl(?:pat|ptt|dt|rt|cbt|oas|ft|imt|agent|soat)-[A-Za-z0-9_\-]{20,}",
           ("glpat-", "glptt-", "gldt-", "glrt-", "glcbt-", "gloas-", "glft-", "glimt-", "glagent-", "glsoat-"),
           "GitLab docs 'Token prefixes'; gitleaks rules gitlab-pat and siblings"),
    _shape("slack_token", r"\b(?:xox[abeoprscd]|xapp)-[0-9A-Za-z][0-9A-Za-z.\-]{8,}",
           ("xoxa-", "xoxb-", "xoxe", "xoxo-", "xoxp-", "xoxr-", "xoxs-", "xoxc-", "xoxd-", "xapp-"),
           "Slack API docs 'Token types'; gitleaks rules slack-bot-token, slack-user-token, slack-app-token"),
    _shape("slack_webhook", r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_\-]{20,}", ("hooks.slack.com",),
           "Slack API docs 'Incoming webhooks'; gitleaks rule slack-webhook-url"),
    _shape("openai_key", r"\bsk-(?:proj-|svcacct-|admin-|ant-(?:api|admin)\d\d-|or-v1-)?[A-Za-z0-9_\-]{20,}", ("sk-",),
           "OpenAI and Anthropic key prefixes; gitleaks rules openai-api-key, anthropic-api-key"),
    _shape("stripe_key", r"\b(?:sk|rk|pk)_(?:live|test|prod)_[A-Za-z0-9]{10,}", ("sk_", "rk_", "pk_"),
           "Stripe docs 'API keys'; gitleaks rule stripe-access-token"),
    _shape("google_api_key", r"\bAIza[0-9A-Za-z_\-]{35}", ("aiza",), "Google Cloud API keys; gitleaks rule gcp-api-key"),
    _shape("google_oauth_secret", r"\bGOCSPX-[0-9A-Za-z_\-]{28}", ("gocspx-",),
           "Google OAuth client secrets; trufflehog pkg/detectors/gcpapplicationdefaultcredentials"),
    _shape("azure_ad_client_secret", r"(?<![A-Za-z0-9_~.\-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}(?![A-Za-z0-9_~.\-])",
           ("q~",), "Microsoft Entra client secrets; gitleaks rule azure-ad-client-secret"),
    _shape("jwt", r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ?[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}|\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
           ("eyj",), "RFC 7519 (base64url JSON header `{\"`); gitleaks rule jwt"),
    _shape("npm_token", r"\bnpm_[A-Za-z0-9]{36}\b", ("npm_",), "npm docs 'About access tokens'; gitleaks rule npm-access-token"),
    RedactionRule(
        "checksummed_token",
        re.compile(r"(?:gh[pousr]|npm)_(?P<body>[A-Za-z0-9]{30})(?P<crc>[A-Za-z0-9]{6})"), _checksum_holds,
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "npm_"),
        "github.blog 2021-04-05 'Behind GitHub's new authentication token formats' (30 random base62 characters, then "
        "their CRC-32 in 6 base62 digits) and npm's token format of 2021-09-23 (the same check in Samsung/CredSweeper "
        "credsweeper/filters/value_github_check.py: CRC-32 of value[4:-6] against the base62 of value[-6:]): a token "
        "whose checksum holds is masked wherever it is, glued to other text too (`%22ghp_...`, a URL-encoded JSON). "
        "The checksum only adds: a token standing alone is masked by github_token whether it holds or not (a "
        "mistyped or cut token is still a secret's start, and no real one is ever rejected)",
    ),
    _shape("pypi_token", r"\bpypi-AgE[A-Za-z0-9_\-]{50,}", ("pypi-",),
           "PyPI API tokens: 'pypi-' and a base64 macaroon, whose first bytes (version 2, location) encode as AgE "
           "(pypi.org: AgEIcHlwaS5vcmc, test.pypi.org: AgENdGVzdC5weXBpLm9yZw); gitleaks rule pypi-upload-token"),
    _shape("vault_token", r"\bhv[sbr]\.[A-Za-z0-9_\-]{24,}", ("hvs.", "hvb.", "hvr."),
           "HashiCorp Vault docs 'Tokens' (hvs. service, hvb. batch, hvr. recovery tokens); gitleaks rules "
           "vault-service-token, vault-batch-token"),
    _shape("databricks_token", r"\bdapi[a-f0-9]{32}(?:-\d)?\b", ("dapi",), "Databricks personal access tokens; gitleaks rule databricks-api-token"),
    _shape("nvidia_api_key", r"\bnvapi-[A-Za-z0-9_\-]{64}", ("nvapi-",), "NVIDIA NGC / build.nvidia.com keys; kingfisher rule nvapi"),
    _shape("replicate_token", r"\br8_[A-Za-z0-9]{37}\b", ("r8_",), "Replicate API tokens (r8_ + 37); trufflehog pkg/detectors/replicate"),
    _shape("sendgrid_key", r"\bSG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}\b", ("sg.",), "gitleaks rule sendgrid-api-token"),
    RedactionRule(
        "netrc_password", re.compile(r"\bmachine[ \t]+\S+[ \t]+login[ \t]+\S+[ \t]+password[ \t]+(?P<secret>\S+)"),
        "secret", ("machine",), "GNU inetutils netrc(5)",
    ),
    RedactionRule("k8s_env_value", _K8S_ENV, _named_value(), ("value",),
                  "Kubernetes core/v1 EnvVar {name, value} as printed in a pod spec", after_hint=_AFTER_ENV_VALUE),
    RedactionRule(
        "secret_assignment", _ASSIGNMENT, _named_value(), _HINTS_NAMED,
        "NAME=value, NAME: value, JSON and dicts, --flag=value, ?name=value: detect-secrets plugins/keyword.py "
        "(names), gitleaks rule generic-api-key (values of 10+ characters); names and values: see above",
        resume="value", after_hint=_AFTER_NAMED_HINT,
    ),
    RedactionRule(
        "secret_flag",
        re.compile(r"(?<![\w\-])(?P<name>--[A-Za-z][A-Za-z0-9_\-]{0,63})[ \t]+(?P<value>\"[^\"\n]{1,512}\"|'[^'\n]{1,512}'|[^\s\-'\"][^\s]{0,511})"),
        _named_value(), _HINTS_NAMED,
        "a long option and its value in the space form (POSIX/GNU getopt_long): `--password V`, `--api-key V`, "
        "rclone's `--s3-secret-access-key V`",
        after_hint=_AFTER_FLAG_HINT, in_long_option=True,
    ),
    RedactionRule(
        "login_password_flag",
        re.compile(r"\b(?:(?:docker|podman|buildah|skopeo|nerdctl|oras|crane|helm[ \t]+registry)[ \t]+login|twine[ \t]+upload|"
                   r"sshpass)\b[^\n]{0,200}?[ \t]-p[ \t]+(?P<secret>\S+)"),  # fmt: skip
        _not_a_flag, ("login", "twine", "sshpass"),
        "docker login(1) `-p, --password`, twine upload `-p`, sshpass(1) `-p`",
    ),
    RedactionRule(
        "redis_cli_password",
        re.compile(r"\bredis-cli\b[^\n]{0,200}?[ \t](?:-a|--pass|--askpass)[ \t]+(?P<secret>\S+)"),
        _not_a_flag, ("redis-cli",), "redis-cli(1) `-a <password>` (Redis docs 'redis-cli, the Redis command line interface')",
    ),
    RedactionRule(
        "cookie_values",
        re.compile(r"\b(?P<header>set-cookie|cookie)[\"']?[ \t]*:[ \t]*(?P<pairs>[^\n\"']{1,4096})", re.IGNORECASE),
        lambda m: _cookie_values(m), ("cookie",),
        "RFC 6265 sections 4.1 (Set-Cookie: name=value; attributes) and 4.2 (Cookie: name=value; ...): the values are credentials",
    ),
    RedactionRule(
        "mysql_password_flag",
        re.compile(r"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlsh|mariadb|mariadb-dump)\b[^\n]{0,200}?[ \t]-p(?P<secret>[^\s\-][^\s]*)"),
        "secret", ("mysql", "mariadb"),
        "MySQL 8.0 manual 6.2.2.1, `-p[password]` (no space before the password)",
    ),
    RedactionRule(
        "samba_user_password",
        re.compile(rf"(?<![\w\-.])(?:smbclient|rpcclient|smbcacls|smbcquotas|smbget|smbtree|smbtar|net[ \t]+(?:ads|rpc|rap))"
                   rf"(?=[ \t]){_COMMAND_REST}"),
        _samba_passwords, ("smbclient", "rpcclient", "smbcacls", "smbcquotas", "smbget", "smbtree", "smbtar", "net ads",
                           "net rpc", "net rap"),
        "smbclient(1), rpcclient(1), net(8) (Samba 4 manual pages): `-U|--user=[DOMAIN\\\\]USERNAME[%PASSWORD]`",
    ),
    RedactionRule(
        "oracle_logon_password",
        re.compile(rf"(?<![\w\-.])(?:(?:sqlplus|dgmgrl)(?:[ \t]+-[A-Za-z]+(?:[ \t]+\d+)?)*[ \t]+"
                   rf"|rman\b[^\n]{{0,200}}?[ \t](?:target|catalog|auxiliary)[ \t]*=?[ \t]*"
                   rf"|(?:expdp|impdp|sqlldr)\b(?:[ \t]+|[^\n]{{0,400}}?[ \t]userid=)){_ORACLE_LOGON}", re.IGNORECASE),
        lambda m: _password_span(m, "secret"), ("sqlplus", "dgmgrl", "rman", "expdp", "impdp", "sqlldr"),
        "SQL*Plus User's Guide 'SQLPLUS Program Syntax': `{username[/password][@connect_identifier] | / | /NOLOG}`; "
        "RMAN `target`/`catalog`/`auxiliary` connect strings; Data Pump expdp/impdp and SQL*Loader `userid=`; DGMGRL",
    ),
    _command("mongo_password_option", r"mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport|mongostat|mongotop|mongofiles",
             "-p", "", "MongoDB docs, mongosh and database tools options: `-p, --password <password>`", ("mongo",)),
    _command("cqlsh_password_option", r"cqlsh", "-p", "-p", "Apache Cassandra docs 'cqlsh': `-p, --password` (optparse: "
             "`-pVALUE` too); nodetool `-pw`", ("cqlsh",)),
    _command("nodetool_password_option", r"nodetool", "-pw", "", "Apache Cassandra nodetool: `-pw, --password`",
             ("nodetool",)),
    _command("sqlcmd_password_option", r"sqlcmd|bcp|osql", "-P", "-P", "Microsoft docs 'sqlcmd utility' and 'bcp "
             "utility': `-P password`", ("sqlcmd", "bcp ", "bcp\t", "osql")),
    _command("ldap_password_option", r"ldap(?:search|modify|add|delete|whoami|passwd|compare|modrdn|exop)", "-w", "-w",
             "OpenLDAP ldapsearch(1) and siblings: `-w passwd` (`-W` prompts)", ("ldap",)),
    _command("ipmitool_password_option", r"ipmitool", "-P", "-P", "ipmitool(1): `-P <password>` (`-p` is the port, kept)",
             ("ipmitool",)),
    _command("java_keystore_password", r"keytool|jarsigner", "-storepass|-keypass|-srcstorepass|-deststorepass|"
             "-srckeypass|-destkeypass|-new", "", "JDK keytool and jarsigner docs: `-storepass`, `-keypass` ... "
             "(`-storepass:env VAR` names a variable, kept)", ("keytool", "jarsigner")),
    _command("archive_password_option", r"zip|unzip|zipcloak|7z|7za|7zr", "-P", "-p", "zip(1), unzip(1) `-P password`; "
             "7-Zip `-p{Password}`", ("zip ", "zip\t", "7z")),
    _command("mosquitto_password_option", r"mosquitto_pub|mosquitto_sub|mosquitto_rr", "-P", "",
             "mosquitto_pub(1): `-P password`", ("mosquitto",)),
    _command("influx_password_option", r"influx", "-password", "", "InfluxDB 1.x influx CLI: `-password`", ("influx",)),
    _command("az_login_password", r"az[ \t]+login", "-p", "", "Azure CLI docs 'az login': `-p, --password` (a "
             "service principal's secret)", ("login",)),
    RedactionRule(
        "user_password_flag",
        re.compile(r"(?:[ \t]|^)(?:-u|--user|--proxy-user)[ \t]+[\"']?[^\s:\"']{1,128}:(?P<secret>[^\s\"']+)", re.MULTILINE),
        _not_a_number, ("-u", "--user", "--proxy-user"),
        "curl(1) `-u, --user <user:password>`; gitleaks rule curl-auth-user",
    ),
    RedactionRule(
        "auth_tuple",
        re.compile(r"\b(?:auth|HTTPBasicAuth|HTTPDigestAuth|HTTPProxyAuth|BasicAuth)[ \t]*(?:=[ \t]*)?\([ \t]*"
                   r"(?:(?:login|username)[ \t]*=[ \t]*)?(?P<q>['\"])[^'\"\n]{0,256}(?P=q)[ \t]*,[ \t]*(?:password[ \t]*=[ \t]*)?"
                   r"(?P<q2>['\"])(?P<secret>[^'\"\n]{1,512})(?P=q2)"),  # fmt: skip
        "secret", ("auth",), "requests docs 'Authentication' (auth=('user', 'pass'), HTTPBasicAuth), aiohttp.BasicAuth",
    ),
)


def shapes_table() -> list[tuple[str, str]]:
    """(rule name, source) for every rule: what the README lists."""
    return [(rule.name, rule.source) for rule in RULES]
