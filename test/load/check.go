package load

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
)

// version is one accepted upsert as versions(acct) reports it.
type version struct {
	commit, v, idx int64
}

// gkey is one key of one group.
type gkey struct {
	id    int64
	group int
}

// Check verifies a Strata run (see the package comment): every
// acknowledged upsert is one version at one commit; each connection's
// commits rise; and replaying the versions in commit order gives the
// current table and every AS OF read. It returns the first problems found.
func Check(ctx context.Context, url string, r *Result) error {
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer c.Close(ctx)

	rows, err := c.Query(ctx, "SELECT id, _group, _commit, bal, bal_idx, cnt, cnt_idx FROM versions(acct)")
	if err != nil {
		return fmt.Errorf("versions(acct): %w", err)
	}
	byValue := map[int64]int64{} // written value → its commit
	hist := map[gkey][]version{}
	for rows.Next() {
		var id, commit int64
		var group string
		var bal, balIdx, cnt, cIdx *int64
		if err := rows.Scan(&id, &group, &commit, &bal, &balIdx, &cnt, &cIdx); err != nil {
			return err
		}
		k, v, idx := gkey{id: id, group: 1}, bal, balIdx
		if group == "g2" {
			k.group, v, idx = 2, cnt, cIdx
		}
		if v == nil || idx == nil {
			return fmt.Errorf("versions(acct): key %d group %s at commit %d has a NULL value or index", id, group, commit)
		}
		if _, dup := byValue[*v]; dup {
			return fmt.Errorf("versions(acct): value %d appears twice", *v)
		}
		byValue[*v] = commit
		hist[k] = append(hist[k], version{commit: commit, v: *v, idx: *idx})
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("versions(acct): %w", err)
	}

	var errs []error
	report := func(format string, args ...any) {
		if len(errs) < 20 {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	writes := 0
	for n, w := range r.workers {
		prev := int64(0)
		for _, wr := range w.writes {
			writes++
			commit, ok := byValue[wr.v]
			if !ok {
				report("connection %d: acknowledged upsert of value %d (key %d, group %d) is not in versions(acct)", n, wr.v, wr.id, wr.group)
				continue
			}
			// One connection's statements commit in the order it sent them.
			if commit <= prev {
				report("connection %d: value %d committed at %d, not after its previous upsert's %d", n, wr.v, commit, prev)
			}
			prev = commit
		}
		for i := 1; i < len(w.commits); i++ {
			if w.commits[i] < w.commits[i-1] {
				report("connection %d: last_commit() went back from %d to %d", n, w.commits[i-1], w.commits[i])
			}
		}
	}
	if writes != len(byValue) {
		report("%d upserts acknowledged, versions(acct) holds %d", writes, len(byValue))
	}
	for _, vs := range hist {
		slices.SortFunc(vs, func(a, b version) int { return cmp.Compare(a.commit, b.commit) })
	}

	// The replay: the winner of a key and group at commit n is the version
	// with the greatest (index, commit) among those at or before n (R3.1).
	winner := func(k gkey, n int64) (version, bool) {
		var best version
		found := false
		for _, v := range hist[k] {
			if v.commit > n {
				break
			}
			if !found || v.idx > best.idx || v.idx == best.idx && v.commit > best.commit {
				best, found = v, true
			}
		}
		return best, found
	}
	model := func(id, n int64) row {
		var out row
		out.bal, out.balIdx, out.cnt, out.cIdx = -1, -1, -1, -1
		if v, ok := winner(gkey{id, 1}, n); ok {
			out.found, out.bal, out.balIdx = true, v.v, v.idx
		}
		if v, ok := winner(gkey{id, 2}, n); ok {
			out.found, out.cnt, out.cIdx = true, v.v, v.idx
		}
		if !out.found {
			return row{} // no row, as a read that found none records it
		}
		return out
	}
	asOf := 0
	for n, w := range r.workers {
		for _, a := range w.asOf {
			asOf++
			if want := model(a.id, a.commit); a.got != want {
				report("connection %d: key %d AS OF COMMIT %d read %+v, the replay says %+v", n, a.id, a.commit, a.got, want)
			}
		}
		// A current read saw some commit's state: its values must be
		// versions that exist, with their own index.
		for _, rd := range w.reads {
			if !rd.got.found {
				continue
			}
			for g, pair := range [2][2]int64{{rd.got.bal, rd.got.balIdx}, {rd.got.cnt, rd.got.cIdx}} {
				if pair[0] < 0 {
					continue
				}
				ok := false
				for _, v := range hist[gkey{rd.id, g + 1}] {
					if v.v == pair[0] && v.idx == pair[1] {
						ok = true
						break
					}
				}
				if !ok {
					report("connection %d: key %d read value %d index %d in group g%d, which no upsert wrote", n, rd.id, pair[0], pair[1], g+1)
				}
			}
		}
	}

	var last int64
	if err := c.QueryRow(ctx, "SELECT max(commit) FROM system.commits").Scan(&last); err != nil {
		return fmt.Errorf("newest commit: %w", err)
	}
	cur, err := c.Query(ctx, "SELECT id, bal, bal_idx, cnt, cnt_idx FROM acct")
	if err != nil {
		return fmt.Errorf("final state: %w", err)
	}
	seen := map[int64]bool{}
	for cur.Next() {
		var id int64
		var bal, balIdx, cnt, cIdx *int64
		if err := cur.Scan(&id, &bal, &balIdx, &cnt, &cIdx); err != nil {
			return err
		}
		seen[id] = true
		got := row{found: true, bal: orNull(bal), balIdx: orNull(balIdx), cnt: orNull(cnt), cIdx: orNull(cIdx)}
		if want := model(id, last); got != want {
			report("final state of key %d is %+v, the replay in commit order says %+v", id, got, want)
		}
	}
	if err := cur.Err(); err != nil {
		return fmt.Errorf("final state: %w", err)
	}
	for k := range hist {
		if !seen[k.id] {
			report("key %d has versions but no current row", k.id)
		}
	}
	if asOf == 0 {
		report("the run made no AS OF read: nothing of AS OF was checked")
	}
	return errors.Join(errs...)
}
