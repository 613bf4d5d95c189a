package pgwire

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/session"
	"github.com/strata-db/strata/internal/sql/parser"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// The extended query protocol: Parse makes a prepared statement, Bind a
// portal of it with parameter values and result formats, Describe tells
// their parameter and result types, Execute runs a portal (row by row up
// to a limit). Each handler returns the statement text its error refers
// to and the error; dispatch then skips to Sync.

func protoErr(format string, args ...any) error {
	return sqlerr.New("08P01", format, args...)
}

func (c *conn) parse(m *pgproto3.Parse) (string, error) {
	ps := &prepared{sql: m.Query}
	ranges := parser.Split(m.Query)
	switch len(ranges) {
	case 0:
	case 1:
		stmt, err := parser.Parse(m.Query)
		if err != nil {
			return m.Query, err
		}
		ps.stmt = stmt
	default:
		return m.Query, sqlerr.New(sqlerr.CodeSyntax, "cannot insert multiple commands into a prepared statement").WithPos(ranges[1].Start)
	}
	n := 0
	if ps.stmt != nil {
		n = session.ParamCount(ps.stmt)
	}
	if len(m.ParameterOIDs) > n {
		n = len(m.ParameterOIDs)
	}
	ps.paramOIDs = make([]uint32, n)
	copy(ps.paramOIDs, m.ParameterOIDs)
	if ps.stmt != nil && n > 0 {
		// What the client left unspecified, the context may say.
		for i, t := range c.sess.ParamTypes(ps.stmt, n) {
			if ps.paramOIDs[i] == 0 && t.Kind != types.Unknown {
				ps.paramOIDs[i] = wireType(t).oid
			}
		}
	}
	if m.Name != "" {
		if _, dup := c.stmts[m.Name]; dup {
			return "", sqlerr.New("42P05", "prepared statement %q already exists", m.Name)
		}
	}
	c.stmts[m.Name] = ps
	c.be.Send(&pgproto3.ParseComplete{})
	return "", nil
}

func (c *conn) bind(m *pgproto3.Bind) (string, error) {
	ps, ok := c.stmts[m.PreparedStatement]
	if !ok {
		return "", sqlerr.New("26000", "prepared statement %q does not exist", m.PreparedStatement)
	}
	if len(m.Parameters) != len(ps.paramOIDs) {
		return "", protoErr("bind message supplies %d parameters, but prepared statement %q requires %d",
			len(m.Parameters), m.PreparedStatement, len(ps.paramOIDs))
	}
	nf := len(m.ParameterFormatCodes)
	if nf > 1 && nf != len(m.Parameters) {
		return "", protoErr("bind message has %d parameter formats but %d parameters", nf, len(m.Parameters))
	}
	params := make([]types.Value, len(m.Parameters))
	for i, b := range m.Parameters {
		f := formatOf(m.ParameterFormatCodes, i)
		v, err := decodeParam(ps.paramOIDs[i], f, b)
		if err != nil {
			code := "22P03" // invalid_binary_representation
			if se, ok := sqlerr.As(err); ok {
				code, err = se.Code, errors.New(se.Message)
			}
			return "", sqlerr.New(code, "parameter $%d: %v", i+1, err)
		}
		params[i] = v
	}
	for _, f := range m.ResultFormatCodes {
		if f != 0 && f != 1 {
			return "", protoErr("unsupported format code: %d", f)
		}
	}
	if m.DestinationPortal != "" {
		if _, dup := c.portals[m.DestinationPortal]; dup {
			return "", sqlerr.New("42P03", "cursor %q already exists", m.DestinationPortal)
		}
	} else if p := c.portals[""]; p != nil && p == c.suspended {
		c.stopCursor() // the unnamed portal is replaced
	}
	c.portals[m.DestinationPortal] = &portal{ps: ps, params: params, formats: append([]int16(nil), m.ResultFormatCodes...)}
	c.be.Send(&pgproto3.BindComplete{})
	return "", nil
}

func (c *conn) describe(m *pgproto3.Describe) (string, error) {
	switch m.ObjectType {
	case 'S':
		ps, ok := c.stmts[m.Name]
		if !ok {
			return "", sqlerr.New("26000", "prepared statement %q does not exist", m.Name)
		}
		c.be.Send(&pgproto3.ParameterDescription{ParameterOIDs: ps.paramOIDs})
		params := make([]types.Value, len(ps.paramOIDs))
		for i := range params {
			params[i] = types.Null(types.Of(types.Unknown))
		}
		cols, desc, err := c.sendDescription(ps, params, nil)
		ps.described, ps.desc = cols, desc
		return ps.sql, err
	case 'P':
		p, ok := c.portals[m.Name]
		if !ok {
			return "", sqlerr.New("34000", "portal %q does not exist", m.Name)
		}
		if c.sess.TxStatus() == 'E' && (p.cursor || p.ran && p.res.Columns != nil || p.ps.described != nil) {
			// As PostgreSQL, which needs its catalog to describe rows and
			// reads none in a failed transaction.
			return "", sqlerr.New("25P02", "current transaction is aborted, commands ignored until end of transaction block")
		}
		if p.cursor {
			c.sendColumns(c.cursorColumns(p), p.formats)
			return "", nil
		}
		if p.ran {
			c.sendColumns(p.res.Columns, p.formats)
			return "", nil
		}
		if p.ps.described != nil {
			c.sendColumns(p.ps.described, p.formats)
			return "", nil
		}
		if ps := p.ps; ps.portalDescribed && c.sess.TxStatus() != 'E' &&
			ps.portalDesc.schema == c.sess.Schema() && sameTypes(ps.portalDesc.params, p.params) {
			c.sendColumns(ps.portalCols, p.formats)
			p.described, p.desc = ps.portalCols, description{params: p.params, schema: ps.portalDesc.schema}
			return "", nil
		}
		cols, desc, err := c.sendDescription(p.ps, p.params, p.formats)
		p.described, p.desc = cols, desc
		if err == nil && desc.schema != nil {
			p.ps.portalCols, p.ps.portalDesc, p.ps.portalDescribed = cols, desc, true
		}
		return p.ps.sql, err
	}
	return "", protoErr("invalid DESCRIBE message subtype %d", m.ObjectType)
}

// sameTypes reports whether a and b are values of the same types, one
// for one: what describing a statement depends on beside the catalog.
func sameTypes(a, b []types.Value) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Type() != b[i].Type() {
			return false
		}
	}
	return true
}

// description records how the columns a Describe announced were found:
// the parameters it described with and the catalog it saw. Execute
// describes the statement again with the same parameters when the catalog
// has changed since (DDL), and only then, so an unchanged schema costs a
// pointer comparison.
type description struct {
	params []types.Value
	schema *catalog.Catalog
}

// sendDescription sends the RowDescription (or NoData) of ps and returns
// the columns it described and how.
func (c *conn) sendDescription(ps *prepared, params []types.Value, formats []int16) ([]session.Column, description, error) {
	if ps.stmt == nil {
		c.be.Send(&pgproto3.NoData{})
		return nil, description{}, nil
	}
	// The catalog is read before describing: DDL committed meanwhile then
	// makes Execute check again rather than go unnoticed.
	desc := description{params: params, schema: c.sess.Schema()}
	ctx, done := c.statementContext()
	defer done()
	cols, err := c.sess.Describe(ctx, ps.stmt, ps.sql, params)
	if err != nil {
		return nil, description{}, err
	}
	c.sendColumns(cols, formats)
	return cols, desc, nil
}

// errResultChanged is PostgreSQL's error for a prepared statement whose
// result columns changed since they were described (its plan cache's
// fixed_result check). Drivers know it: pgx forgets its cached statement
// descriptions on it, so the next call prepares the statement anew.
func errResultChanged() error {
	return sqlerr.New("0A000", "cached plan must not change result type")
}

// checkShape fails the run of portal p if the columns its statement would
// return now differ (count, names or wire types) from those announced to
// the client, which decodes rows by the announcement: after ALTER TABLE
// changed a table the statement reads with *, say. It runs before the
// statement, so nothing is written and the connection stays usable.
func (c *conn) checkShape(p *portal) error {
	cols, desc := p.ps.described, &p.ps.desc
	if p.described != nil {
		cols, desc = p.described, &p.desc
	}
	if cols == nil || desc.schema == nil {
		return nil
	}
	schema := c.sess.Schema()
	if schema == desc.schema {
		return nil
	}
	ctx, done := c.statementContext()
	now, err := c.sess.Describe(ctx, p.ps.stmt, p.ps.sql, desc.params)
	done()
	if err != nil {
		return err
	}
	if !sameShape(cols, now) {
		// As every error in PostgreSQL, it fails an open transaction;
		// the description is kept, so the statement fails again until
		// the client prepares it anew, as PostgreSQL's does.
		c.sess.FailTransaction()
		return errResultChanged()
	}
	desc.schema = schema
	return nil
}

// sameShape reports whether a and b announce the same result to a
// client: as many columns, with the same names and wire types.
func sameShape(a, b []session.Column) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || wireType(a[i].Type).oid != wireType(b[i].Type).oid {
			return false
		}
	}
	return true
}

// conform casts the columns of res whose wire type differs from what the
// statement's Describe announced (a column typed by a parameter alone,
// described before the value was known) to the announced type, so the
// client decodes what it was told.
func conform(res *session.Result, described []session.Column) error {
	casts := conformCasts(res.Columns, described)
	if casts == nil {
		return nil
	}
	for _, row := range res.Rows {
		if err := conformRow(row, res.Columns, described, casts); err != nil {
			return err
		}
	}
	conformColumns(res.Columns, casts, described)
	return nil
}

// conformCasts says which of cols are cast to the type described
// announced for them; nil when none is.
func conformCasts(cols, described []session.Column) []bool {
	if described == nil || len(described) != len(cols) {
		return nil
	}
	var casts []bool
	for j, col := range cols {
		if wireType(col.Type).oid != wireType(described[j].Type).oid {
			if casts == nil {
				casts = make([]bool, len(cols))
			}
			casts[j] = true
		}
	}
	return casts
}

// conformRow casts the values of row that casts marks.
func conformRow(row []types.Value, cols, described []session.Column, casts []bool) error {
	for j, cast := range casts {
		if !cast || row[j].IsNull() {
			continue
		}
		want := described[j].Type
		if want.Kind == types.Unknown {
			// Described from a parameter of no known type: announced as
			// text (wireType), so sent as text.
			want = types.Of(types.String)
		}
		v, err := types.Cast(row[j], want)
		if err != nil {
			return sqlerr.New("42804", "column %q was described as %s but is %s: %v", cols[j].Name, want, cols[j].Type, err)
		}
		row[j] = v
	}
	return nil
}

// conformColumns gives the columns casts marks their described type.
func conformColumns(cols []session.Column, casts []bool, described []session.Column) {
	for j, cast := range casts {
		if cast {
			cols[j].Type = described[j].Type
		}
	}
}

func (c *conn) sendColumns(cols []session.Column, formats []int16) {
	if cols == nil {
		c.be.Send(&pgproto3.NoData{})
		return
	}
	c.be.Send(rowDescription(cols, formats))
}

func (c *conn) execute(m *pgproto3.Execute) (string, error) {
	p, ok := c.portals[m.Portal]
	if !ok {
		return "", sqlerr.New("34000", "portal %q does not exist", m.Portal)
	}
	if p.ps.stmt == nil {
		c.be.Send(&pgproto3.EmptyQueryResponse{})
		return "", nil
	}
	if c.suspended != nil && c.suspended != p {
		c.settleCursor(p.ps.stmt)
	}
	if (p.cursor || p.ran) && c.sess.TxStatus() == 'E' {
		// The statement ran inside a transaction since failed; as any
		// statement now, its portal answers no more (PostgreSQL's 25P02).
		return "", sqlerr.New("25P02", "current transaction is aborted, commands ignored until end of transaction block")
	}
	if p.cursor {
		return c.fetch(p, m.MaxRows)
	}
	if p.ran {
		return c.sendPart(p, m.MaxRows)
	}
	if err := c.checkShape(p); err != nil {
		return p.ps.sql, err
	}
	if m.MaxRows > 0 {
		// Rows fetched a part at a time: a cursor (cursor.go).
		return c.openCursor(p, m.MaxRows)
	}
	// Every row is fetched at once: they go out as they are made.
	stream := c.newRowStream(p.formats, false, p.ps.described)
	res, err := c.runTo(p.ps.stmt, p.ps.sql, p.params, stream)
	if err == nil && !stream.started {
		err = conform(res, p.ps.described)
	}
	if err == nil {
		conformColumns(res.Columns, stream.casts, p.ps.described)
		p.res, p.ran, p.next, p.done = res, true, len(res.Rows), true
		err = c.sendResult(res, stream)
	}
	if err != nil {
		c.finishRows()
		return p.ps.sql, err
	}
	return "", nil
}

// sendPart sends the next max rows (0: all) of portal p's result held in
// memory, then PortalSuspended if it sent max rows, else its completion,
// or the error its statement failed with after those rows (a drained
// cursor).
func (c *conn) sendPart(p *portal, max uint32) (string, error) {
	res := p.res
	if res.Columns == nil {
		c.complete(res.Tag)
		return "", nil
	}
	if p.next >= len(res.Rows) && p.err == nil && (p.next > 0 || p.done) {
		// A finished portal runs no more: PostgreSQL answers with an
		// empty completion of the same command.
		c.complete(partTag(res.Tag, 0))
		return "", nil
	}
	end := len(res.Rows)
	if max > 0 && uint64(p.next)+uint64(max) < uint64(end) {
		end = p.next + int(max)
	}
	if err := c.sendRows(res, p.next, end, p.formats); err != nil {
		return p.ps.sql, err
	}
	sent := end - p.next
	p.next = end
	if max > 0 && sent == int(max) {
		// The limit is reached: suspended, whether rows are left or not,
		// as PostgreSQL's.
		c.be.Send(&pgproto3.PortalSuspended{})
		return "", nil
	}
	p.done = true
	if err := p.err; err != nil {
		p.err = nil
		return p.ps.sql, err
	}
	tag := res.Tag
	if len(tag) > 7 && tag[:7] == "SELECT " && sent != len(res.Rows) {
		// A portal run in parts reports the rows of its last part; a
		// whole result's tag already counts them all.
		tag = fmt.Sprintf("SELECT %d", sent)
	}
	c.complete(tag)
	return "", nil
}
