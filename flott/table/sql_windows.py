"""Flink's event-time SQL that sqlglot does not parse: ``WATERMARK FOR`` in CREATE TABLE and the
window table-valued functions ``TABLE(TUMBLE|HOP|CUMULATE|SESSION(TABLE t, DESCRIPTOR(ts), ...))``.

Both are cut out of the statement's text before sqlglot sees it, token by token (sqlglot's own
tokenizer, so quotes and comments are respected): a watermark clause becomes blanks, a window TVF
call a placeholder table name padded with blanks. Line breaks stay where they were, so every
position sqlglot reports for the rest of the statement is the position in the user's text. What
was cut out is kept, parsed: the watermark's column and expression, each TVF's kind, table,
partition keys, time column and intervals. Anything else in those places (named arguments, more
arguments than Flink's signatures take) is refused, naming it.
"""

from __future__ import annotations

import datetime as _dt
import itertools
from dataclasses import dataclass, field
from typing import Any

import sqlglot
from sqlglot import exp

from flott.errors import NotYetSupportedError, SqlParseError
from flott.table.planner import validation_error
from flott.table.sql_types import cut_row_types, spell_bytes_for_sqlglot

WINDOW_TVFS = ("TUMBLE", "HOP", "CUMULATE", "SESSION")
PLACEHOLDER = "_W"
"""A window TVF call becomes ``_W<n>_`` in the text sqlglot parses: it must fit in ``TABLE``."""

_UNITS_MS = {"SECOND": 1000, "MINUTE": 60_000, "HOUR": 3_600_000, "DAY": 86_400_000}


@dataclass
class WatermarkClause:
    column: str
    expression: Any  # sqlglot expression over the table's columns


@dataclass
class WindowTvfCall:
    """One ``TABLE(kind(TABLE t [PARTITION BY k], DESCRIPTOR(ts), interval, ...))``."""

    kind: str
    table: str
    time_column: str
    intervals_ms: list[int]
    partition_keys: list[str] = field(default_factory=list)


@dataclass
class Rewritten:
    text: str
    watermark: WatermarkClause | None = None
    tvfs: dict[str, WindowTvfCall] = field(default_factory=dict)
    primary_key: list[str] | None = None
    metadata: dict[str, tuple[str, bool]] = field(default_factory=dict)
    """CREATE TABLE's metadata columns: column -> (metadata key, VIRTUAL)."""
    row_types: dict[str, str] = field(default_factory=dict)
    """CREATE TABLE's columns whose type holds a ROW: column -> the type's text (``ROW<a INT>``)."""


def _blank(text: str, start: int, end: int, replacement: str = "") -> str:
    """``text[start:end]`` replaced by ``replacement`` padded with blanks, line breaks kept (the
    replacement must fit before the span's first line break)."""
    span = text[start:end]
    assert "\n" not in span[: len(replacement)]
    body = "".join("\n" if c == "\n" else " " for c in span)
    out = list(body)
    k = 0
    for i, c in enumerate(out):
        if k == len(replacement):
            break
        if c != "\n":
            out[i] = replacement[k]
            k += 1
    return text[:start] + "".join(out) + text[end:]


def _tokens(text: str) -> list[Any]:
    try:
        return list(sqlglot.Dialect.get_or_raise("spark").tokenize(text))
    except sqlglot.errors.TokenError:
        return []  # the parser reports it


def _matching(tokens: list[Any], open_index: int) -> int:
    depth = 0
    for i in range(open_index, len(tokens)):
        name = tokens[i].token_type.name
        if name == "L_PAREN":
            depth += 1
        elif name == "R_PAREN":
            depth -= 1
            if depth == 0:
                return i
    raise SqlParseError(
        'org.apache.flink.table.api.SqlParserEOFException: Encountered "<EOF>": a parenthesis is not closed.'
    )


def _split_arguments(tokens: list[Any], first: int, last: int) -> list[list[Any]]:
    """The tokens of ``first..last`` split at the commas outside parentheses."""
    args: list[list[Any]] = [[]]
    depth = 0
    for t in tokens[first : last + 1]:
        name = t.token_type.name
        if name == "L_PAREN":
            depth += 1
        elif name == "R_PAREN":
            depth -= 1
        if name == "COMMA" and depth == 0:
            args.append([])
        else:
            args[-1].append(t)
    return args


def _source(text: str, toks: list[Any]) -> str:
    return text[toks[0].start : toks[-1].end + 1] if toks else ""


def parse_expression(text: str) -> Any:
    try:
        select = sqlglot.parse_one(f"SELECT {text}", read="spark")
    except sqlglot.errors.ParseError as e:
        raise SqlParseError(
            f"org.apache.flink.table.api.SqlParserException: SQL parse failed. Cannot parse '{text}': {e}"
        ) from None
    assert isinstance(select, exp.Select)
    return select.expressions[0]


def interval_ms(e: Any, what: str) -> int:
    """A day-time interval literal (``INTERVAL '10' SECOND``) in milliseconds."""
    if not isinstance(e, exp.Interval) or not isinstance(e.this, exp.Literal):
        raise validation_error(
            f"{what} must be an interval literal such as INTERVAL '10' SECOND, got {e.sql()}"
        )
    unit = e.args.get("unit")
    unit_name = (unit.name if unit is not None else "").upper()
    if unit_name not in _UNITS_MS:
        raise NotYetSupportedError(
            f"{what}: the interval unit {unit_name or '(none)'} is not yet supported by flott "
            f"(it has {', '.join(_UNITS_MS)})"
        )
    return round(float(e.this.this) * _UNITS_MS[unit_name])


def interval_timedelta(e: Any) -> _dt.timedelta:
    return _dt.timedelta(milliseconds=interval_ms(e, "an interval"))


def rewrite(text: str) -> Rewritten:
    """The statement with its watermark clause and window TVF calls cut out (see the module doc)."""
    out = Rewritten(text)
    tokens = _tokens(text)
    if not tokens:
        return out
    _cut_watermark(out, tokens)
    _cut_constraints(out, tokens)
    _cut_tvfs(out, tokens)
    _rename_functions(out, tokens)
    out.text, out.row_types = cut_row_types(out.text, tokens)  # before BYTES is respelled in them
    out.text = spell_bytes_for_sqlglot(out.text, _tokens(out.text) if out.row_types else tokens)
    return out


RENAMED_FUNCTIONS = {
    "DATE_FORMAT": "dateFormat",
    "FROM_UNIXTIME": "fromUnixtime",
    "UNIX_TIMESTAMP": "unixTimestamp",
    "TO_DATE": "toDate",
    "TO_TIMESTAMP": "toTimestamp",
}
"""Flink functions sqlglot's Spark dialect rewrites into Spark's (lossy: TO_TIMESTAMP becomes a
CAST, DATE_FORMAT's Java pattern a strftime one): they reach sqlglot renamed to ``_F`` + the name
without its first two letters (same length, so positions hold) and are planned by their Flink name."""
RENAMED_BY_ALIAS = {"_F" + name[2:]: flink for name, flink in RENAMED_FUNCTIONS.items()}


def _rename_functions(out: Rewritten, tokens: list[Any]) -> None:
    for t, nxt in itertools.pairwise(tokens):
        name = t.text.upper()
        exact = t.end - t.start + 1 == len(name)  # not a quoted identifier
        if name in RENAMED_FUNCTIONS and nxt.token_type.name == "L_PAREN" and exact:
            out.text = out.text[: t.start] + "_F" + name[2:] + out.text[t.end + 1 :]


def _cut_watermark(out: Rewritten, tokens: list[Any]) -> None:
    if tokens[0].text.upper() != "CREATE":
        return
    for i, t in enumerate(tokens):
        if t.text.upper() != "WATERMARK" or i + 1 >= len(tokens) or tokens[i + 1].text.upper() != "FOR":
            continue
        if i + 3 >= len(tokens) or tokens[i + 3].text.upper() != "AS":
            raise SqlParseError(
                "org.apache.flink.table.api.SqlParserException: SQL parse failed. "
                "WATERMARK FOR needs 'WATERMARK FOR <column> AS <expression>'"
            )
        column = tokens[i + 2].text
        depth, end = 0, i + 4
        while end < len(tokens):
            name = tokens[end].token_type.name
            if name == "L_PAREN":
                depth += 1
            elif name == "R_PAREN":
                if depth == 0:
                    break
                depth -= 1
            elif name == "COMMA" and depth == 0:
                break
            end += 1
        expression = _source(out.text, tokens[i + 4 : end])
        if not expression:
            raise SqlParseError(
                "org.apache.flink.table.api.SqlParserException: SQL parse failed. "
                "WATERMARK FOR has no expression"
            )
        if out.watermark is not None:
            raise validation_error("Multiple watermark definitions are not supported yet.")
        out.watermark = WatermarkClause(column, parse_expression(expression))
        start = tokens[i - 1].start if tokens[i - 1].token_type.name == "COMMA" else t.start
        out.text = _blank(out.text, start, tokens[end - 1].end + 1)


_NOT_ENFORCED = (
    "Flink doesn't support ENFORCED mode for PRIMARY KEY constraint. ENFORCED/NOT ENFORCED controls if the "
    "constraint checks are performed on the incoming/outgoing data. Flink does not own the data therefore "
    "the only supported mode is the NOT ENFORCED mode"
)


def _cut_constraints(out: Rewritten, tokens: list[Any]) -> None:
    """CREATE TABLE's ``PRIMARY KEY (a, b) NOT ENFORCED`` (or a column's ``PRIMARY KEY NOT
    ENFORCED``) and ``METADATA [FROM 'key'] [VIRTUAL]`` after a column's type: kept, cut out."""
    if len(tokens) < 4 or tokens[0].text.upper() != "CREATE" or tokens[1].token_type.name != "TABLE":
        return
    opening = next((i for i, t in enumerate(tokens) if t.token_type.name == "L_PAREN"), None)
    if opening is None:
        return
    close = _matching(tokens, opening)
    column: str | None = None
    expect_column = True
    depth = 0
    i = opening + 1
    while i < close:
        t = tokens[i]
        name = t.token_type.name
        if name == "L_PAREN":
            depth += 1
        elif name == "R_PAREN":
            depth -= 1
        if depth:
            i += 1
            continue
        if name == "COMMA":
            expect_column = True
            i += 1
            continue
        if expect_column:
            expect_column = False
            item_start = i
            if name == "VAR" and t.text.upper() == "CONSTRAINT":
                i += 2  # CONSTRAINT <name>
                if i >= close or tokens[i].token_type.name != "PRIMARY_KEY":
                    raise NotYetSupportedError("CREATE TABLE: only PRIMARY KEY constraints are supported")
            if tokens[i].token_type.name == "PRIMARY_KEY":  # a table constraint: PRIMARY KEY (a, b)
                if i + 1 >= close or tokens[i + 1].token_type.name != "L_PAREN":
                    raise SqlParseError(
                        "org.apache.flink.table.api.SqlParserException: SQL parse failed. PRIMARY KEY needs "
                        "its columns: PRIMARY KEY (a, b) NOT ENFORCED"
                    )
                end = _matching(tokens, i + 1)
                keys = [k.text.strip("`") for k in tokens[i + 2 : end] if k.token_type.name != "COMMA"]
                last = _primary_key(out, tokens, end + 1, close, keys)
                cut_from = item_start - 1 if tokens[item_start - 1].token_type.name == "COMMA" else item_start
                out.text = _blank(out.text, tokens[cut_from].start, tokens[last].end + 1)
                i = last + 1
                continue
            column = t.text.strip("`")
            i += 1
            continue
        if name == "PRIMARY_KEY" and column is not None:  # a column's own: a INT PRIMARY KEY NOT ENFORCED
            last = _primary_key(out, tokens, i + 1, close, [column])
            out.text = _blank(out.text, t.start, tokens[last].end + 1)
            i = last + 1
            continue
        if name == "VAR" and t.text.upper() == "METADATA" and column is not None:
            j, key = i + 1, column
            if j < close and tokens[j].token_type.name == "FROM":
                if j + 1 >= close or tokens[j + 1].token_type.name != "STRING":
                    raise SqlParseError(
                        "org.apache.flink.table.api.SqlParserException: SQL parse failed. "
                        "METADATA FROM needs a string literal key"
                    )
                key, j = tokens[j + 1].text, j + 2
            virtual = j < close and tokens[j].text.upper() == "VIRTUAL"
            out.metadata[column] = (key, virtual)
            last = j if virtual else j - 1
            out.text = _blank(out.text, t.start, tokens[last].end + 1)
            i = last + 1
            continue
        i += 1


def _primary_key(out: Rewritten, tokens: list[Any], j: int, close: int, keys: list[str]) -> int:
    """Records the key; ``tokens[j:]`` must be NOT ENFORCED: the index of ENFORCED."""
    if out.primary_key is not None:
        raise validation_error("Duplicate primary key definition")
    enforced = j + 1 < close and tokens[j].token_type.name == "NOT"
    enforced = enforced and tokens[j + 1].text.upper() == "ENFORCED"
    if not enforced:
        raise validation_error(_NOT_ENFORCED)
    out.primary_key = keys
    return j + 1


def _cut_tvfs(out: Rewritten, tokens: list[Any]) -> None:
    i = 0
    while i + 3 < len(tokens):
        t = tokens[i]
        if not (
            t.token_type.name == "TABLE"
            and tokens[i + 1].token_type.name == "L_PAREN"
            and tokens[i + 2].text.upper() in WINDOW_TVFS
            and tokens[i + 3].token_type.name == "L_PAREN"
        ):
            i += 1
            continue
        close_outer = _matching(tokens, i + 1)
        close_inner = _matching(tokens, i + 3)
        if close_inner != close_outer - 1:
            raise NotYetSupportedError(
                f"TABLE({tokens[i + 2].text.upper()}(...) ...): only the window function call may stand "
                "inside TABLE(...)"
            )
        call = _tvf_call(out.text, tokens[i + 2].text.upper(), tokens, i + 4, close_inner - 1)
        name = f"{PLACEHOLDER}{len(out.tvfs)}_"[:5]
        if len(out.tvfs) >= 100:
            raise NotYetSupportedError("more than 100 window TVF calls in one statement")
        out.tvfs[name] = call
        out.text = _blank(out.text, t.start, tokens[close_outer].end + 1, name)
        i = close_outer + 1


_ARITY = {"TUMBLE": 1, "HOP": 2, "CUMULATE": 2, "SESSION": 1}


def _tvf_call(text: str, kind: str, tokens: list[Any], first: int, last: int) -> WindowTvfCall:
    args = _split_arguments(tokens, first, last)
    for a in args:
        if any(t.text == "=>" for t in a):
            raise NotYetSupportedError(
                f"{kind}: named arguments (=>) are not yet supported by flott's SQL"
            )
    want = 2 + _ARITY[kind]
    if len(args) != want:
        offset = " (an offset argument is not yet supported by flott)" if len(args) == want + 1 else ""
        raise validation_error(
            f"Invalid number of arguments to function '{kind}'. Was expecting {want} arguments{offset}"
        )
    data = args[0]
    if len(data) < 2 or data[0].token_type.name != "TABLE":
        raise validation_error(
            f"{kind}: the first argument must be TABLE <name>, got '{_source(text, data)}'"
        )
    table_tokens = data[1:]
    keys: list[str] = []
    for j, tok in enumerate(table_tokens):
        if tok.token_type.name == "PARTITION_BY":
            skip = ("L_PAREN", "R_PAREN", "COMMA")
            keys = [k.text for k in table_tokens[j + 1 :] if k.token_type.name not in skip]
            table_tokens = table_tokens[:j]
            break
    if keys and kind != "SESSION":
        raise validation_error(f"{kind} does not take PARTITION BY (only SESSION does)")
    table = _source(text, table_tokens)
    descriptor = args[1]
    if (
        len(descriptor) != 4
        or descriptor[0].text.upper() != "DESCRIPTOR"
        or descriptor[1].token_type.name != "L_PAREN"
    ):
        raise validation_error(
            f"{kind}: the second argument must be DESCRIPTOR(<time column>), "
            f"got '{_source(text, descriptor)}'"
        )
    intervals = [interval_ms(parse_expression(_source(text, a)), f"{kind}'s interval") for a in args[2:]]
    if any(v <= 0 for v in intervals):
        raise validation_error(f"{kind}: window intervals must be positive")
    return WindowTvfCall(kind, table.strip("`"), descriptor[2].text, intervals, keys)
