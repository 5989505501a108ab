"""The file formats ``topicmatch route`` reads and writes, and how it tells them apart: plain
Python, so that the command line checks its arguments before Spark starts."""

from __future__ import annotations

from pathlib import Path

#: Input and output formats of ``topicmatch route``.
FORMATS = ("parquet", "csv", "jsonl")

#: The format each file extension stands for.
EXTENSIONS = {
    ".parquet": "parquet", ".pq": "parquet", ".csv": "csv",
    ".jsonl": "jsonl", ".json": "jsonl", ".ndjson": "jsonl",
}


def input_format(path: str, override: str | None, own_flag: str | None = None) -> str:
    """The format of ``path``: ``override`` if given, else by extension (a folder of Parquet
    files, as Spark writes them, is Parquet). Raises ``ValueError`` if it cannot tell, naming
    ``--input-format`` and the input's ``own_flag`` (``--messages-format``) if given."""
    if override:
        return override
    suffix = Path(path).suffix.lower()
    if suffix in EXTENSIONS:
        return EXTENSIONS[suffix]
    if Path(path).is_dir():
        return "parquet"
    raise ValueError(f"cannot tell the format of {path!r} from its extension: pass "
                     f"{_flags(own_flag)}")


def format_hint(path: str, override: str | None, own_flag: str | None = None) -> str:
    """For an input Spark could not read: a hint if ``input_format`` only guessed its format
    (no ``override``, no known extension: a folder, read as Parquet), else nothing."""
    if override is None and Path(path).suffix.lower() not in EXTENSIONS:
        return f" (read as Parquet, as a folder is; for another format: {_flags(own_flag)})"
    return ""


def _flags(own_flag: str | None) -> str:
    """The flags that set an input's format, with the formats."""
    alone = f", or {own_flag} for this input alone" if own_flag else ""
    return f"--input-format {'|'.join(FORMATS)}{alone}"


def local_path(path: str) -> Path | None:
    """``path`` as a local file if it names one (no scheme, or ``file:``), else ``None``
    (``s3a://``, ``hdfs://`` ... are checked by Spark when it reads them)."""
    if path.startswith("file://"):
        return Path(path[len("file://"):])
    if path.startswith("file:"):
        return Path(path[len("file:"):])
    if "://" in path:
        return None
    return Path(path)
