"""Reading the benchmarks' printed Markdown tables back, for the tests of bench/."""

from __future__ import annotations


def markdown_tables(stdout: str) -> list[list[list[str]]]:
    """The Markdown tables in the output, each a list of rows (header first)."""
    tables: list[list[list[str]]] = []
    current: list[list[str]] | None = None
    for line in stdout.splitlines():
        if line.startswith("|"):
            if line.startswith("|---"):
                continue
            if current is None:
                current = []
                tables.append(current)
            current.append([c.strip() for c in line.strip("|").split("|")])
        else:
            current = None
    return tables
