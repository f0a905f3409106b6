"""--base-url, checked before anything is called or written (SPEC §8.1).

A base URL is written in run.json, is part of the response cache's key and
is shown in messages and reports, so it must hold no secret: user:password@
in it, or a query parameter named like a credential (`?key=…`, `api_key`,
`access_token`, `sig`, …), is a usage error that points to --api-key-env,
and the message shows the URL without them. Any other query string (an API
version a gateway asks for) is kept, and js/run/base_url.mjs puts it after
the path the provider adds (`/v1/chat/completions?api-version=…`)."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit, urlunsplit

from trunchbull.common.diagnostics import UsageError

# a query parameter whose name (lowercase, without - and _) holds one of these carries a credential
CREDENTIAL_WORDS = ("key", "token", "secret", "passw", "pwd", "auth", "sig", "credential", "session")
EXAMPLE = "http://127.0.0.1:8080/v1"
KEY_HINT = (
    "give the key in an environment variable and name it with --api-key-env NAME: it is sent in the "
    "provider's own header and written nowhere"
)


def url_shown(url: str) -> str:
    """The URL as a message may show it: scheme, host, port and path only."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "(a malformed URL)"
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    return urlunsplit((parts.scheme, host + (f":{port}" if port else ""), parts.path, "", ""))


def is_credential(name: str) -> bool:
    folded = name.lower().replace("-", "").replace("_", "")
    return any(word in folded for word in CREDENTIAL_WORDS)


def check_base_url(url: str) -> str:
    """The base URL as recorded and used: no trailing slash on its path, its query kept."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number in range
    except ValueError:
        raise UsageError(f"--base-url {url_shown(url)} is not a valid URL (e.g. {EXAMPLE})") from None
    if "@" in parts.netloc:
        raise UsageError(f"--base-url {url_shown(url)}: the URL holds credentials (user:password@); {KEY_HINT}")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"--base-url {url_shown(url)} is not an http(s) URL (e.g. {EXAMPLE})")
    secret = [name for name, _ in parse_qsl(parts.query, keep_blank_values=True) if is_credential(name)]
    if secret:
        names = ", ".join(dict.fromkeys(secret))
        raise UsageError(
            f"--base-url {url_shown(url)}: the query parameter {names} looks like a credential, and a base URL "
            f"is written in run.json and shown in reports; {KEY_HINT}"
        )
    if parts.fragment:
        raise UsageError(f"--base-url {url_shown(url)}: a URL's #fragment is never sent to the server; remove it")
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), parts.query, ""))
