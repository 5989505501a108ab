"""Type stubs of the compiled module (checked against it by mypy.stubtest)."""

from collections.abc import Iterable
from typing import Any, Final, TypeAlias, final

ALGORITHMS: Final[tuple[str, ...]]
DIALECTS: Final[tuple[str, ...]]
__version__: Final[str]

_Subscriber: TypeAlias = str | int

__all__ = [
    "ALGORITHMS",
    "DIALECTS",
    "InvalidPattern",
    "InvalidTopic",
    "LimitExceeded",
    "Matcher",
    "TopicMatchError",
    "__version__",
    "_restore_matcher",
    "_route_arrow",
    "matches",
]

class TopicMatchError(Exception): ...
class InvalidPattern(TopicMatchError, ValueError): ...
class InvalidTopic(TopicMatchError, ValueError): ...
class LimitExceeded(TopicMatchError, ValueError): ...

@final
class Matcher:
    def __new__(
        cls,
        dialect: str = "amqp",
        algorithm: str = "trie",
        *,
        max_topic_bytes: int | None = None,
        max_levels: int | None = None,
        max_subscriptions: int | None = None,
    ) -> Matcher: ...
    @property
    def dialect(self) -> str: ...
    @property
    def algorithm(self) -> str: ...
    @property
    def limits(self) -> dict[str, int | None]: ...
    def subscribe(self, pattern: str, subscriber: _Subscriber) -> int: ...
    def unsubscribe(self, subscription_id: int) -> bool: ...
    def lookup(self, topic: str) -> list[_Subscriber]: ...
    def lookup_many(self, topics: Iterable[str]) -> list[list[_Subscriber]]: ...
    def matches_any(self, topic: str) -> bool: ...
    def subscriptions(self) -> list[tuple[int, str, _Subscriber]]: ...
    def __len__(self) -> int: ...
    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]: ...

def matches(pattern: str, topic: str, dialect: str = "amqp") -> bool: ...
def _restore_matcher(
    dialect: str,
    algorithm: str,
    limits: tuple[int, int, int],
    subscriptions: list[tuple[int, str, Any]],
    next_id: int,
) -> Matcher: ...
def _route_arrow(
    matcher: Matcher,
    length: int,
    offset: int,
    validity: Any | None,
    offsets: Any,
    data: Any | None,
    large: bool,
    keep_unmatched: bool,
) -> tuple[int, bytes, bytes | None, bytes, bytes | None, bytes, bytes]: ...
