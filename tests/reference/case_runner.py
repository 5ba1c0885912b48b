"""What the parity comparators (compare_capture.py, compare_config.py, compare_profile.py,
compare_weights.py) share: running the tool on every case, a few at a time, reporting each case
in order, saying how two jsonl outputs differ in length, and tallying checks. Standard library
only."""
import concurrent.futures
import subprocess
import time
import traceback


def timed_run(cmd, timeout):
    """(exit status or None on timeout, stdout bytes, stderr text, seconds) of one tool run."""
    start = time.monotonic()
    try:
        run = subprocess.run(cmd, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, b"", f"timed out after {timeout} s", time.monotonic() - start
    except OSError as exc:
        return None, b"", f"could not run {cmd[0]}: {exc}", time.monotonic() - start
    return (run.returncode, run.stdout, run.stderr.decode("utf-8", errors="replace"),
            time.monotonic() - start)


def count_difference(expected_lines, got_lines):
    """`N lines, expected M; first missing: ...` (or `first extra: ...`) for jsonl outputs whose
    lines agree as far as both go, or None when they have as many lines."""
    if len(expected_lines) == len(got_lines):
        return None
    n = min(len(expected_lines), len(got_lines))
    more = (f"first missing: {expected_lines[n][:300]}" if len(expected_lines) > n
            else f"first extra: {got_lines[n][:300]}")
    return f"{len(got_lines)} lines, expected {len(expected_lines)}; {more}"


def run_cases(cases, run_tool, check, jobs):
    """Runs run_tool(case) for every case, `jobs` at a time, and check(case, result) -> (problems,
    detail) on each result in case order; prints `PASS name (detail)` or `FAIL name: the first two
    problems`, then `N passed, M failed`. Returns 0 only when some case ran and every one passed."""
    passed = failed = 0
    with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:
        runs = [pool.submit(run_tool, case) for case in cases]
        for case, future in zip(cases, runs):
            problems, detail = check(case, future.result())
            if problems:
                failed += 1
                print(f"FAIL {case['name']}: " + "\n  ".join(problems[:2]), flush=True)
            else:
                passed += 1
                print(f"PASS {case['name']} ({detail})", flush=True)
    print(f"{passed} passed, {failed} failed")
    return 0 if passed and not failed else 1


class Checks:
    """PASS or FAIL per check, with up to 20 of a failure's problems, and the tally."""

    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, case, what, problems):
        if problems:
            self.failed += 1
            print(f"FAIL {case}: {what}")
            for p in problems[:20]:
                print("  " + p)
            if len(problems) > 20:
                print(f"  ... {len(problems) - 20} more")
        else:
            self.passed += 1
            print(f"PASS {case}: {what}")

    def run(self, case, what, fn):
        """check() of `fn()`, whose failed assertion (or any exception) is the problem."""
        try:
            fn()
            problems = []
        except Exception:  # noqa: BLE001 - every failure is reported, the rest still run
            problems = traceback.format_exc().rstrip("\n").split("\n")
        self.check(case, what, problems)

    def summary(self):
        """Prints `N passed, M failed`; the exit status."""
        print(f"{self.passed} passed, {self.failed} failed")
        return 1 if self.failed else 0
