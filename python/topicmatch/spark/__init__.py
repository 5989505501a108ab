"""topicmatch on Apache Spark: route message archives against a subscription set in the
executors with the native matcher.

    from topicmatch.spark import route, session
    spark = session("local[2]")
    out = route(messages_df, subscriptions_df, dialect="mqtt")  # + subscriber, error

Importing ``topicmatch`` never imports pyspark; this package needs the ``spark`` extra
(``pip install topicmatch[spark]``).
"""

from topicmatch.spark.routing import FanoutCounts, fanout_counts, route
from topicmatch.spark.session import session
from topicmatch.spark.subscriptions import InvalidSubscriptions

__all__ = ["FanoutCounts", "InvalidSubscriptions", "fanout_counts", "route", "session"]
