"""Operator-database rows whose operator has no forward-mode (tangent)
formula in Ember while PyTorch has one: test_forward_ad expects
NotImplementedError for them and fails once a formula lands, so the list
only shrinks."""

FORWARD_AD_GAPS: frozenset[str] = frozenset()
