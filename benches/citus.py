#!/usr/bin/env python3
"""The same ingests against plain PostgreSQL and against a Citus coordinator, in one run.

    python3 benches/citus.py --citus 'postgres://postgres@127.0.0.1:9700/clearledger?sslmode=disable' \
        [--entries 200000] [--tenants 4] [--bin target/release/clearledger]

For each target, in a database of its own (made here; on Citus on every node, with the
extension, the workers registered): `db migrate` (timed: on Citus it distributes the
tables), a first ingest of a generated NACHA file, the same file again (the exact
re-upload's replay), again with its report written, the same entries under another file
identity (each record classified one by one: held as re-sent), and the same file
under `--tenants` tenants at once, one process each (on Citus their shards sit on both
workers). Prints a Markdown table: seconds and records per second of each step, and the
Citus figure's ratio to plain PostgreSQL's.

The plain PostgreSQL server is scripts/pg-start.sh's (or CLEARLEDGER_TEST_PG_URL); the Citus
coordinator is given. Both on one machine, so this measures what the coordinator's routing
and the shards cost, never scale-out: docs/citus.md says how throughput grows with workers.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benches"))
from e2e import pg_url, psql, with_db  # noqa: E402


def at_node(url, host, port):
    scheme, rest = url.split("://", 1)
    user, _, hostpart = rest.rpartition("@")
    tail = hostpart[len(hostpart.split("/")[0].split("?")[0]):]
    return f"{scheme}://{user + '@' if user else ''}{host}:{port}{tail}"


def fresh_plain(admin, name):
    psql(admin, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    psql(admin, f"CREATE DATABASE {name}")
    return with_db(admin, name)


def fresh_citus(admin, name):
    rows = subprocess.run(["psql", "-At", admin, "-c",
                           "SELECT nodename || ' ' || nodeport FROM pg_dist_node WHERE noderole = 'primary' "
                           "ORDER BY groupid, nodeport"], text=True, check=True, capture_output=True).stdout
    nodes = [tuple(line.split()) for line in rows.strip().splitlines()]
    for host, port in nodes:
        node = at_node(admin, host, port)
        psql(node, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        psql(node, f"CREATE DATABASE {name}")
        psql(with_db(node, name), "CREATE EXTENSION citus")
    url = with_db(admin, name)
    psql(url, f"SELECT citus_set_coordinator_host('{nodes[0][0]}', {nodes[0][1]})")
    for host, port in nodes[1:]:
        psql(url, f"SELECT citus_add_node('{host}', {port})")
    return url


def timed(cmd):
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True)
    s = time.perf_counter() - t0
    if out.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)}: exit {out.returncode}\n{out.stderr}")
    return s


def steps(bin_, url, files, tenants, work):
    cl = lambda *a: [bin_, "--db", url, *a]  # noqa: E731
    out = {"db migrate": timed(cl("db", "migrate"))}
    for t in range(tenants):
        subprocess.run(cl("tenant", "add", f"bank{t}"), check=True, capture_output=True)
    f, other = files
    out["first ingest"] = timed(cl("ingest", "-q", f))
    out["exact re-upload (replay)"] = timed(cl("ingest", "-q", f))
    out["re-upload, report written"] = timed(cl("ingest", "-q", f, "--report", os.path.join(work, "r.csv")))
    out["same entries, another file id (held as re-sent)"] = timed(cl("ingest", "-q", other))
    t0 = time.perf_counter()
    procs = [subprocess.Popen(cl("--tenant", f"bank{t}", "ingest", "-q", f), stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE) for t in range(tenants)]
    for p in procs:
        if p.wait() != 0:
            sys.exit(p.stderr.read().decode())
    out[f"{tenants} tenants at once (first ingest each)"] = time.perf_counter() - t0
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--citus", required=True,
                    help="a Citus coordinator's URL: a database where the workers are registered")
    ap.add_argument("--entries", type=int, default=200_000)
    ap.add_argument("--tenants", type=int, default=4)
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "clearledger"))
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as work:
        f, other = os.path.join(work, "a.ach"), os.path.join(work, "b.ach")
        subprocess.run([a.bin, "generate", "nacha", "--entries", str(a.entries), "--seed", "3", "-o", f], check=True)
        # The same entries under another file identity: the header's modifier differs.
        with open(f) as src, open(other, "w") as dst:
            lines = src.read().split("\n")
            lines[0] = lines[0][:33] + ("B" if lines[0][33] != "B" else "C") + lines[0][34:]
            dst.write("\n".join(lines))
        plain = steps(a.bin, fresh_plain(pg_url(), "cl_bench_plain"), (f, other), a.tenants, work)
        citus = steps(a.bin, fresh_citus(a.citus, "cl_bench_citus"), (f, other), a.tenants, work)
    n = a.entries
    print(f"\n{n:,} NACHA entries; {a.tenants} tenants at once = {a.tenants * n:,} records\n")
    print("| step | PostgreSQL s | records/s | Citus (coordinator + 2 workers) s | records/s | Citus / PostgreSQL time |")
    print("|---|---:|---:|---:|---:|---:|")
    for step in plain:
        p, c = plain[step], citus[step]
        k = a.tenants * n if "at once" in step else n
        rate = lambda s: "" if step == "db migrate" else f"{k / s:,.0f}"  # noqa: E731
        print(f"| {step} | {p:.2f} | {rate(p)} | {c:.2f} | {rate(c)} | {c / p:.2f} |")


if __name__ == "__main__":
    main()
