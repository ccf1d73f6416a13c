"""Sum a pytest junit report's test times by test file: where a run's time went.

    python scripts/junit_by_file.py REPORT.xml [--top N]

Prints the number of tests that ran (not skipped) on the first line, then the N slowest files
(default 15): seconds summed over the file's tests, the test count, the path. A test's junit time
includes its fixtures' set-up and tear-down, so a module-scoped server counts in the first test
that uses it and the file's sum holds it once. scripts/test.sh runs it at the end of a run.
"""

from __future__ import annotations

import argparse
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path


def test_file(testcase: ET.Element, root: Path) -> str:
    """The file of a junit testcase: its `file` attribute, else the longest module prefix of its
    classname that is a file under root (`tests.acp.test_x.TestY` -> tests/acp/test_x.py)."""
    if testcase.get("file"):
        return testcase.get("file", "")
    parts = testcase.get("classname", "").split(".")
    for end in range(len(parts), 0, -1):
        candidate = "/".join(parts[:end]) + ".py"
        if (root / candidate).is_file():
            return candidate
    return testcase.get("classname", "") or "?"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report")
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--root", default=".", help="the checkout the report's tests ran from")
    args = parser.parse_args(argv)
    try:
        tree = ET.parse(args.report).getroot()
    except (OSError, ET.ParseError) as error:
        print(0)
        print(f"no junit report to read ({args.report}: {error})", file=sys.stderr)
        return 1
    root = Path(args.root)
    seconds: Counter[str] = Counter()
    counts: Counter[str] = Counter()
    ran = 0
    for testcase in tree.iter("testcase"):
        name = test_file(testcase, root)
        seconds[name] += float(testcase.get("time") or 0)
        counts[name] += 1
        if testcase.find("skipped") is None:
            ran += 1
    print(ran)
    total = sum(seconds.values())
    print(f"{args.top} slowest test files (junit times summed by file, set-up included; "
          f"all files: {total:,.0f} s in {len(seconds)} files):")
    for name, value in seconds.most_common(args.top):
        print(f"  {value:8.1f} s  {counts[name]:4d} tests  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
