"""MPS events: creating one needs the backend."""

from ember.mps._common import no_backend


class Event:
    """An MPS event (record, wait, query, synchronize, elapsed_time)."""

    def __init__(self, enable_timing: bool = False):
        no_backend("acquireEvent")
