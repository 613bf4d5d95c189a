package logictest

import (
	"context"

	"github.com/strata-db/strata"
)

// The engine under test: every script runs on a strata.DB opened on the
// runner's directory, statement by statement through one Session, with
// values as the Go API's canonical text.
func init() { DefaultOpener = openStrata }

type strataDB struct {
	db *strata.DB
	s  *strata.Session
}

func openStrata(dir string) (DB, error) {
	db, err := strata.Open(dir, strata.Options{})
	if err != nil {
		return nil, err
	}
	return &strataDB{db: db, s: db.NewSession()}, nil
}

func (d *strataDB) Exec(ctx context.Context, sql string) (*Result, error) {
	res, err := d.s.Run(ctx, sql)
	if err != nil {
		return nil, err
	}
	if res.Columns == nil {
		return nil, nil
	}
	out := &Result{Columns: make([]string, len(res.Columns)), Rows: make([][]Value, len(res.Rows))}
	for i, c := range res.Columns {
		out.Columns[i] = c.Name
	}
	for i, r := range res.Rows {
		row := make([]Value, len(r))
		for j, v := range r {
			if v.IsNull() {
				row[j] = Null
			} else {
				row[j] = Text(v.String())
			}
		}
		out.Rows[i] = row
	}
	return out, nil
}

func (d *strataDB) Close() error { return d.db.Close() }
