// node-postgres (npm pg) against a Strata or PostgreSQL server (issue 5,
// item 5). The connection comes from the standard PG* environment
// variables; CLIENT_DIALECT=pg swaps Strata's column types for PostgreSQL's
// so the same program is first checked against a real PostgreSQL 15.
//
// What it proves: a named prepared statement (Parse once, Bind/Execute
// several times) with parameters sent untyped, as node-pg sends them, and
// UINT256 max and a DATETIME64(3) read back exactly.
'use strict';

const { Client } = require('pg');

const UINT256_MAX =
  '115792089237316195423570985008687907853269984665640564039457584007913129639935';
const AT = '2026-10-01T12:05:00.123Z';

const pg = process.env.CLIENT_DIALECT === 'pg';
const amountType = pg ? 'numeric' : 'UINT256';
const atType = pg ? 'timestamptz(3)' : "DATETIME64(3, 'UTC')";

function check(what, got, want) {
  if (got !== want) {
    throw new Error(`${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
  }
}

async function main() {
  const client = new Client();
  await client.connect();
  try {
    await client.query('DROP TABLE IF EXISTS node_t');
    await client.query(
      `CREATE TABLE node_t (id BIGINT NOT NULL, amount ${amountType} NULL, at ${atType} NULL, ` +
        'note TEXT NULL, PRIMARY KEY (id))');

    const insert = {
      name: 'node_insert',
      text: 'INSERT INTO node_t (id, amount, at, note) VALUES ($1, $2, $3, $4)',
    };
    const rows = [
      [1, UINT256_MAX, AT, 'max'],
      [2, '0', '2026-10-01T00:00:00.000Z', 'zero'],
      [3, null, null, null],
    ];
    for (const values of rows) {
      const r = await client.query({ ...insert, values });
      check(`insert ${values[0]} rowCount`, r.rowCount, 1);
    }

    const byID = {
      name: 'node_by_id',
      text: 'SELECT id, amount, at, note FROM node_t WHERE id = $1',
    };
    let r = await client.query({ ...byID, values: [1] });
    check('rows for id 1', r.rows.length, 1);
    // numeric arrives as a string: every digit, no float rounding.
    check('amount', r.rows[0].amount, UINT256_MAX);
    check('at', r.rows[0].at.toISOString(), AT);
    check('note', r.rows[0].note, 'max');

    r = await client.query({ ...byID, values: [3] });
    check('null amount', r.rows[0].amount, null);
    check('null at', r.rows[0].at, null);

    r = await client.query({ ...byID, values: [42] });
    check('rows for id 42', r.rows.length, 0);

    r = await client.query('SELECT count(*) AS n FROM node_t');
    check('count', String(r.rows[0].n), '3');

    // A user mistake is an error with a SQLSTATE, and the connection lives on.
    let failed = null;
    try {
      await client.query('SELECT nosuchcolumn FROM node_t');
    } catch (e) {
      failed = e;
    }
    if (failed === null) throw new Error('selecting a missing column did not fail');
    check('undefined column SQLSTATE', failed.code, '42703');
    r = await client.query({ ...byID, values: [2] });
    check('amount after error', r.rows[0].amount, '0');

    console.log('node-postgres: ok');
  } finally {
    await client.end();
  }
}

main().catch((e) => {
  console.error('node-postgres:', e && e.stack ? e.stack : e);
  process.exit(1);
});
