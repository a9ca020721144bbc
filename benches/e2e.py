#!/usr/bin/env python3
"""End-to-end benchmark on large files.

Generates an N-entry NACHA file with `clearledger generate`, then, each step timed with its
peak RSS:
  1. `clearledger check`            parse + validate alone
  2. `clearledger ingest`           first ingest into a fresh SQLite database
  3. `clearledger ingest --report`  re-upload of the same file, full per-record report written
and, in the same run, the database's own rates for the same rows into the same schema and
indexes (the sqlite3 shell's `.import`, a prepared insert per row in one transaction, with the
same pragmas), so each figure is printed with its ratio to that ceiling.

With --postgres (a server from CLEARLEDGER_TEST_PG_URL, else started by scripts/pg-start.sh) the
same steps run on PostgreSQL, with its ceilings for the same rows into the same schema and indexes:
`COPY` into `postings`, and `COPY` into a staging table + `INSERT … SELECT … ON CONFLICT DO NOTHING`
(fresh, and again with every row a conflict).

Usage: python3 benches/e2e.py [--entries 1000000] [--postgres] [--keep DIR]
Needs a release build (`cargo build --release`), the sqlite3 shell, and psql for --postgres.
"""
import argparse, os, shutil, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "clearledger")
SCHEMA = os.path.join(ROOT, "migrations", "sqlite", "0001_ledger.sql")
PRAGMAS = "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA cache_size=-262144;"
COLS = ("tenant, operation, posting_key, file_id, record_no, trace_number, debit_account, "
        "credit_account, amount_minor, currency, effective_date, fingerprint, detail, run_id, posted_at")


def timed(cmd, stdin=None, stdout=subprocess.DEVNULL):
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE if stdin else None, stdout=stdout,
                         stderr=subprocess.PIPE, text=True)
    if stdin:
        p.stdin.write(stdin)
        p.stdin.close()
    _, status, ru = os.wait4(p.pid, 0)
    secs = time.perf_counter() - t0
    err = p.stderr.read()
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        sys.exit(f"{cmd[0]} failed ({code}): {err}")
    return secs, ru.ru_maxrss / 1024.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--entries", type=int, default=1_000_000)
    ap.add_argument("--keep", help="work directory to keep (default: a temp dir, removed)")
    ap.add_argument("--postgres", action="store_true", help="also measure PostgreSQL")
    a = ap.parse_args()
    if not os.path.exists(BIN):
        sys.exit("build first: cargo build --release")
    work = a.keep or tempfile.mkdtemp(prefix="clearledger-e2e-")
    os.makedirs(work, exist_ok=True)
    try:
        f = os.path.join(work, "big.ach")
        db = os.path.join(work, "ledger.db")
        for p in (db, db + "-wal", db + "-shm"):
            if os.path.exists(p):
                os.remove(p)
        subprocess.run([BIN, "generate", "nacha", "--entries", str(a.entries), "--batches", "10",
                        "--seed", "11", "-o", f], check=True)
        mb = os.path.getsize(f) / 1e6
        n = a.entries
        rows = []
        s, rss = timed([BIN, "check", "-q", f])
        rows.append(("parse + validate (check)", s, rss, None))
        s, rss = timed([BIN, "--db", "sqlite://" + db, "ingest", "-q", f])
        rows.append(("SQLite first ingest", s, rss, "fresh"))
        s, rss = timed([BIN, "--db", "sqlite://" + db, "ingest", "-q", f, "--report",
                        os.path.join(work, "report.csv")])
        rows.append(("SQLite re-upload + report", s, rss, "reupload"))

        # Ceilings, same rows, same schema and indexes, same pragmas.
        csv_path = os.path.join(work, "rows.csv")
        subprocess.run(["sqlite3", db], input=f".headers off\n.mode csv\n.output {csv_path}\n"
                       f"SELECT {COLS} FROM postings WHERE run_id = 1;\n", text=True, check=True)
        raw = os.path.join(work, "raw.db")
        for p in (raw, raw + "-wal", raw + "-shm"):
            if os.path.exists(p):
                os.remove(p)
        schema = open(SCHEMA).read()
        subprocess.run(["sqlite3", raw], input=PRAGMAS + schema +
                       "INSERT INTO runs (run_id, tenant, sha256, format, source_name, started_at, status) "
                       "VALUES (1, 'default', '', 'nacha', 'x', 'x', 'completed');", text=True, check=True,
                       stdout=subprocess.DEVNULL)
        script = (f"{PRAGMAS}\n"
                  f"BEGIN;\n.mode csv\n.import {csv_path} postings_view\nCOMMIT;\n")
        # A view with exactly the posting columns, so .import binds one prepared insert per row.
        subprocess.run(["sqlite3", raw], input=f"CREATE VIEW postings_view AS SELECT {COLS} FROM postings;\n"
                       f"CREATE TRIGGER postings_view_ins INSTEAD OF INSERT ON postings_view BEGIN "
                       f"INSERT INTO postings ({COLS}) VALUES ("
                       + ", ".join("NEW." + c.strip() for c in COLS.split(",")) + "); END;",
                       text=True, check=True)
        s_fresh, _ = timed(["sqlite3", raw], stdin=script)
        reup = (f"{PRAGMAS}\nCREATE TEMP TABLE staging AS SELECT {COLS} FROM postings WHERE 0;\n"
                f".mode csv\n.import {csv_path} staging\n.timer off\n"
                f"BEGIN;\nINSERT INTO postings ({COLS}) SELECT {COLS} FROM staging WHERE true ON CONFLICT DO NOTHING;\nCOMMIT;\n")
        s_reup, _ = timed(["sqlite3", raw], stdin=reup)
        ceil = {"fresh": n / s_fresh, "reupload": n / s_reup}

        print(f"# {n:,} NACHA entries, {mb:.1f} MB; {os.cpu_count()} cores; {time.strftime('%Y-%m-%d')}")
        print(f"| step | seconds | records/s | MB/s | peak RSS MB | ceiling records/s | ratio |")
        print(f"|---|---|---|---|---|---|---|")
        for name, s, rss, kind in rows:
            c = ceil.get(kind)
            cs = f"{c:,.0f}" if c else "-"
            ratio = f"{(n / s) / c:.2f}" if c else "-"
            print(f"| {name} | {s:.2f} | {n / s:,.0f} | {mb / s:.0f} | {rss:.0f} | {cs} | {ratio} |")
        print(f"| ceiling: sqlite3 .import (prepared insert per row, one transaction) | {s_fresh:.2f} | {n / s_fresh:,.0f} | | | | |")
        print(f"| ceiling: staging + INSERT … SELECT ON CONFLICT DO NOTHING (all conflicts) | {s_reup:.2f} | {n / s_reup:,.0f} | | | | |")
        if a.postgres:
            postgres(n, mb, f, csv_path, work)
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


def pg_url():
    url = os.environ.get("CLEARLEDGER_TEST_PG_URL")
    if not url:
        out = subprocess.run([os.path.join(ROOT, "scripts", "pg-start.sh")], capture_output=True, text=True, check=True).stdout
        url = out.strip().split("=", 1)[1]
    return url


def with_db(url, name):
    base, _, query = url.partition("?")
    head = base[: base.index("/", base.index("://") + 3)]
    return f"{head}/{name}" + (f"?{query}" if query else "")


def postgres(n, mb, f, csv_path, work):
    admin = pg_url()
    schema = os.path.join(ROOT, "migrations", "postgres", "0001_ledger.sql")
    def psql(url, sql, stdin=None):
        return subprocess.run(["psql", "-q", "-v", "ON_ERROR_STOP=1", url, "-c", sql] if sql else ["psql", "-q", "-v", "ON_ERROR_STOP=1", url],
                              input=stdin, text=True, check=True, capture_output=True)
    for name in ("cl_e2e", "cl_e2e_raw"):
        psql(admin, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        psql(admin, f"CREATE DATABASE {name}")
    url = with_db(admin, "cl_e2e")
    rows = []
    s, rss = timed([BIN, "--db", url, "ingest", "-q", f])
    rows.append(("PostgreSQL first ingest", s, rss))
    s, rss = timed([BIN, "--db", url, "ingest", "-q", f, "--report", os.path.join(work, "pg-report.csv")])
    rows.append(("PostgreSQL re-upload + report", s, rss))
    raw = with_db(admin, "cl_e2e_raw")
    psql(raw, None, stdin=open(schema).read() +
         "INSERT INTO runs (run_id, tenant, sha256, format, source_name, started_at, status) OVERRIDING SYSTEM VALUE "
         "VALUES (1, 'default', '', 'nacha', 'x', 'x', 'completed');")
    t0 = time.perf_counter()
    psql(raw, None, stdin=f"\\copy postings ({COLS}) FROM '{csv_path}' WITH (FORMAT csv)\n")
    s_copy = time.perf_counter() - t0
    psql(raw, f"CREATE TABLE staging AS SELECT {COLS} FROM postings WHERE false")
    psql(raw, None, stdin=f"\\copy staging ({COLS}) FROM '{csv_path}' WITH (FORMAT csv)\n")
    t0 = time.perf_counter()
    psql(raw, f"INSERT INTO postings ({COLS}) SELECT {COLS} FROM staging ON CONFLICT DO NOTHING")
    s_conflicts = time.perf_counter() - t0
    psql(raw, "TRUNCATE postings CASCADE")
    t0 = time.perf_counter()
    psql(raw, f"INSERT INTO postings ({COLS}) SELECT {COLS} FROM staging ON CONFLICT DO NOTHING")
    s_fresh = time.perf_counter() - t0
    print()
    print("| PostgreSQL step | seconds | records/s | MB/s | peak RSS MB | ratio to COPY | ratio to INSERT…SELECT ON CONFLICT |")
    print("|---|---|---|---|---|---|---|")
    first, reup = rows
    print(f"| {first[0]} | {first[1]:.2f} | {n / first[1]:,.0f} | {mb / first[1]:.0f} | {first[2]:.0f} | {s_copy / first[1]:.2f} | {s_fresh / first[1]:.2f} |")
    print(f"| {reup[0]} | {reup[1]:.2f} | {n / reup[1]:,.0f} | {mb / reup[1]:.0f} | {reup[2]:.0f} | - | {s_conflicts / reup[1]:.2f} (all conflicts) |")
    print(f"| ceiling: COPY into postings | {s_copy:.2f} | {n / s_copy:,.0f} | | | | |")
    print(f"| ceiling: staging + INSERT … SELECT ON CONFLICT DO NOTHING, fresh | {s_fresh:.2f} | {n / s_fresh:,.0f} | | | | |")
    print(f"| ceiling: same, every row a conflict | {s_conflicts:.2f} | {n / s_conflicts:,.0f} | | | | |")
    for name in ("cl_e2e", "cl_e2e_raw"):
        subprocess.run(["psql", "-q", admin, "-c", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"], capture_output=True)


if __name__ == "__main__":
    main()
