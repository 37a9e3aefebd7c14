import os

# Plots in tests never need a screen.
os.environ.setdefault("MPLBACKEND", "Agg")
