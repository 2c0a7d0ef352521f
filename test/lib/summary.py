"""summary.py - what scripts/test.sh and scripts/test-sanitized.sh print
after ctest's own output:

  skipped: <test>: <reason>          for every skipped or partly skipped
                                     entry (reasons from test-skips/)
  slowest: <seconds> s of <limit> s  <test>   the 10 slowest entries, marked
                                     when over a third of their limit

  summary.py BUILD_DIR JUNIT_XML

JUNIT_XML is ctest's --output-junit file of the run; the reasons are the
files harness.py and lit/run.py write to BUILD_DIR/test-skips/<test>.txt;
the limits are the tests' TIMEOUT properties (ctest --show-only=json-v1).
A skipped entry that recorded no reason is listed as such."""
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

SLOWEST = 10


def limits(build):
    """{test name: TIMEOUT seconds} of the build folder's ctest entries."""
    try:
        r = subprocess.run(["ctest", "--show-only=json-v1"], cwd=build, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True)
        tests = json.loads(r.stdout)["tests"]
    except (OSError, ValueError, KeyError, subprocess.CalledProcessError):
        return {}
    out = {}
    for t in tests:
        for p in t.get("properties", []):
            if p.get("name") == "TIMEOUT":
                out[t["name"]] = float(p["value"])
    return out


def main():
    build, junit = sys.argv[1:3]
    cases = []
    try:
        for c in ET.parse(junit).getroot().iter("testcase"):
            cases.append((c.get("name"), c.get("status"), float(c.get("time") or 0)))
    except (OSError, ET.ParseError):
        pass
    folder = os.path.join(build, "test-skips")
    reasons = {}
    for f in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        if f.endswith(".txt"):
            with open(os.path.join(folder, f)) as fh:
                reasons[f[:-4]] = [l.rstrip("\n") for l in fh if l.strip()]
    for name, status, _ in cases:
        if status in ("notrun", "skipped") and name not in reasons:
            reasons[name] = ["(no reason recorded)"]
    for name in sorted(reasons):
        for line in reasons[name]:
            print(f"skipped: {name}: {line}")
    lim = limits(build)
    ran = sorted((c for c in cases if c[1] != "disabled"),
                 key=lambda c: -c[2])[:SLOWEST]
    for name, _, secs in ran:
        limit = f"{lim[name]:.0f} s" if name in lim else "no limit"
        near = "  (over a third of its limit)" if name in lim and secs * 3 > lim[name] else ""
        print(f"slowest: {secs:6.1f} s of {limit:>6}  {name}{near}")


if __name__ == "__main__":
    main()
