#!/usr/bin/env python3
"""The console's pages on a big ledger: each page's server time, from its Server-Timing header.

    python3 benches/console.py --db sqlite:///path/to/ledger.db [--bin target/release/clearledger]
    python3 benches/console.py --db postgres://user@host:port/db

The ledger is one a benchmark left (benches/e2e.py --formats recon, or `generate recon --payments
5000000` ingested, docs/performance.md): the script adds an API key to its `default` tenant, starts
`clearledger serve` on loopback, signs in, finds the two biggest runs, a reconciliation and one of its
ambiguous items, an account with statements and a posting key, then asks each console page
--repeat times (after one untimed request) and prints, per page, the median, the 95th percentile
and the largest server time in milliseconds, and whether the largest is under the target (200 ms).
Only GETs: nothing is written but the API key and the session.
"""

import argparse
import http.cookiejar
import json
import re
import statistics
import subprocess
import sys
import urllib.parse
import urllib.request

TARGET_MS = 200.0


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def opener(jar):
    return urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar), NoRedirect())


def get(op, url):
    try:
        r = op.open(url, timeout=120)
    except urllib.error.HTTPError as e:
        r = e
    return r.status, dict(r.headers), r.read().decode("utf-8", "replace")


def sign_in(op, base, key):
    _, _, page = get(op, f"{base}/console/sign-in")
    csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
    data = urllib.parse.urlencode({"csrf": csrf, "api_key": key, "next": "/console/"}).encode()
    try:
        op.open(urllib.request.Request(f"{base}/console/sign-in", data=data), timeout=60)
    except urllib.error.HTTPError as e:
        if e.code != 303:
            sys.exit(f"sign-in failed: {e.code}")


def first(pattern, text, what):
    m = re.search(pattern, text)
    if not m:
        sys.exit(f"no {what} found on the page")
    return m.group(1)


def pages(op, base):
    """The pages to time, found by reading the console itself."""
    _, _, runs = get(op, f"{base}/console/runs")
    ids = [int(i) for i in re.findall(r'href="/console/runs/(\d+)"', runs)]
    counts = {}
    for i in ids:
        _, _, run = get(op, f"{base}/console/runs/{i}")
        counts[i] = int(first(r'data-testid="posted">(\d+)<', run, "posted count"))
    # The two biggest runs: on a reconciliation ledger, the bank's statement (its entries)
    # and our payments (postings): each reads its records from a part of the report of its own.
    big, second = sorted(counts, key=counts.get, reverse=True)[:2]
    _, _, run = get(op, f"{base}/console/runs/{second}")
    key = first(r'<td class="id">([^<]+)<br>', run, "posting key")
    _, _, recon = get(op, f"{base}/console/reconciliations")
    rid = first(r'href="/console/reconciliations/(\d+)"', recon, "reconciliation")
    _, _, amb = get(op, f"{base}/console/reconciliations/{rid}?outcome=ambiguous")
    item = first(rf'href="/console/reconciliations/{rid}/items/(\d+)"', amb, "ambiguous item")
    _, _, st = get(op, f"{base}/console/statements")
    account = first(r'/console/statements\?account=([^"]+)"', st, "account")
    runs = []
    for r in (big, second):
        half = counts[r] // 2
        runs += [
            (f"run {r} ({counts[r]} records), first records", f"/console/runs/{r}"),
            (f"run {r}, records from {half}", f"/console/runs/{r}?after={half}"),
            (f"run {r}, duplicates only", f"/console/runs/{r}?outcome=duplicate"),
            (f"run {r}, reverse preview", f"/console/runs/{r}/reverse"),
        ]
    return big, counts[big], [
        ("overview", "/console/"),
        ("runs", "/console/runs"),
        ("runs, filtered", "/console/runs?status=completed&kind=ingest"),
        ("upload form", "/console/upload"),
        *runs,
        ("held", "/console/held"),
        ("lookup by key", "/console/lookup?" + urllib.parse.urlencode({"by": "key", "value": key})),
        ("statements", "/console/statements"),
        ("statements of an account", f"/console/statements?account={account}"),
        ("reconciliations", "/console/reconciliations"),
        (f"reconciliation {rid}", f"/console/reconciliations/{rid}"),
        (f"reconciliation {rid}, ambiguous", f"/console/reconciliations/{rid}?outcome=ambiguous"),
        (f"reconciliation {rid}, item {item}", f"/console/reconciliations/{rid}/items/{item}"),
    ]


def server_ms(headers):
    t = headers.get("server-timing") or headers.get("Server-Timing") or ""
    m = re.search(r"dur=([\d.]+)", t)
    return float(m.group(1)) if m else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True)
    ap.add_argument("--bin", default="target/release/clearledger")
    ap.add_argument("--repeat", type=int, default=20)
    a = ap.parse_args()
    key = subprocess.run([a.bin, "--db", a.db, "apikey", "create", "--label", "console bench"],
                         check=True, capture_output=True, text=True).stdout.strip()
    serve = subprocess.Popen([a.bin, "--db", a.db, "serve", "--listen", "127.0.0.1:0", "--json"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        base = "http://" + json.loads(serve.stdout.readline())["listening"]
        op = opener(http.cookiejar.CookieJar())
        sign_in(op, base, key)
        big, posted, todo = pages(op, base)
        print(f"ledger {a.db}: the biggest run, {big}, has {posted} records; {a.repeat} requests a page\n")
        print("| page | median ms | p95 ms | max ms | < 200 ms |")
        print("|---|---:|---:|---:|:---:|")
        worst = 0.0
        for name, path in todo:
            status, _, _ = get(op, base + path)
            if status != 200:
                sys.exit(f"{path}: HTTP {status}")
            t = sorted(server_ms(get(op, base + path)[1]) for _ in range(a.repeat))
            p95 = t[min(len(t) - 1, int(round(0.95 * (len(t) - 1))))]
            worst = max(worst, t[-1])
            ok = "yes" if t[-1] < TARGET_MS else "**no**"
            print(f"| {name} | {statistics.median(t):.1f} | {p95:.1f} | {t[-1]:.1f} | {ok} |")
        print(f"\nworst page: {worst:.1f} ms (target < {TARGET_MS:.0f} ms)")
    finally:
        serve.terminate()
        serve.wait()


if __name__ == "__main__":
    main()
