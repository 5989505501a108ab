"""topicmatch: exact, fast topic matching for AMQP 0-9-1, MQTT and NATS subscriptions.

>>> import topicmatch as tm
>>> m = tm.Matcher(dialect="amqp", algorithm="trie")
>>> m.subscribe("stock.*.ibm", "alice")
1
>>> m.lookup("stock.nyse.ibm")
['alice']
"""

from topicmatch._native import (
    ALGORITHMS,
    DIALECTS,
    ArrowArray,
    PRESENT,
    Comparison,
    FieldMatcher,
    InvalidPattern,
    InvalidSubscriber,
    InvalidTopic,
    LimitExceeded,
    Matcher,
    Present,
    TopicMatchError,
    TopicStore,
    TopicStoreIterator,
    __version__,
    covers,
    ge,
    gt,
    intersects,
    le,
    lt,
    matches,
)

__all__ = [
    "ALGORITHMS",
    "ArrowArray",
    "DIALECTS",
    "PRESENT",
    "Comparison",
    "FieldMatcher",
    "InvalidPattern",
    "InvalidSubscriber",
    "InvalidTopic",
    "LimitExceeded",
    "Matcher",
    "Present",
    "TopicMatchError",
    "TopicStore",
    "TopicStoreIterator",
    "__version__",
    "covers",
    "ge",
    "gt",
    "intersects",
    "le",
    "lt",
    "matches",
]
