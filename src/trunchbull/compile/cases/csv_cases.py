"""CSV case files (SPEC §3.6): RFC 4180, every cell a string, read with polars."""

from __future__ import annotations

import csv
import io

from trunchbull.compile.cases.fields import CaseDraft, Report, Where, check_case
from trunchbull.compile.cases.sources import DataFileSource, case_object_formats

CSV_COLUMNS = ("id", "prompt", "expected", "description")


def read_csv_cases(data: bytes, data_path: str, module_path: str, report: Report) -> list[CaseDraft]:
    try:
        return _read_csv_cases(data, data_path, module_path, report)
    except csv.Error as err:  # e.g. a bare carriage return inside an unquoted field
        report(
            Where(data_path), "csv-syntax", f"the CSV file could not be parsed: {err}", "check its quoting (RFC 4180)"
        )
        return []


def _read_csv_cases(data: bytes, data_path: str, module_path: str, report: Report) -> list[CaseDraft]:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        report(Where(data_path, line), "csv-encoding", "the CSV file is not valid UTF-8", "save it as UTF-8")
        return []
    if not text.strip():
        report(
            Where(data_path, 1), "csv-header", "the CSV file is empty; it needs a header row", "start with id,prompt"
        )
        return []
    header = next(csv.reader(io.StringIO(text)))
    if not _check_header(header, data_path, report):
        return []
    if _report_ragged_rows(text, len(header), data_path, report, syntax_fallback=False):
        return []  # polars would pad a short row with "" (or null), so field counts are checked first
    import polars as pl  # imported here: it costs ~0.3 s, and only CSV evals need it

    try:
        frame = pl.read_csv(
            io.BytesIO(data),
            infer_schema=False,
            has_header=True,
            quote_char='"',
            empty_string_is_null=False,
            raise_if_empty=False,
        )
    except Exception:  # polars rejects ragged rows without naming the line
        _report_ragged_rows(text, len(header), data_path, report)
        return []
    lines = _row_lines(text, frame.rows(), len(header), data_path, report)
    if lines is None:
        return []
    # polars reads a blank line as a row of nulls, and a short row as nulls at its end
    rows = [(values, line) for values, line in zip(frame.rows(), lines) if any(v is not None for v in values)]
    short = [line for values, line in rows if any(v is None for v in values)]
    for line in short:
        report(
            Where(data_path, line),
            "csv-row",
            f"row has fewer fields than the header's {len(header)}",
            "every row needs a value (possibly empty) for each column",
        )
    if short:
        return []
    if not rows:
        report(Where(data_path, 1), "cases-empty", "the CSV file has a header but no cases", "add at least one row")
        return []
    drafts = []
    for values, line in rows:
        row = dict(zip(header, values))
        obj = {"id": row["id"], "prompt": row["prompt"]}
        if row.get("description"):
            obj["description"] = row["description"]
        source = {"module": module_path, "file": data_path, "line": line}
        draft = check_case(obj, Where(data_path, line), source, report)
        if draft:
            draft.extra["expected"] = row.get("expected") or ""
            drafts.append(draft)
    return drafts


def _check_header(header: list[str], data_path: str, report: Report) -> bool:
    ok = True
    for name in header:
        if name not in CSV_COLUMNS:
            report(
                Where(data_path, 1),
                "csv-column",
                f"unknown CSV column {name!r}",
                f"CSV supports only {', '.join(CSV_COLUMNS[:-1])} and {CSV_COLUMNS[-1]}; "
                f"use {case_object_formats()} for other case fields",
            )
            ok = False
        elif header.count(name) > 1:
            report(Where(data_path, 1), "csv-column", f"column {name!r} appears twice", "keep one column of each name")
            ok = False
    for required in ("id", "prompt"):
        if required not in header:
            report(
                Where(data_path, 1),
                "csv-column",
                f"the CSV header lacks the required column {required!r}",
                "the header must name id and prompt (and may name expected and description)",
            )
            ok = False
    return ok


def _row_lines(text: str, rows: list[tuple], width: int, data_path: str, report: Report) -> list[int] | None:
    """Line of each data row: counted from the cells' own newlines; blank
    lines make that count drift, and then the csv module maps them."""
    lines, line = [], 2
    for values in rows:
        lines.append(line)
        line += 1 + sum(v.count("\n") for v in values if v)
    body = text[:-1] if text.endswith("\n") else text
    if line - 1 == body.count("\n") + 1:
        return lines
    reader = csv.reader(io.StringIO(text))  # the rare layouts the count above cannot follow
    next(reader)
    lines, start = [], reader.line_num + 1
    for _record in reader:
        lines.append(start)
        start = reader.line_num + 1
    if len(lines) != len(rows):
        report(
            Where(data_path),
            "csv-syntax",
            "the CSV file could not be parsed consistently",
            "check its quoting (RFC 4180)",
        )
        return None
    return lines


def _report_ragged_rows(text: str, width: int, data_path: str, report: Report, syntax_fallback: bool = True) -> bool:
    """Report every row whose field count differs from the header's; True when any did."""
    reader = csv.reader(io.StringIO(text))
    next(reader)
    start = reader.line_num + 1
    found = False
    for record in reader:
        if record and len(record) != width:
            report(
                Where(data_path, start),
                "csv-row",
                f"row has {len(record)} fields; the header has {width}",
                "quote fields that contain commas or newlines",
            )
            found = True
        start = reader.line_num + 1
    if not found and syntax_fallback:
        report(Where(data_path), "csv-syntax", "the CSV file could not be parsed", "check its quoting (RFC 4180)")
    return found


SOURCE = DataFileSource(".csv", "CSV", read_csv_cases, expected_from_rows=True)
