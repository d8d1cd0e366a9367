"""One rule for a statistic that cannot be computed on the data given: it is undefined, never a number.

The rule is judge.metrics.undefined (scoring computes statistics too: the agreement among a panel's judges); the
names are re-exported here, where the calibration statistics import them.
"""

from judge.metrics.undefined import NOT_RECORDED, Reasons, Statistics, Undefined, finite, require

__all__ = ["NOT_RECORDED", "Reasons", "Statistics", "Undefined", "finite", "require"]
