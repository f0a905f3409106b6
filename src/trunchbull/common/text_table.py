"""Plain-text tables for the terminal summaries (grade, run, report, compare)."""

from __future__ import annotations

from collections.abc import Sequence


def table_lines(cells: Sequence[tuple[str, ...]]) -> list[str]:
    """`cells[0]` is the header and `cells[-1]` the overall row: a rule under the
    header and one above the overall row; the first column left-aligned, the
    numbers right-aligned."""
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]

    def line(row: tuple[str, ...]) -> str:
        return "  ".join(
            row[0].ljust(widths[0]) if i == 0 else row[i].rjust(widths[i]) for i in range(len(row))
        ).rstrip()

    header = line(cells[0])
    rule = "-" * len(header)
    out = [header, rule]
    for index, row in enumerate(cells[1:]):
        if index == len(cells) - 2:
            out.append(rule)
        out.append(line(row))
    return out
