import sys

from .cli import main

# guarded: the parallel `compile` starts its workers with "spawn", which imports this module again
if __name__ == "__main__":
    sys.exit(main())
