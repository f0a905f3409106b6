"""The report's one HTML file: the bundled front end and the data, inline.
A Content-Security-Policy allows inline scripts and styles and nothing else
(no request of any kind), so the page opens from file:// and never touches
the network."""

from __future__ import annotations

import html

import orjson

from trunchbull.report.html.bundle import FrontEnd

CSP = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; font-src data:; "
    "base-uri 'none'; form-action 'none'"
)


def _inline_script(text: str) -> str:
    # a script element ends at the first "</script" whatever the JavaScript means
    return text.replace("</script", "<\\/script").replace("<!--", "<\\!--")


def render_html(title: str, payload: dict, front_end: FrontEnd) -> bytes:
    css = front_end.css.replace("</style", "<\\/style")
    data = orjson.dumps(payload).replace(b"<", b"\\u003c")  # only inside JSON strings: same value
    head = (
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{html.escape(title)}</title>\n"
        f"<style>{css}</style>\n</head>\n<body>\n"
        "<script type=\"application/json\" id=\"trunchbull-data\">"
    ).encode()
    tail = f"</script>\n<script>{_inline_script(front_end.js)}</script>\n</body>\n</html>\n".encode()
    return head + data + tail
