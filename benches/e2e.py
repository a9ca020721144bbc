#!/usr/bin/env python3
"""End-to-end benchmark on large files, with the database's own ceilings measured in the same run.

For each format (NACHA, pacs.008, camt.053) it generates an N-record file with `clearledger generate`,
then times each step with its peak RSS:
  1. `clearledger check`            parse + validate alone
  2. `clearledger ingest`           first ingest into a fresh SQLite database
  3. `clearledger ingest --report`  re-upload of the same file, full per-record report written
and, in the same run, the raw rate of a prepared-statement insert of the same rows into the same
schema and indexes in one transaction, with the same pragmas (examples/sqlite_ceiling.rs): once
into the empty table (the first-ingest ceiling), once again with every row a conflict (the
re-upload ceiling). Each figure is printed with its ratio to its ceiling.

With --postgres (a server from CLEARLEDGER_TEST_PG_URL, else started by scripts/pg-start.sh) the
same ingests run on PostgreSQL, beside its ceilings for the same rows into the same schema and
indexes: `COPY` into `postings` (for camt.053: `statement_entries`), and `INSERT … SELECT FROM unnest(arrays) ON CONFLICT DO NOTHING`
(fresh, and again with every row a conflict).

`check` is printed beside the bare streaming pass over the same file (examples/scan_ceiling.rs:
a memchr NACHA scan, or a quick-xml pass for pacs.008), timed in the same run:
each the median of 5 runs, the two alternated.

With --sizes 100000,1000000,5000000, check and first ingest (SQLite) run at each size, to show
that peak RSS does not grow with the file, and the rate at 5 M against the rate at 1 M.

With NACHA among the formats, the reference file of the test corpus (100 k entries) is checked
against achkit, the Python peer, which the script installs from PyPI into a virtual environment
in its work directory. Every ratio with a performance target (docs/performance.md) ends the output, in one table
("Targets, this run"), met or missed.

A camt.053 file's ceiling is the same measure on its own rows: the statement entries the
first ingest recorded, inserted into `statement_entries` with its indexes (the target: a statement
ingest at >= 0.7x that ceiling).

Reconciliation (`--formats recon`): `clearledger generate recon --payments N` writes
our payments and the bank's camt.053 with planted breaks; both are ingested (not timed), then
`reconcile` is timed, as a dry run (read + match + report) and recorded (its items and members
written), beside the same run's plain SQL join of the two tables on the identifier
(`postings.detail`'s EndToEndId, extracted and indexed, = `statement_entries.end_to_end_id`, every
pair counted), on SQLite and with --postgres on PostgreSQL: the targets are the recorded run (its
report written) >= 0.5x the join's rate and peak RSS <= 500 MB; the recorded run's report is
checked against the month's expected.jsonl, item for item.

Usage: python3 benches/e2e.py [--entries 1000000] [--formats nacha,pacs008,camt053,recon] [--postgres]
                              [--sizes 100000,1000000,5000000] [--keep DIR]
Builds what it runs (`cargo build --release`, the example); --postgres needs psql (installed
with PostgreSQL, which scripts/pg-start.sh starts).
"""
import argparse, csv, glob, json, os, shutil, sqlite3, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "clearledger")
CEILING = os.path.join(ROOT, "target", "release", "examples", "sqlite_ceiling")
SCAN = os.path.join(ROOT, "target", "release", "examples", "scan_ceiling")


def corpus_dir():
    """The test corpus where the tests look for it (src/test_support.rs): CLEARLEDGER_CORPUS,
    else ../shared/corpus beside the checkout, else target/corpus (scripts/fetch-corpus.sh)."""
    if os.environ.get("CLEARLEDGER_CORPUS"):
        return os.environ["CLEARLEDGER_CORPUS"]
    shared = os.path.join(ROOT, "..", "shared", "corpus")
    return shared if os.path.isdir(shared) else os.path.join(ROOT, "target", "corpus")


REFERENCE = os.path.join(corpus_dir(), "ach", "bench", "PPD-200-batches-100000-entries.ach.gz")
# The performance targets, gathered as the run measures them and printed together at the end:
# (what, figure, target, "≥" or "≤").
TARGETS = []


def target(what, figure, goal, sense="≥"):
    TARGETS.append((what, figure, goal, sense))
COLS = ("tenant, operation, posting_key, file_id, record_no, trace_number, debit_account, "
        "credit_account, amount_minor, currency, effective_date, fingerprint, detail, run_id, posted_at")
ENTRY_COLS = ("tenant, account, entry_key, statement_id, run_id, entry_no, amount_minor, currency, credit, "
              "reversal, status, booking_date, value_date, bank_ref, customer_ref, end_to_end_id, bank_tx_code, "
              "fingerprint, detail, recorded_at")


def table_of(fmt):
    """The table a format's rows go to, and its columns."""
    return ("statement_entries", ENTRY_COLS) if fmt == "camt053" else ("postings", COLS)


# A child's peak RSS as the kernel counts it includes its parent's at the fork (kept across
# exec): this script grows (reading reports to check them), so the child is started by
# /usr/bin/time, small, which reports its own child's.
TIME = "/usr/bin/time" if os.path.exists("/usr/bin/time") else None


def timed(cmd, stdin=None):
    t0 = time.perf_counter()
    wrap = [TIME, "-f", "maxrss-kb %M"] if TIME else []
    p = subprocess.Popen(wrap + cmd, stdin=subprocess.PIPE if stdin else None, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    if stdin:
        p.stdin.write(stdin)
        p.stdin.close()
    _, status, ru = os.wait4(p.pid, 0)
    secs = time.perf_counter() - t0
    err = p.stderr.read()
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        sys.exit(f"{' '.join(cmd)} failed ({code}): {err}")
    kb = [int(line.split()[1]) for line in err.splitlines() if line.startswith("maxrss-kb ")]
    return secs, (kb[-1] if kb else ru.ru_maxrss) / 1024.0


def fresh(path):
    for p in (path, path + "-wal", path + "-shm"):
        if os.path.exists(p):
            os.remove(p)


def export_rows(db, csv_path, fmt):
    """The first run's posting (or statement entry) rows as CSV (NULL as an empty field), for
    the ceilings."""
    table, cols = table_of(fmt)
    con = sqlite3.connect(db)
    with open(csv_path, "w", newline="") as out:
        w = csv.writer(out)
        for r in con.execute(f"SELECT {cols} FROM {table} WHERE run_id = 1 ORDER BY rowid"):
            # A BLOB (a posting's compact detail) as PostgreSQL's bytea hex text, which COPY
            # reads and examples/sqlite_ceiling.rs binds back as the same bytes.
            w.writerow(["\\x" + v.hex() if isinstance(v, bytes) else v for v in r])
    con.close()


def detail_field(stored, key_id):
    """The value of the key stored as `key_id` in a posting's compact detail
    (src/model/detail.rs: tag 0x01, then per field a key byte, or 0 and the key by name, and
    the value, each length LEB128-prefixed); None if absent or not that form."""
    if not isinstance(stored, bytes) or stored[:1] != b"\x01":
        return None
    i = 1

    def text():
        nonlocal i
        n, shift = 0, 0
        while True:
            b = stored[i]
            i += 1
            n |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                break
        v = stored[i:i + n]
        i += n
        return v

    while i < len(stored):
        k = stored[i]
        i += 1
        if k == 0:
            text()
        v = text()
        if k == key_id:
            return v.decode()
    return None


# `end_to_end_id`'s key byte in the compact detail (src/model/detail.rs, KEYS index + 1).
E2E_KEY = 26


def generate(fmt, n, path):
    if fmt == "nacha":
        cmd = [BIN, "generate", "nacha", "--entries", str(n), "--batches", "10", "--seed", "11", "-o", path]
    elif fmt == "camt053":
        cmd = [BIN, "generate", "camt053", "--entries", str(n), "--seed", "11", "-o", path]
    else:
        cmd = [BIN, "generate", "pacs008", "--tx", str(n), "--seed", "11", "-o", path]
    subprocess.run(cmd, check=True)


def row(name, n, mb, s, rss, ceiling=None):
    c = f"{ceiling:,.0f}" if ceiling else "-"
    ratio = f"{(n / s) / ceiling:.2f}" if ceiling else "-"
    rss = f"{rss:.0f}" if rss is not None else "-"
    print(f"| {name} | {s:.2f} | {n / s:,.0f} | {mb / s:.0f} | {rss} | {c} | {ratio} |")


HEADER = ("| step | seconds | records/s | MB/s | peak RSS MB | ceiling records/s | ratio |\n"
          "|---|---|---|---|---|---|---|")


# Runs of `check` and of the bare scan, per format: their medians are the figures.
RUNS = 5


def one_format(fmt, n, work, postgres_url):
    f = os.path.join(work, f"big.{fmt}")
    db = os.path.join(work, f"{fmt}.db")
    fresh(db)
    generate(fmt, n, f)
    mb = os.path.getsize(f) / 1e6
    # `check` and the bare scan: the median of RUNS each, alternated (one run of a
    # fraction of a second on a shared machine, right after the file was written, is a
    # sample of the minute, not of the program).
    checks, scans = [], []
    for _ in range(RUNS):
        checks.append(timed([BIN, "check", "-q", f]))
        # The bare streaming pass over the same file (examples/scan_ceiling.rs), same run.
        if fmt in ("nacha", "pacs008"):
            out = subprocess.run([SCAN, "nacha" if fmt == "nacha" else "xml", f], capture_output=True,
                                 text=True, check=True).stdout
            scans.append(json.loads(out)["secs"])
    check = sorted(checks)[RUNS // 2]
    scan = sorted(scans)[RUNS // 2] if scans else None
    if scan is not None:
        target(f"{fmt} `check`, MB/s (whole process)", mb / check[0], 1000 if fmt == "nacha" else 150)
    first = timed([BIN, "--db", "sqlite://" + db, "ingest", "-q", f])
    again = timed([BIN, "--db", "sqlite://" + db, "ingest", "-q", f, "--report", os.path.join(work, "report.csv")])
    again_bare = timed([BIN, "--db", "sqlite://" + db, "ingest", "-q", f])

    # Ceilings: the same rows, exported from the ledger just written.
    csv_path = os.path.join(work, f"{fmt}-rows.csv")
    export_rows(db, csv_path, fmt)
    raw = os.path.join(work, "raw.db")
    fresh(raw)
    table, cols = table_of(fmt)
    extra = ["--table", table, cols] if table != "postings" else []
    out = subprocess.run([CEILING, csv_path, raw] + extra, capture_output=True, text=True, check=True).stdout
    ceil = json.loads(out)
    c_fresh, c_conf = n / ceil["fresh_secs"], n / ceil["conflicts_secs"]
    fresh(raw)
    # The same posting rows into a narrow table (keys, amount, accounts, date,
    # 32-byte fingerprint; the two unique indexes only): what a row costs at the least.
    narrow = None
    if table == "postings":
        out = subprocess.run([CEILING, csv_path, raw, "--narrow"], capture_output=True, text=True,
                             check=True).stdout
        narrow = json.loads(out)
        fresh(raw)

    title = {"nacha": "NACHA entries", "camt053": "camt.053 entries"}.get(fmt, "pacs.008 transactions")
    print(f"\n### {n:,} {title}, {mb:.0f} MB — SQLite\n")
    print(HEADER)
    row(f"parse + validate (`check`, median of {RUNS})", n, mb, *check, n / scan if scan else None)
    if scan:
        what = "memchr line split + entry fields" if fmt == "nacha" else "quick-xml pass, transactions and amounts"
        row(f"ceiling: bare streaming scan ({what}; median of {RUNS})", n, mb, scan, None)
    row("SQLite first ingest", n, mb, *first, c_fresh)
    row("SQLite re-upload, report written", n, mb, *again, c_conf)
    row("SQLite re-upload, no report", n, mb, *again_bare, c_conf)
    row("ceiling: prepared INSERT, one transaction, fresh", n, mb, ceil["fresh_secs"], None)
    row("ceiling: same rows again, every one a conflict", n, mb, ceil["conflicts_secs"], None)
    target(f"{fmt} SQLite re-upload with report / all-conflict ceiling", (n / again[0]) / c_conf, 0.7)
    if narrow:
        row("SQLite first ingest vs the narrow ceiling", n, mb, *first, n / narrow["fresh_secs"])
        target(f"{fmt} SQLite first ingest / narrow-table ceiling", (n / first[0]) / (n / narrow["fresh_secs"]), 0.7)
        row("ceiling: narrow table (two unique indexes, 32-byte fingerprint), fresh", n, mb,
            narrow["fresh_secs"], None)
    if postgres_url:
        postgres(fmt, n, mb, f, csv_path, work, postgres_url)
    os.remove(f)


RECON_IBAN = "DE89370400440532013000"
TX_ID_KEY = 36  # `tx_id` in src/keys/detail.rs's KEYS, stored one past its index


def recon(n, work, postgres_url):
    """Reconcile n payments against their statement, beside a plain SQL join, on SQLite and
    (with --postgres) PostgreSQL; the report checked against the month's expected.jsonl."""
    d = os.path.join(work, "recon")
    shutil.rmtree(d, ignore_errors=True)
    subprocess.run([BIN, "generate", "recon", "--payments", str(n), "--seed", "11", "--out-dir", d], check=True,
                   stdout=subprocess.DEVNULL)
    db = os.path.join(work, "recon.db")
    fresh(db)
    recon_on("SQLite", "sqlite://" + db, d, work, sqlite_join(db))
    fresh(db)
    if postgres_url:
        psql(postgres_url, "DROP DATABASE IF EXISTS cl_e2e_recon WITH (FORCE)")
        psql(postgres_url, "CREATE DATABASE cl_e2e_recon")
        url = with_db(postgres_url, "cl_e2e_recon")
        recon_on("PostgreSQL", url, d, work, pg_join(url, work))
        psql(postgres_url, "DROP DATABASE IF EXISTS cl_e2e_recon WITH (FORCE)")
    shutil.rmtree(d, ignore_errors=True)


def recon_on(backend, url, d, work, join):
    for f in sorted(glob.glob(os.path.join(d, "*.xml"))):
        timed([BIN, "--db", url, "ingest", "-q", f])
    subprocess.run([BIN, "--db", url, "-q", "account", "map", "--bank-account", RECON_IBAN,
                    "--ledger-account", "acct:" + RECON_IBAN], check=True)
    base = [BIN, "--db", url, "-q", "reconcile", "--bank-account", RECON_IBAN, "--from", "2026-11-01",
            "--to", "2026-11-30", "--rules", os.path.join(d, "rules.toml")]
    dry = timed(base + ["--dry-run", "--report", os.path.join(work, "recon-dry.csv")])
    report = os.path.join(work, "recon.jsonl")
    rec = timed(base + ["--report", report])
    again = timed(base)
    names, ours, theirs = join["names"](), join["count"]("postings"), join["count"]("statement_entries")
    same, differ = recon_check(report, os.path.join(d, "expected.jsonl"), names)
    pairs, join_s = join["time"]()
    rows = ours + theirs
    ceil = rows / join_s
    print(f"\n### reconcile {ours:,} postings against {theirs:,} statement entries — {backend}\n")
    print(f"(the join pairs {pairs:,} of them in {join_s:.2f} s; the recorded run's report "
          f"{'equals' if same else 'does NOT equal'} expected.jsonl item for item ({differ:,} differ))\n")
    print(HEADER)
    row("reconcile --dry-run (read, match, report)", rows, 0, *dry, ceil)
    row("reconcile (items and members recorded, report written)", rows, 0, *rec, ceil)
    row("reconcile again (the same run, reported)", rows, 0, *again, ceil)
    row("ceiling: plain SQL join on the identifier", rows, 0, join_s, None)
    target(f"reconcile recorded / SQL join, {backend}, {ours:,} postings", (rows / rec[0]) / ceil, 0.5)
    target(f"reconcile recorded peak RSS MB, {backend}, {ours:,} postings", rec[1], 500, "≤")
    target(f"reconcile dry run peak RSS MB, {backend}, {ours:,} postings", dry[1], 500, "≤")
    target(f"reconcile report = expected.jsonl, {backend} (items differing)", differ, 0, "≤")


def recon_check(report, expected, names):
    """Whether the report's items are expected.jsonl's (outcome, level, both sides' members by
    name, as the generated-month test compares them); how many differ."""
    def key(outcome, by, ours, theirs):
        return (outcome, by or None, tuple(sorted(ours)), tuple(sorted(theirs)))
    want, got = {}, {}
    with open(expected) as f:
        for line in f:
            e = json.loads(line)
            k = key(e["outcome"], e["matched_by"], e["our"], e["their"])
            want[k] = want.get(k, 0) + 1
    with open(report) as f:
        for line in f:
            r = json.loads(line)
            k = key(r["outcome"], r["matched_by"], [names.get(x, x) for x in r["our_keys"]],
                    [x.removeprefix("ref:") for x in r["their_keys"]])
            got[k] = got.get(k, 0) + 1
    differ = sum(abs(got.get(k, 0) - want.get(k, 0)) for k in set(got) | set(want))
    return differ == 0, differ


def name_of(detail):
    """A posting's name in expected.jsonl: its EndToEndId, else (a return) its RtrId."""
    return detail_field(detail, E2E_KEY) or detail_field(detail, TX_ID_KEY)


def sqlite_join(db):
    """The SQLite ceiling: the EndToEndIds out of the postings' detail (untimed: no SQL
    function reads the compact form), indexed, joined to the entries' column, every pair
    counted. (Joined directly, SQLite's planner loops over one table per row of the other.)"""
    def names():
        con = sqlite3.connect(db)
        rows = con.execute("SELECT operation || ':' || posting_key, detail FROM postings").fetchall()
        con.close()
        return {k: name_of(v) for k, v in rows}

    def count(table):
        con = sqlite3.connect(db)
        c = con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        con.close()
        return c

    def run():
        con = sqlite3.connect(db)
        e2e = [(pid, detail_field(v, E2E_KEY)) for pid, v in
               con.execute("SELECT posting_id, detail FROM postings WHERE tenant = 'default'")]
        con.execute("CREATE TEMP TABLE o (posting_id INTEGER, e2e TEXT)")
        con.executemany("INSERT INTO o VALUES (?, ?)", e2e)
        t0 = time.perf_counter()
        con.execute("CREATE INDEX temp.o_e2e ON o (e2e)")
        pairs = con.execute("SELECT count(*) FROM statement_entries e JOIN o ON o.e2e = e.end_to_end_id "
                            "WHERE e.tenant = 'default'").fetchone()[0]
        s = time.perf_counter() - t0
        con.close()
        return pairs, s
    return {"names": names, "count": count, "time": run}


NULL = "\\N"  # COPY's text form of NULL


def pg_join(url, work):
    """The PostgreSQL ceiling, the same join: the EndToEndIds read out of the details (untimed)
    into a table, then indexed and joined in one timed psql session."""
    def details():
        out = psql(url, "COPY (SELECT posting_id, operation || ':' || posting_key, encode(detail, 'hex') "
                        "FROM postings) TO STDOUT")
        for line in out.splitlines():
            pid, k, hexed = line.split("\t")
            yield int(pid), k, bytes.fromhex(hexed)

    def names():
        return {k: name_of(v) for _, k, v in details()}

    def count(table):
        return int(psql(url, f"SELECT count(*) FROM {table}").split()[-3])

    def run():
        path = os.path.join(work, "o.tsv")
        with open(path, "w") as f:
            for pid, _, v in details():
                e2e = detail_field(v, E2E_KEY)
                f.write(f"{pid}\t{NULL if e2e is None else e2e}\n")
        psql(url, "DROP TABLE IF EXISTS o; CREATE UNLOGGED TABLE o (posting_id bigint, e2e text)")
        psql(url, stdin=f"\\copy o FROM '{path}'\n")
        t0 = time.perf_counter()
        out = psql(url, stdin="CREATE INDEX o_e2e ON o (e2e); ANALYZE o; SELECT count(*) FROM statement_entries e "
                              "JOIN o ON o.e2e = e.end_to_end_id WHERE e.tenant = 'default';\n")
        s = time.perf_counter() - t0
        psql(url, "DROP TABLE o")
        os.remove(path)
        return int(out.split()[-3]), s
    return {"names": names, "count": count, "time": run}


def pg_url():
    url = os.environ.get("CLEARLEDGER_TEST_PG_URL")
    if not url:
        # pg-start.sh prints the URL alone on stdout (what it does, on stderr).
        url = subprocess.run([os.path.join(ROOT, "scripts", "pg-start.sh")], stdout=subprocess.PIPE, text=True, check=True).stdout.strip()
    return url


def with_db(url, name):
    base, _, query = url.partition("?")
    head = base[: base.index("/", base.index("://") + 3)]
    return f"{head}/{name}" + (f"?{query}" if query else "")


def psql(url, sql=None, stdin=None):
    cmd = ["psql", "-q", "-v", "ON_ERROR_STOP=1", url] + (["-c", sql] if sql else [])
    return subprocess.run(cmd, input=stdin, text=True, check=True, capture_output=True).stdout


def psql_timed(url, sql):
    t0 = time.perf_counter()
    psql(url, stdin=sql)
    return time.perf_counter() - t0


def postgres(fmt, n, mb, f, csv_path, work, admin):
    for name in ("cl_e2e", "cl_e2e_raw"):
        psql(admin, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        psql(admin, f"CREATE DATABASE {name}")
    url = with_db(admin, "cl_e2e")
    first = timed([BIN, "--db", url, "ingest", "-q", f])
    again = timed([BIN, "--db", url, "ingest", "-q", f, "--report", os.path.join(work, "pg-report.csv")])
    again_bare = timed([BIN, "--db", url, "ingest", "-q", f])

    raw = with_db(admin, "cl_e2e_raw")
    table, COLS_ = table_of(fmt)
    schema = "".join(open(p).read() for p in sorted(glob.glob(os.path.join(ROOT, "migrations", "postgres", "*.sql"))))
    psql(raw, stdin=schema +
         "INSERT INTO runs (run_id, tenant, sha256, format, source_name, started_at, status) OVERRIDING SYSTEM VALUE "
         "VALUES (1, 'default', '', 'nacha', 'x', 'x', 'completed');")
    if table == "statement_entries":
        # The statements the entries point to, under the ids of the export.
        at = [c.strip() for c in COLS_.split(",")].index("statement_id")
        with open(csv_path, newline="") as rows:
            ids = sorted({int(r[at]) for r in csv.reader(rows)})
        psql(raw, stdin="".join(
            "INSERT INTO statements (statement_id, tenant, statement_key, format, kind, account, stmt_id, "
            "entries, fingerprint, detail, run_id, recorded_at) OVERRIDING SYSTEM VALUE "
            f"VALUES ({i}, 'default', 'ceiling:{i}', 'camt.053', 'final', 'A', 'S', 0, '', '{{}}', 1, '');\n"
            for i in ids))
    s_copy = psql_timed(raw, f"\\copy {table} ({COLS_}) FROM '{csv_path}' WITH (FORMAT csv)\n")
    # unnest of arrays, 10,000 rows a statement, as a client sends them; the arrays are built
    # server-side from a staging table so that no client encoding is timed.
    psql(raw, f"CREATE TABLE staging AS SELECT row_number() OVER () AS i, {COLS_} FROM {table}")
    psql(raw, "CREATE INDEX ON staging (i)")
    cols = [c.strip() for c in COLS_.split(",")]
    types = {"record_no": "bigint", "amount_minor": "bigint", "run_id": "bigint", "statement_id": "bigint",
             "entry_no": "bigint", "credit": "bigint", "reversal": "bigint"}
    if table == "postings":
        # Compact (migrations/postgres/0013): the detail and the fingerprint.
        types["detail"] = types["fingerprint"] = "bytea"
    unnest = ", ".join(f"a.a{k}::{types.get(c, 'text')}[]" for k, c in enumerate(cols))
    batches = (n + 9999) // 10000
    # Name the aggregated columns a0..aN.
    prep = ("CREATE TABLE batches AS SELECT (i - 1) / 10000 AS b, "
            + ", ".join(f"array_agg({c} ORDER BY i) AS a{k}" for k, c in enumerate(cols))
            + " FROM staging GROUP BY 1;")
    psql(raw, prep)
    load = "".join(
        f"INSERT INTO {table} ({COLS_}) SELECT u.* FROM batches a CROSS JOIN LATERAL unnest({unnest}) AS u "
        f"WHERE a.b = {b} ON CONFLICT DO NOTHING;\n" for b in range(batches))
    s_conflicts = psql_timed(raw, load)
    psql(raw, f"TRUNCATE {table} CASCADE")  # statement_journal refers to statement_entries
    s_fresh = psql_timed(raw, load)

    c_copy, c_unnest, c_conf = n / s_copy, n / s_fresh, n / s_conflicts
    target(f"{fmt} PostgreSQL first ingest / unnest ceiling", (n / first[0]) / c_unnest, 1.0)
    target(f"{fmt} PostgreSQL re-upload with report / all-conflict ceiling", (n / again[0]) / c_conf, 0.7)
    print(f"\n### PostgreSQL, same file\n")
    print(HEADER)
    row("PostgreSQL first ingest (ratio to COPY)", n, mb, *first, c_copy)
    row("PostgreSQL first ingest (ratio to unnest ON CONFLICT)", n, mb, *first, c_unnest)
    row("PostgreSQL re-upload, report written", n, mb, *again, c_conf)
    row("PostgreSQL re-upload, no report", n, mb, *again_bare, c_conf)
    row(f"ceiling: COPY into {table}", n, mb, s_copy, None)
    row("ceiling: INSERT … SELECT FROM unnest(10 k-row arrays) ON CONFLICT DO NOTHING, fresh", n, mb, s_fresh, None)
    row("ceiling: same, every row a conflict", n, mb, s_conflicts, None)
    for name in ("cl_e2e", "cl_e2e_raw"):
        subprocess.run(["psql", "-q", admin, "-c", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"], capture_output=True)


def sizes(fmts, ns, work):
    print("\n### Peak RSS by file size (SQLite)\n")
    print("| format | records | MB | check s | check RSS MB | first ingest s | records/s | ingest RSS MB |")
    print("|---|---|---|---|---|---|---|---|")
    for fmt in fmts:
        rates = {}
        for n in ns:
            f = os.path.join(work, f"size.{fmt}")
            db = os.path.join(work, "size.db")
            fresh(db)
            generate(fmt, n, f)
            mb = os.path.getsize(f) / 1e6
            cs, crss = timed([BIN, "check", "-q", f])
            s, rss = timed([BIN, "--db", "sqlite://" + db, "ingest", "-q", f])
            print(f"| {fmt} | {n:,} | {mb:.0f} | {cs:.2f} | {crss:.0f} | {s:.2f} | {n / s:,.0f} | {rss:.0f} |", flush=True)
            rates[n] = n / s
            if n >= 5_000_000:
                target(f"{fmt} peak RSS at {n:,} records, MB (first ingest)", rss, 250, "≤")
                if 1_000_000 in rates:
                    target(f"{fmt} first-ingest rate at {n:,} / at 1,000,000", rates[n] / rates[1_000_000], 0.8)
            os.remove(f)
            fresh(db)


def reference(work):
    """The reference NACHA file (100 k entries): `check` against the Python peer achkit,
    installed by this script into a virtual environment of its own (PyPI), each timed as a
    whole process, interpreter start included; medians."""
    if not os.path.exists(REFERENCE):
        print(f"\n(reference file absent: {REFERENCE})")
        return
    import gzip
    f = os.path.join(work, "reference.ach")
    with gzip.open(REFERENCE) as src, open(f, "wb") as out:
        shutil.copyfileobj(src, out)
    ours = sorted(timed([BIN, "check", "-q", f])[0] for _ in range(15))[7]
    venv = os.path.join(work, "achkit-venv")
    py = os.path.join(venv, "bin", "python")
    peer = None
    try:
        if not os.path.exists(py):
            subprocess.run([sys.executable, "-m", "venv", venv], check=True, capture_output=True)
            subprocess.run([py, "-m", "pip", "install", "-q", "achkit"], check=True, capture_output=True)
        code = "import sys, achkit; achkit.validate(open(sys.argv[1]).read())"
        peer = sorted(timed([py, "-c", code, f])[0] for _ in range(3))[1]
    except subprocess.CalledProcessError as e:
        print(f"\n(achkit could not be installed: {e}; the ratio is not measured)")
    print("\n### Reference NACHA file (100,199 entries, 9.6 MB): `check` against achkit\n")
    print(f"clearledger check: {ours * 1000:.1f} ms (median of 15)" +
          (f"; achkit validate: {peer * 1000:.0f} ms (median of 3): **{peer / ours:.0f}x**" if peer else ""))
    if peer:
        target("reference file: achkit time / clearledger `check` time", peer / ours, 50)
    os.remove(f)


def summary():
    if not TARGETS:
        return
    print("\n### Targets, this run\n")
    print("| figure | this run | target | |")
    print("|---|---|---|---|")
    for what, figure, goal, sense in TARGETS:
        met = figure >= goal if sense == "≥" else figure <= goal
        fig = f"{figure:,.2f}" if figure < 10 else f"{figure:,.0f}"
        print(f"| {what} | {fig} | {sense} {goal:,} | {'met' if met else '**missed**'} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--entries", type=int, default=1_000_000)
    ap.add_argument("--formats", default="nacha,pacs008,camt053,recon")
    ap.add_argument("--keep", help="work directory to keep (default: a temp dir, removed)")
    ap.add_argument("--postgres", action="store_true", help="also measure PostgreSQL")
    ap.add_argument("--sizes", help="comma-separated record counts for the RSS table")
    a = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "--quiet", "--bin", "clearledger", "--example", "sqlite_ceiling",
                    "--example", "scan_ceiling"], cwd=ROOT, check=True)
    work = a.keep or tempfile.mkdtemp(prefix="clearledger-e2e-")
    os.makedirs(work, exist_ok=True)
    fmts = [x for x in a.formats.split(",") if x]
    try:
        print(f"# clearledger e2e — {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, "
              f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB", flush=True)
        url = pg_url() if a.postgres else None
        for fmt in fmts:
            if fmt == "recon":
                recon(a.entries, work, url)
            else:
                one_format(fmt, a.entries, work, url)
            sys.stdout.flush()
        if a.sizes:
            sizes([f for f in fmts if f != "recon"], [int(x) for x in a.sizes.split(",")], work)
        if "nacha" in fmts:
            reference(work)
        summary()
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
