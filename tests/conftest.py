import os

import matplotlib
from hypothesis import HealthCheck, settings

matplotlib.use("Agg")

# Numba compiles on first call, so no per-example deadline; CI has two cores, so a moderate budget.
settings.register_profile("treebook", deadline=None, max_examples=60,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("thorough", deadline=None, max_examples=1000,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
# CI runs a fixed sequence of examples so that a submission is judged on the same cases every time;
# developers' runs explore new examples (and keep failing ones in .hypothesis/).
settings.register_profile("ci", deadline=None, max_examples=60, derandomize=True, database=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile(os.environ.get("TREEBOOK_HYPOTHESIS", "ci" if os.environ.get("CI") else "treebook"))
