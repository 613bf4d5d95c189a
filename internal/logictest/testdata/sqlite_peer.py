"""A peer engine for the logictest runner: SQLite, through Python's sqlite3.

Used only by the tests of internal/logictest (peer_test.go), to check the
runner against the engine SQLite's corpus was written with. It reads one JSON
object per line on stdin, {"sql": "..."}, runs the statement on the database
file named by argv[1], and answers one JSON object per line on stdout:
{"rows": [[value, ...], ...]} or {"error": "message"}. A value is null for
SQL NULL and otherwise text: integers in decimal, reals in Python's shortest
round-trip form, blobs as their bytes read as Latin-1.
"""
import json
import sqlite3
import sys


def text(v):
    if v is None:
        return None
    if isinstance(v, bytes):
        return v.decode("latin-1")
    if isinstance(v, float):
        return repr(v)
    return str(v)


def main():
    db = sqlite3.connect(sys.argv[1], isolation_level=None)
    for line in sys.stdin:
        req = json.loads(line)
        try:
            cur = db.execute(req["sql"])
            rows = [[text(v) for v in row] for row in cur.fetchall()]
            out = {"rows": rows}
        except Exception as e:  # every failure is an answer, never a crash
            out = {"error": "%s: %s" % (type(e).__name__, e)}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
