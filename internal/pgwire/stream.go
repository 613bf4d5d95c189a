package pgwire

import (
	"encoding/binary"

	"github.com/strata-db/strata/internal/session"
	"github.com/strata-db/strata/internal/types"
)

// A query's rows go to the client as the executor produces them
// (session.RowSink): each batch is encoded into c.rows, which is handed
// to the socket every rowChunk bytes, so the server holds one batch and
// one chunk of a result, never the whole of it, and no row is built as
// values it keeps. What is left in c.rows when the statement ends goes
// out with its completion (finishRows).

// rowStream is the sink of a query whose rows go out as DataRows: a
// simple Query's, or an Execute's that fetches every row.
type rowStream struct {
	c         *conn
	formats   []int16
	binaryAny bool
	// describe is set for a simple Query, whose RowDescription is sent
	// when the columns are known; Execute's were sent by Describe.
	describe bool
	// described is what Describe announced (nil: nothing); columns whose
	// wire type differs are cast to it, as conform does.
	described []session.Column
	cols      []session.Column
	casts     []bool // per column: cast to described's type
	started   bool
	row       []types.Value
}

// newRowStream readies the connection's row stream for one statement.
func (c *conn) newRowStream(formats []int16, describe bool, described []session.Column) *rowStream {
	s := &c.stream
	*s = rowStream{c: c, formats: formats, describe: describe, described: described, row: s.row[:0]}
	for _, f := range formats {
		s.binaryAny = s.binaryAny || f == 1
	}
	return s
}

func (s *rowStream) Start(cols []session.Column) error {
	s.started, s.cols = true, cols
	s.casts = conformCasts(cols, s.described)
	if s.describe {
		s.c.be.Send(rowDescription(cols, s.formats))
	}
	return nil
}

func (s *rowStream) Batch(b *types.Batch) error { return s.rows(b, 0, b.Rows) }

// rows sends rows [from, to) of b.
func (s *rowStream) rows(b *types.Batch, from, to int) error {
	buf := s.c.rows
	var err error
	for i := from; i < to; i++ {
		s.row = b.RowView(s.row[:0], i)
		if s.casts != nil {
			if err = conformRow(s.row, s.cols, s.described, s.casts); err != nil {
				break
			}
		}
		if buf, err = appendDataRow(buf, s.row, s.formats, s.binaryAny); err != nil {
			break
		}
		if buf, err = s.c.spill(buf); err != nil {
			break
		}
	}
	s.c.rows = buf
	return err
}

// spill writes the encoded messages in buf once they reach rowChunk bytes
// and returns buf emptied, or as it was while shorter.
func (c *conn) spill(buf []byte) ([]byte, error) {
	if len(buf) < rowChunk {
		return buf, nil
	}
	return buf[:0], c.writeRows(buf)
}

// finishRows queues the encoded rows not yet written, ahead of what the
// statement sends next (its completion or its error).
func (c *conn) finishRows() {
	if len(c.rows) > 0 {
		c.be.Send((*rawMessages)(&c.rows))
	}
	c.rows = c.rows[:0]
	// The row buffer's values may alias the statement's last batch: an
	// idle connection should not keep that alive.
	clear(c.stream.row[:cap(c.stream.row)])
}

// appendDataRow appends row as a DataRow message in formats (binaryAny:
// some column is binary). On an error buf comes back as it was given.
func appendDataRow(buf []byte, row []types.Value, formats []int16, binaryAny bool) ([]byte, error) {
	start, n := len(buf), len(row)
	buf = append(buf, 'D', 0, 0, 0, 0, byte(n>>8), byte(n))
	for j, v := range row {
		if v.IsNull() {
			buf = append(buf, 0xff, 0xff, 0xff, 0xff)
			continue
		}
		at := len(buf)
		buf = append(buf, 0, 0, 0, 0)
		if binaryAny && formatOf(formats, j) == 1 {
			var err error
			if buf, err = appendBinary(buf, v); err != nil {
				return buf[:start], err
			}
		} else {
			buf = appendText(buf, v)
		}
		binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
	}
	binary.BigEndian.PutUint32(buf[start+1:], uint32(len(buf)-start-1))
	return buf, nil
}

// sendRows sends rows [from, to) of a result held whole (a portal fetched
// in parts, SHOW, RETURNING) as DataRows, written every rowChunk bytes.
func (c *conn) sendRows(res *session.Result, from, to int, formats []int16) error {
	binaryAny := false
	for _, f := range formats {
		binaryAny = binaryAny || f == 1
	}
	buf := c.rows
	var err error
	for _, row := range res.Rows[from:to] {
		if buf, err = appendDataRow(buf, row, formats, binaryAny); err != nil {
			break
		}
		if buf, err = c.spill(buf); err != nil {
			break
		}
	}
	c.rows = buf
	c.finishRows()
	return err
}

// sendResult sends what a statement run with stream returned: its
// RowDescription (simple Query only) and rows when it returned them whole
// rather than through stream, then its completion.
func (c *conn) sendResult(res *session.Result, stream *rowStream) error {
	if !stream.started && res.Columns != nil {
		if stream.describe {
			c.be.Send(rowDescription(res.Columns, stream.formats))
		}
		if err := c.sendRows(res, 0, len(res.Rows), stream.formats); err != nil {
			return err
		}
	}
	c.finishRows()
	c.complete(res.Tag)
	return nil
}

// complete sends CommandComplete with tag.
func (c *conn) complete(tag string) {
	c.done.CommandTag = append(c.done.CommandTag[:0], tag...)
	c.be.Send(&c.done)
}
