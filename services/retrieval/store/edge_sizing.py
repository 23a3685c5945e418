"""What an open collection of the embedded store costs, measured: 50 open took 3,894 MiB and 818
threads, 100 took 6.9 GB and 1,507 threads (python -m bench.idle_collections)."""

COLLECTION_MIB = 72
"""Memory of one open collection (its shards' segments, caches and engine threads)."""


def open_collections_within(memory_mib: int) -> int:
    """How many collections may be open at once within `memory_mib`."""
    return max(1, memory_mib // COLLECTION_MIB)
