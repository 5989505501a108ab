"""Type stubs of the compiled module (checked against it by mypy.stubtest)."""

from collections.abc import Iterable, Mapping
from typing import Any, Final, Literal, TypeAlias, final

ALGORITHMS: Final[tuple[str, ...]]
DIALECTS: Final[tuple[str, ...]]
__version__: Final[str]

_Subscriber: TypeAlias = str | int
_Scalar: TypeAlias = str | int | float | bool
_Criterion: TypeAlias = (
    _Scalar
    | tuple[_Scalar, ...]
    | list[_Scalar]
    | set[_Scalar]
    | frozenset[_Scalar]
    | Present
    | Comparison
)
_Criteria: TypeAlias = Mapping[str, _Criterion]
_Mode: TypeAlias = Literal["all", "any"] | int
_Fields: TypeAlias = Mapping[str, object]

__all__ = [
    "ALGORITHMS",
    "Comparison",
    "DIALECTS",
    "FieldMatcher",
    "PRESENT",
    "Present",
    "InvalidPattern",
    "InvalidSubscriber",
    "InvalidTopic",
    "LimitExceeded",
    "Matcher",
    "TopicMatchError",
    "__version__",
    "_panic_for_tests",
    "_restore_field_matcher",
    "_restore_matcher",
    "_route_arrow",
    "covers",
    "ge",
    "gt",
    "intersects",
    "le",
    "lt",
    "matches",
]

class TopicMatchError(Exception): ...
class InvalidPattern(TopicMatchError, ValueError): ...
class InvalidTopic(TopicMatchError, ValueError): ...
class InvalidSubscriber(TopicMatchError, ValueError): ...
class LimitExceeded(TopicMatchError, ValueError): ...

@final
class Matcher:
    def __new__(
        cls,
        dialect: str,
        algorithm: str = "cstrie",
        *,
        max_topic_bytes: int | None = None,
        max_levels: int | None = None,
        max_subscriptions: int | None = None,
        cache_capacity: int | None = None,
    ) -> Matcher: ...
    @property
    def dialect(self) -> str: ...
    @property
    def algorithm(self) -> str: ...
    @property
    def cache_capacity(self) -> int | None: ...
    @property
    def limits(self) -> dict[str, int | None]: ...
    def subscribe(
        self,
        pattern: str,
        subscriber: _Subscriber,
        *,
        where: _Criteria | None = None,
        mode: _Mode | None = None,
    ) -> int: ...
    def unsubscribe(self, subscription_id: int) -> bool: ...
    def lookup(self, topic: str, fields: _Fields | None = None) -> list[_Subscriber]: ...
    def lookup_many(
        self, topics: Iterable[str], fields: Iterable[_Fields | None] | None = None
    ) -> list[list[_Subscriber]]: ...
    def matches_any(self, topic: str, fields: _Fields | None = None) -> bool: ...
    def covering(self, pattern: str) -> list[tuple[int, str, _Subscriber]]: ...
    def intersecting(self, pattern: str) -> list[tuple[int, str, _Subscriber]]: ...
    def subscriptions(self) -> list[tuple[int, str, _Subscriber]]: ...
    def filters(self) -> list[tuple[int, dict[str, _Criterion], _Mode]]: ...
    def __len__(self) -> int: ...
    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]: ...

@final
class Present:
    def __reduce__(self) -> str: ...

PRESENT: Final[Present]

@final
class Comparison:
    @property
    def op(self) -> str: ...
    @property
    def value(self) -> int | float: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]: ...

def lt(value: int | float) -> Comparison: ...
def le(value: int | float) -> Comparison: ...
def gt(value: int | float) -> Comparison: ...
def ge(value: int | float) -> Comparison: ...

@final
class FieldMatcher:
    def __new__(cls) -> FieldMatcher: ...
    def subscribe(
        self, criteria: _Criteria, subscriber: _Subscriber, mode: _Mode | None = None
    ) -> int: ...
    def unsubscribe(self, subscription_id: int) -> bool: ...
    def lookup(self, message: _Fields) -> list[_Subscriber]: ...
    def lookup_many(self, messages: Iterable[_Fields]) -> list[list[_Subscriber]]: ...
    def hits(self, message: _Fields) -> dict[_Subscriber, int]: ...
    def subscriptions(self) -> list[tuple[int, dict[str, _Criterion], _Mode, _Subscriber]]: ...
    def __len__(self) -> int: ...
    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]: ...

def matches(pattern: str, topic: str, dialect: str) -> bool: ...
def covers(general: str, specific: str, dialect: str, *, max_work: int | None = None) -> bool: ...
def intersects(a: str, b: str, dialect: str) -> bool: ...
def _restore_matcher(
    dialect: str,
    algorithm: str,
    limits: tuple[int, int, int],
    subscriptions: list[tuple[int, str, Any]],
    next_id: int,
    filters: list[tuple[int, Any, Any]] = ...,
    cache_capacity: int | None = None,
) -> Matcher: ...
def _restore_field_matcher(
    subscriptions: list[tuple[int, Any, Any, Any]],
    next_id: int,
) -> FieldMatcher: ...
def _panic_for_tests(release_gil: bool) -> None: ...
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
