#!/usr/bin/env python3
"""One table of whole-program results: warm median ms of emberfire and the best peer, and the
first run of a fresh process (emberfire with an empty kernel cache and with a filled one, and
the best peer's). Reads the lines of benches/apps.rs and apps.py (ms= and cold_ms=).

    python3 apps_table.py FILE...
"""
import collections, re, sys

warm, cold = collections.defaultdict(dict), collections.defaultdict(dict)
for path in sys.argv[1:]:
    try:
        lines = open(path).read().splitlines()
    except OSError:
        continue
    for line in lines:
        kv = dict(re.findall(r"(\w+)=(\S+)", line))
        if "case" not in kv or "impl" not in kv:
            continue
        if "ms" in kv:
            warm[kv["case"]][kv["impl"]] = float(kv["ms"])
        if "cold_ms" in kv:
            cold[kv["case"]][kv["impl"]] = float(kv["cold_ms"])

def best_peer(row):
    peers = {k: v for k, v in row.items() if not k.startswith("emberfire")}
    return min(peers.items(), key=lambda kv: kv[1]) if peers else None

def fmt(v):
    return f"{v:.3f}" if v is not None and v < 10 else (f"{v:.1f}" if v is not None else "-")

print(f"{'case':16s} {'ember ms':>9s} {'best peer warm':>24s} {'peer/ember':>10s}"
      f" {'ember cold':>10s} {'ember disk':>10s} {'best peer cold':>24s}")
for case in sorted(set(warm) | set(cold), key=lambda c: list(warm).index(c) if c in warm else 99):
    w, c = warm.get(case, {}), cold.get(case, {})
    ours, bp = w.get("emberfire"), best_peer(w)
    ratio = f"{bp[1] / ours:10.2f}" if ours and bp else f"{'-':>10s}"
    bpc = best_peer(c)
    print(f"{case:16s} {fmt(ours):>9s} {(f'{bp[0]} {fmt(bp[1])}' if bp else '-'):>24s} {ratio}"
          f" {fmt(c.get('emberfire-cold')):>10s} {fmt(c.get('emberfire-disk')):>10s}"
          f" {(f'{bpc[0]} {fmt(bpc[1])}' if bpc else '-'):>24s}")
