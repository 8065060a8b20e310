"""ember.utils.benchmark: timing statements (Timer), their results
(Measurement) and tables comparing them (Compare)."""

from ember.utils.benchmark.utils.common import *  # noqa: F403
from ember.utils.benchmark.utils.compare import *  # noqa: F403
from ember.utils.benchmark.utils.timer import *  # noqa: F403
