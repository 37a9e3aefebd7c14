import os

from hypothesis import settings

# Plots in tests never need a screen.
os.environ.setdefault("MPLBACKEND", "Agg")

# `make test` draws the same property-test examples on every run, so a run fails only when
# the code changed, and a failure reproduces; BTT_HYPOTHESIS=explore draws new examples
# (with BTT_EXAMPLES=300 for a longer search) and keeps those that failed in .hypothesis/.
settings.register_profile("repeatable", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("BTT_HYPOTHESIS", "repeatable"))
