"""psycopg2 against a Strata or PostgreSQL server (issue 5, item 5).

Run with Debian's /usr/bin/python3, the only interpreter that sees
python3-psycopg2. The connection comes from the standard PG* environment
variables; CLIENT_DIALECT=pg swaps Strata's column types for PostgreSQL's so
the same program is first checked against a real PostgreSQL 15.

What it proves: parameters (psycopg2 interpolates them client side, inside
the BEGIN it sends on its own), COPY FROM STDIN in text and CSV with a
header, COPY (query) TO STDOUT, a bad COPY row failing the whole COPY, and
UINT256 max and a DATETIME64(3) read back exactly.
"""

import datetime
import decimal
import io
import os
import sys

import psycopg2
import psycopg2.errors

UINT256_MAX = decimal.Decimal(
    "115792089237316195423570985008687907853269984665640564039457584007913129639935")
AT = datetime.datetime(2026, 10, 1, 12, 5, 0, 123000, tzinfo=datetime.timezone.utc)

PG = os.environ.get("CLIENT_DIALECT") == "pg"
AMOUNT_TYPE = "numeric" if PG else "UINT256"
AT_TYPE = "timestamptz(3)" if PG else "DATETIME64(3, 'UTC')"


def check(what, got, want):
    if got != want:
        raise AssertionError("%s: got %r, want %r" % (what, got, want))


def main():
    conn = psycopg2.connect("")
    # psycopg2 opens a transaction before the first statement; Strata runs
    # DDL only outside one, so the schema is made in autocommit mode, as
    # applications that run migrations through psycopg2 do.
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("DROP TABLE IF EXISTS py_t")
    cur.execute(
        "CREATE TABLE py_t (id BIGINT NOT NULL, amount %s NULL, at %s NULL, "
        "note TEXT NULL, PRIMARY KEY (id))" % (AMOUNT_TYPE, AT_TYPE))
    conn.autocommit = False

    # Parameters, among them a quote that must arrive intact.
    cur.execute("INSERT INTO py_t (id, amount, at, note) VALUES (%s, %s, %s, %s)",
                (1, UINT256_MAX, AT, "it's max"))
    check("insert rowcount", cur.rowcount, 1)
    conn.commit()

    cur.execute("SELECT amount, at, note FROM py_t WHERE id = %s", (1,))
    amount, at, note = cur.fetchone()
    check("amount", amount, UINT256_MAX)
    check("amount digits", str(amount), str(UINT256_MAX))
    check("at", at, AT)
    check("at utcoffset", at.utcoffset(), datetime.timedelta(0))
    check("note", note, "it's max")
    conn.commit()

    # COPY FROM STDIN, text format: tab-separated, \N for NULL.
    cur.copy_expert(
        "COPY py_t (id, amount, at, note) FROM STDIN",
        io.StringIO("10\t5\t2026-10-01 00:00:00.001+00\tten\n11\t\\N\t\\N\t\\N\n"))
    check("copy text rowcount", cur.rowcount, 2)
    # CSV with a header line.
    cur.copy_expert(
        "COPY py_t (id, amount, at, note) FROM STDIN WITH (FORMAT csv, HEADER true)",
        io.StringIO("id,amount,at,note\n20,%s,2026-10-01 12:05:00.123+00,\"a, b\"\n" % UINT256_MAX))
    check("copy csv rowcount", cur.rowcount, 1)
    conn.commit()

    # A bad row fails the COPY and writes nothing, not even the good rows before it.
    try:
        cur.copy_expert("COPY py_t (id, amount, at, note) FROM STDIN",
                        io.StringIO("30\t1\t\\N\tgood\nnot-a-number\t1\t\\N\tbad\n"))
    except psycopg2.Error as e:
        check("bad copy SQLSTATE class", (e.pgcode or "")[:2], "22")
        conn.rollback()
    else:
        raise AssertionError("a COPY with a bad row succeeded")
    cur.execute("SELECT count(*) FROM py_t WHERE id = 30")
    check("rows of the failed COPY", cur.fetchone()[0], 0)
    conn.commit()

    # COPY (query) TO STDOUT.
    out = io.StringIO()
    cur.copy_expert("COPY (SELECT id, amount, note FROM py_t ORDER BY id) TO STDOUT", out)
    check("copy to stdout", out.getvalue(),
          "1\t%s\tit's max\n10\t5\tten\n11\t\\N\t\\N\n20\t%s\ta, b\n" % (UINT256_MAX, UINT256_MAX))
    conn.commit()

    cur.execute("SELECT at FROM py_t WHERE id = %s", (20,))
    check("at from csv", cur.fetchone()[0], AT)
    conn.commit()

    # A user mistake is an error with a SQLSTATE, and the connection lives on.
    try:
        cur.execute("SELECT nosuchcolumn FROM py_t")
    except psycopg2.errors.UndefinedColumn:
        conn.rollback()
    else:
        raise AssertionError("selecting a missing column did not fail")
    cur.execute("SELECT count(*) FROM py_t")
    check("count", cur.fetchone()[0], 4)
    conn.close()
    print("psycopg2: ok")


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # report any failure as one line and a non-zero exit
        print("psycopg2: %s: %s" % (type(e).__name__, e), file=sys.stderr)
        sys.exit(1)
