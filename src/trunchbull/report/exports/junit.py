"""JUnit XML of a run (SPEC §9) for CI test reporters (GitHub Actions,
GitLab, Jenkins): one <testsuite> per eval, one <testcase> per sample; a
`fail` sample is a <failure> with the evaluator's message, an `error` sample
an <error>. With `--by FIELD`, each <testcase> carries its group as a
property named FIELD. Written with xml.etree.ElementTree; characters XML
1.0 cannot carry (control characters in model output) become U+FFFD."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import orjson

from trunchbull.report.exports.formats import Exported, ExportFormat

if TYPE_CHECKING:  # the CLI lists the formats without loading XML
    import xml.etree.ElementTree as ET

_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _text(value: object) -> str:
    return _NOT_XML.sub("\ufffd", value if isinstance(value, str) else str(value))


def _seconds(ms: float) -> str:
    return f"{ms / 1000:.3f}"


class _Counts:
    def __init__(self) -> None:
        self.tests = self.failures = self.errors = 0
        self.ms = 0.0

    def add(self, outcome: str, latency: float | None) -> None:
        self.tests += 1
        self.failures += outcome == "fail"
        self.errors += outcome == "error"
        self.ms += latency or 0.0

    def apply(self, element: ET.Element) -> None:
        element.set("tests", str(self.tests))
        element.set("failures", str(self.failures))
        element.set("errors", str(self.errors))
        element.set("time", f"{self.ms / 1000:.3f}")


def junit_xml(exported: Exported) -> bytes:
    import xml.etree.ElementTree as ET

    run = exported.run
    release = run.meta.get("release") or {}
    title = " ".join(str(p) for p in (release.get("title"), release.get("version")) if p)
    root = ET.Element("testsuites", {"name": _text(f"{title or 'trunchbull'} — {run.model}")})
    repeats = int(run.meta.get("repeat") or 1)
    suites: dict[str, tuple[ET.Element, _Counts]] = {}
    total = _Counts()
    for row in run.results:
        eval_id = row["evalId"]
        if eval_id not in suites:
            suite = ET.SubElement(root, "testsuite", {"name": _text(eval_id)})
            if run.meta.get("startedAt"):
                suite.set("timestamp", str(run.meta["startedAt"]).removesuffix("Z"))
            properties = ET.SubElement(suite, "properties")
            for name, value in (("model", run.model), ("release", release.get("digest")), ("release.title", title)):
                if value:
                    ET.SubElement(properties, "property", {"name": name, "value": _text(value)})
            suites[eval_id] = (suite, _Counts())
        suite, counts = suites[eval_id]
        record = run.record_of(row) or {}
        latency = record.get("latencyMs") if isinstance(record.get("latencyMs"), (int, float)) else None
        name = row["caseId"] if repeats < 2 else f"{row['caseId']} [repeat {row.get('repeat', 0)}]"
        case = ET.SubElement(suite, "testcase", {"classname": _text(eval_id), "name": _text(name)})
        if latency is not None:
            case.set("time", _seconds(latency))
        if exported.by:
            properties = ET.SubElement(case, "properties")
            ET.SubElement(properties, "property", {"name": _text(exported.by), "value": _text(exported.group(row))})
        outcome = row["outcome"]
        message = _text(row.get("message") or "")
        if outcome == "fail":
            failure = ET.SubElement(
                case, "failure", {"message": message, "type": _text(row.get("evaluator") or "fail")}
            )
            if row.get("details") is not None:
                failure.text = _text(orjson.dumps(row["details"], option=orjson.OPT_INDENT_2).decode())
        elif outcome == "error":
            kind = ((record.get("error") or {}).get("kind")) or "error"
            error = ET.SubElement(case, "error", {"message": message, "type": _text(kind)})
            error.text = message
        output = record.get("output")
        if isinstance(output, str) and output:
            ET.SubElement(case, "system-out").text = _text(output)
        counts.add(outcome, latency)
        total.add(outcome, latency)
    for suite, counts in suites.values():
        counts.apply(suite)
        suite.set("skipped", "0")
    total.apply(root)
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


FORMAT = ExportFormat(
    "junit",
    order=1,
    title="JUnit XML",
    description="JUnit XML (one testsuite per eval, one testcase per sample)",
    write=junit_xml,
)
