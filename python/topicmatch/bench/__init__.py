"""``topicmatch bench``: every algorithm beside the floor and the Python peers.

Split by concept: ``workloads`` (what is matched), ``peers`` (what is measured: ours, the
floor, paho-mqtt, kombu, amqtt), ``throughput`` and ``latency`` (how), ``report`` and
``plots`` (what is shown), ``run`` (the order), ``command`` (the CLI); ``scaling`` is the
``lookup_many`` thread-scaling run of ``scripts/bench_lookup_many_threads.py``. The bench extras
(tqdm, hdrhistogram, matplotlib and the peers) are imported only when used.
"""
