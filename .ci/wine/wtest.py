#!/usr/bin/env python3
"""Runs a Windows Go test binary under wine: passes unless a test failed for
more than wine 8 failing to remove its temporary folder (wine 8 lacks
FileDispositionInformationEx, with which Go 1.26 removes files)."""
import collections, json, os, shlex, subprocess, sys
exe, args = sys.argv[1], sys.argv[2:]
p = subprocess.run(["bash", "-c", f'wine {shlex.quote(exe)} -test.v=test2json {shlex.join(args)} 2>/dev/null | go tool test2json'],
                   capture_output=True, text=True)
out = collections.defaultdict(list); failed = []; passed = 0
for line in p.stdout.splitlines():
    try: e = json.loads(line)
    except ValueError: continue
    t = e.get("Test")
    if not t: continue
    if e["Action"] == "output": out[t].append(e["Output"])
    elif e["Action"] == "fail": failed.append(t)
    elif e["Action"] == "pass": passed += 1
if not passed and not failed:
    sys.exit(f"{os.path.basename(exe)}: no test ran under wine (run it with wine by hand to see why)")
real = []
for t in failed:
    if any(f.startswith(t + "/") for f in failed): continue  # parent of a failed subtest
    msgs = [l for l in out[t] if l.strip() and not l.lstrip().startswith(("=== ", "--- "))]
    if all("RemoveAll cleanup" in m for m in msgs): continue
    real.append((t, msgs))
cleanup = sum(1 for t in failed if not any(f.startswith(t + "/") for f in failed)) - len(real)
print(f"{os.path.basename(exe)}: {passed} passed, {cleanup} failed only in wine's TempDir cleanup, {len(real)} failed")
for t, m in real:
    print("FAIL", t); print("".join(m[:6]), end="")
sys.exit(1 if real else 0)
