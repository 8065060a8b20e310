"""The import path torch.nn.modules.distance: CosineSimilarity, PairwiseDistance."""

from ember.nn.modules.extra import CosineSimilarity, PairwiseDistance

__all__ = ["CosineSimilarity", "PairwiseDistance"]
