"""Run a probe in a fresh Python process, so that an abort, a segfault or a
hang fails one test instead of killing (or stalling) the whole run."""

import os
import signal
import subprocess
import sys
import textwrap


def run_isolated(code: str, *args: str, timeout: float = 120.0, threads: int = 2) -> subprocess.CompletedProcess:
    """Run ``code`` with ``python -c``; fail with the process's output if it dies
    from a signal or outlives ``timeout`` seconds. Returns the finished process."""
    env = dict(os.environ, NUMBA_NUM_THREADS=str(threads), PYTHONFAULTHANDLER="1")
    env.pop("NUMBA_THREADING_LAYER", None)  # the library's own choice is what is tested
    try:
        done = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code), *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
        )
    except subprocess.TimeoutExpired as expired:
        raise AssertionError(
            f"the probe hung (killed after {timeout:.0f} s); its output so far:\n{_text(expired.stdout)}\n"
            f"{_text(expired.stderr)}"
        ) from None
    if done.returncode < 0:
        name = signal.Signals(-done.returncode).name
        raise AssertionError(f"the probe died from {name}:\n{done.stdout}\n{done.stderr[-4000:]}")
    return done


def _text(output) -> str:
    if output is None:
        return ""
    return output.decode(errors="replace") if isinstance(output, bytes) else output


def run_cli(*argv: str, timeout: float = 120.0) -> subprocess.CompletedProcess:
    """``python -m bandit_tree_tools ARGV`` in a fresh process (see :func:`run_isolated`)."""
    code = "import sys\nfrom bandit_tree_tools.cli import main\nsys.exit(main(sys.argv[1:]))\n"
    return run_isolated(code, *argv, timeout=timeout)
