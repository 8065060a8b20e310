"""XPU streams and events: classes that exist but cannot be created in a
build without XPU."""

from ember._absent_backend import dummy_type

Stream = dummy_type("Stream")
Event = dummy_type("Event")
