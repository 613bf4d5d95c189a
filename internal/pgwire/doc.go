// Package pgwire serves a Strata engine over the PostgreSQL frontend/backend
// protocol 3.0, so psql, pgx, psycopg2, node-postgres and lib/pq connect
// unchanged (issue 5). The message codec is pgproto3; this package holds
// the connection state machine: startup (SSL/GSS negotiation, TLS, cancel
// requests, parameters), authentication (trust on loopback while no user
// exists, else SCRAM-SHA-256 against the catalog's verifiers), the simple
// and extended query protocols, COPY, and the mapping of Strata's types to
// PostgreSQL OIDs with their text and binary formats.
//
// Each connection owns one session.Session and runs one message at a time
// on its goroutine; a CancelRequest or Shutdown reaches the running
// statement through its context. docs/pgwire.md lists what is supported and
// the choices made.
package pgwire
