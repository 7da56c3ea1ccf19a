"""Reading CSV and Parquet files as data only, with one-line errors.

What is refused, and why (each a :class:`~memviz.errors.BadTable` naming the file, the
column where there is one, and the problem):

* more than :data:`MAX_COLUMNS` columns, from the header (CSV) or the footer (Parquet), before
  anything is parsed: every later step grows with the column count, and a hostile 110k-column
  header took minutes to reach its error;
* a NUL byte anywhere in a CSV file (pandas cuts the cell there: ``>\\x0050K`` became ``>``, a
  phantom class) or in a Parquet text cell;
* Parquet list, struct, map (nested) and binary columns, and cells of a frame that hold lists,
  dicts or arrays: a table cell must be one value;
* empty files, files without a header, empty or duplicate column names, UTF-16/32 text,
  undecodable bytes, malformed CSV.

The header is split as the CSV parser splits it (quoted fields may hold line breaks; U+2028,
U+0085 and the other characters :meth:`str.splitlines` breaks on are ordinary characters).
"""
from __future__ import annotations

import csv
import io
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from memviz.errors import BadTable

#: a table with more columns is refused before it is parsed
MAX_COLUMNS = 1_000
#: a categorical column with more distinct values is left out when a schema is inferred, and
#: refused when a schema names it (:func:`memviz.tables.data.validate_frame`)
MAX_CATEGORIES = 1_000


def check_columns(n: int, source: str) -> None:
    """BadTable when ``n`` columns exceed :data:`MAX_COLUMNS`."""
    if n > MAX_COLUMNS:
        raise BadTable(f"{source}: {n:,} columns; at most {MAX_COLUMNS:,} are read (leave out the columns "
                       "you do not need)")


def read_frame(path: str | Path) -> pd.DataFrame:
    """Read a CSV or Parquet file into a DataFrame, with one-line errors.

    CSV: comma separated (other delimiters are sniffed), UTF-8 (a BOM is accepted);
    empty cells and ``?`` are missing values.
    """
    path = Path(path)
    if not path.exists():
        raise BadTable(f"{path}: file not found")
    if path.is_dir():
        raise BadTable(f"{path}: is a folder, expected a CSV or Parquet file")
    suffix = path.suffix.lower()
    if suffix in (".parquet", ".pq"):
        return _read_parquet(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise BadTable(f"{path}: cannot read file ({exc.strerror})") from None
    if raw[:4] == b"PAR1":
        return _read_parquet(path)
    return read_csv_bytes(raw, str(path))


def check_parquet_schema(schema, source: str) -> None:
    """A Parquet (pyarrow) schema memviz can read: at most :data:`MAX_COLUMNS` columns, unique
    names, no nested (list, struct, map) columns."""
    check_columns(len(schema.names), source)
    _check_unique([str(n) for n in schema.names], source)  # pyarrow fails on duplicates with a cryptic message
    for f in schema:
        t = f.type
        kind = ("list" if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)
                else "struct" if pa.types.is_struct(t) else "map" if pa.types.is_map(t)
                else "nested" if pa.types.is_nested(t) else None)
        if kind:
            raise BadTable(f"{source}: column {str(f.name)!r}: a {kind} column ({t}); a table cell must hold "
                           "one value (flatten it into columns)")


def _read_parquet(path: Path) -> pd.DataFrame:
    try:
        schema = pq.read_schema(path)
    except Exception:
        schema = None  # pd.read_parquet below reports the problem
    if schema is not None:
        check_parquet_schema(schema, str(path))
    try:
        df = pd.read_parquet(path)
    except Exception as exc:  # pyarrow raises many types
        raise BadTable(f"{path}: not a readable Parquet file ({type(exc).__name__})") from None
    df.columns = [str(c) for c in df.columns]  # pandas metadata may restore int/float names
    _check_unique(list(df.columns), str(path))
    if df.shape[1] == 0:
        raise BadTable(f"{path}: the table has no columns")
    if len(df) == 0:
        raise BadTable(f"{path}: the table has a header but no rows")
    check_frame(df, str(path))
    return df.reset_index(drop=True)


#: cell types that are one value (anything else is checked further)
_SCALARS = {str, int, float, bool, type(None), bytes}


def check_frame(df: pd.DataFrame, source: str) -> None:
    """BadTable for a cell that is not one value (a list, dict, set or array) or a text cell
    holding a NUL character, naming the column and the row (1-based data row)."""
    check_columns(df.shape[1], source)
    for i in range(df.shape[1]):
        s = df.iloc[:, i]
        if s.dtype != object and not pd.api.types.is_string_dtype(s):
            continue
        col = str(df.columns[i])
        v = s.to_numpy()
        j = None
        if s.dtype == object and not set(map(type, v)) <= _SCALARS:
            j = next((j for j, x in enumerate(v) if type(x) not in _SCALARS
                      and (isinstance(x, (list, tuple, dict, set)) or hasattr(x, "__array__"))), None)
        if j is not None:
            raise BadTable(f"{source}: column {col!r}: data row {j + 1} holds a {type(v[j]).__name__}; "
                           "a table cell must hold one value")
        j = next((j for j, x in enumerate(v) if isinstance(x, str) and "\x00" in x), None)
        if j is not None:
            raise BadTable(f"{source}: column {col!r}: a NUL character in data row {j + 1} (text cells must "
                           "not hold NUL bytes)")


def read_csv_bytes(raw: bytes, source: str) -> pd.DataFrame:
    """Parse CSV bytes (from a file or an upload) with one-line errors (see the module docstring)."""
    if not raw.strip():
        raise BadTable(f"{source}: the file is empty")
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff") or (b"\x00" in raw[:4096] and _looks_like_utf16(raw[:4096])):
        raise BadTable(f"{source}: unreadable encoding (UTF-16/UTF-32 text; save the file as UTF-8)")
    if b"\x00" in raw[:4096]:
        raise BadTable(f"{source}: binary content, expected a CSV or Parquet file")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadTable(f"{source}: unreadable encoding at byte {exc.start} (expected UTF-8 text)") from None
    # the first physical line, split on "\n" only (as the parser does): for the delimiter
    first = next((line for line in _lines(text) if line.strip()), None)  # pandas skips blank lines too
    if first is None:  # only a BOM or Unicode whitespace
        raise BadTable(f"{source}: the file is empty")
    try:
        delimiter = csv.Sniffer().sniff(first[:20_000], delimiters=",;\t|").delimiter
    except csv.Error:
        delimiter = ","
    buf = io.StringIO(text)
    header = _header(buf, delimiter, source)
    names = [h.strip() for h in header]
    check_columns(len(names), source)
    nul = text.find("\x00")
    if nul >= 0:
        _refuse_nul(text, nul, delimiter, names, source)
    if _looks_like_data(names):
        raise BadTable(f"{source}: no header row (the first line looks like data: {first[:60]!r})")
    if any(n == "" for n in names):
        raise BadTable(f"{source}: column {names.index('') + 1} has an empty name (is the header missing?)")
    _check_unique(names, source)
    buf.seek(0)
    try:
        df = pd.read_csv(buf, sep=delimiter, na_values=["?"], keep_default_na=True,
                         skipinitialspace=True, low_memory=False)
    except pd.errors.ParserError as exc:
        msg = str(exc).strip().splitlines()[-1]
        raise BadTable(f"{source}: malformed CSV ({msg})") from None
    if df.shape[1] != len(names):  # cannot happen with one parser's rules; never a 'Length mismatch'
        raise BadTable(f"{source}: malformed CSV (a header of {len(names)} names but {df.shape[1]} columns)")
    df.columns = names
    if len(df) == 0:
        raise BadTable(f"{source}: the table has a header but no rows")
    return df


def _lines(text: str):
    """Physical lines split on ``\\n`` alone (not :meth:`str.splitlines`), lazily."""
    start = 0
    while start <= len(text):
        end = text.find("\n", start)
        if end < 0:
            yield text[start:]
            return
        yield text[start:end]
        start = end + 1


def _header(buf: io.StringIO, delimiter: str, source: str) -> list[str]:
    """The first non-blank record, split by the csv module (quoted line breaks kept)."""
    try:
        for row in csv.reader(buf, delimiter=delimiter, skipinitialspace=True):
            if "".join(row).strip():
                return row
    except csv.Error as exc:
        raise BadTable(f"{source}: malformed CSV header ({exc})") from None
    raise BadTable(f"{source}: the file is empty")


def _refuse_nul(text: str, pos: int, delimiter: str, names: list[str], source: str) -> None:
    """BadTable naming the line and (as far as its fields tell) the column of a NUL character."""
    line_no = text.count("\n", 0, pos) + 1
    start = text.rfind("\n", 0, pos) + 1
    try:
        fields = next(csv.reader([text[start:pos]], delimiter=delimiter))
    except (csv.Error, StopIteration):
        fields = [""]
    i = max(0, len(fields) - 1)
    col = f"column {names[i]!r}" if i < len(names) else f"field {i + 1}"
    raise BadTable(f"{source}: {col}: a NUL byte on line {line_no} (text cells must not hold NUL bytes; "
                   "is this a binary file?)")


def _check_unique(names: list[str], source: str) -> None:
    seen: set[str] = set()
    for n in names:
        if n in seen:
            raise BadTable(f"{source}: column {n!r}: duplicate column name")
        seen.add(n)


def _looks_like_utf16(head: bytes) -> bool:
    """BOM-less UTF-16/32 text: NUL bytes in most even (or most odd) positions."""
    even, odd = head[0::2], head[1::2]
    return max(even.count(0) / max(len(even), 1), odd.count(0) / max(len(odd), 1)) > 0.4


def _looks_like_data(names: list[str]) -> bool:
    """A header whose every cell parses as a number is data, not column names."""
    def is_num(s: str) -> bool:
        try:
            float(s)
            return True
        except ValueError:
            return False
    return len(names) > 0 and all(is_num(n) for n in names)
