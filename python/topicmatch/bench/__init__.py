"""``topicmatch bench``: every algorithm beside the floor and the Python peers.

Split by concept: ``workloads`` (what is matched), ``peers`` (what is measured: ours, the
floor, paho-mqtt, kombu, amqtt), ``throughput`` and ``latency`` (how), ``report`` and
``plots`` (what is shown), ``run`` (the order), ``command`` (the CLI). ``boundary``
(``python -m topicmatch.bench.boundary``) measures what the Python boundary costs: the thread
scaling of the three lookup calls (``scaling``), the Arrow call against the core's own loop,
and delivery on the high fan-out workloads (``fanout``). The bench extras (tqdm, hdrhistogram,
matplotlib and the peers) are imported only when used.
"""
