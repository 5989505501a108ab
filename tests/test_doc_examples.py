"""The Python examples of the README and the docs run as written, and every value a comment
shows is the value the line gives (a comment that starts with a Python literal:
`m.lookup(t)  # [42, 'alice']`)."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: The documents with Python examples, and how many values their comments show at least.
DOCUMENTS = {"README.md": 10, "docs/FIELDS.md": 5, "docs/RELATIONS.md": 5, "docs/STORE.md": 1,
             "docs/SPARK.md": 0}


def blocks(document: str) -> list[str]:
    text = (ROOT / document).read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, re.DOTALL)


def shown(comment: str) -> tuple[bool, Any]:
    """The literal a comment starts with, if any: its longest prefix that is one (a prefix
    ending in a comma would be a one-item tuple of what the text lists)."""
    text = comment.strip()
    for end in range(len(text), 0, -1):
        prefix = text[:end].rstrip()
        if not prefix or prefix.endswith(","):
            continue
        try:
            return True, ast.literal_eval(prefix)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    return False, None


def plain(value: Any) -> Any:
    """Arrow results as Python values."""
    return value.to_pylist() if hasattr(value, "to_pylist") else value


def run(source: str, namespace: dict[str, Any], only_imports: bool = False,
        document: str = "README") -> int:
    """Runs `source` statement by statement in `namespace`; how many shown values it checked."""
    lines = source.splitlines()
    checked = 0
    for statement in ast.parse(source).body:
        if only_imports and not isinstance(statement, (ast.Import, ast.ImportFrom)):
            continue
        code = ast.Module(body=[statement], type_ignores=[])
        if not isinstance(statement, ast.Expr):
            exec(compile(code, document, "exec"), namespace)
            continue
        value = eval(compile(ast.Expression(statement.value), document, "eval"), namespace)
        line = lines[statement.end_lineno - 1] if statement.end_lineno else ""
        _, _, comment = line.partition("  #")
        found, want = shown(comment)
        if found:
            assert plain(value) == want, f"{document}: {line.strip()}"
            checked += 1
    return checked


@pytest.mark.parametrize("document", DOCUMENTS)
def test_the_examples_run_and_show_what_they_give(document: str) -> None:
    found = blocks(document)
    assert found, f"no Python example in {document}"
    namespace: dict[str, Any] = {}
    checked = 0
    for source in found:
        if "topicmatch.spark" in source:
            # A Spark example reads the user's files: its imports are what can be checked.
            pytest.importorskip("pyspark")
            run(source, namespace, only_imports=True, document=document)
        else:
            checked += run(source, namespace, document=document)
    assert checked >= DOCUMENTS[document]


def test_a_wrong_value_in_a_comment_is_caught() -> None:
    with pytest.raises(AssertionError, match="README"):
        run('import topicmatch as tm\ntm.matches("a/+", "a/b", dialect="mqtt")  # False\n', {})
    assert shown("[0, 0, 1]: the topic of each") == (True, [0, 0, 1])
    assert shown("[('t', b'1')], in order") == (True, [("t", b"1")])
    assert shown("one call, GIL released") == (False, None)
