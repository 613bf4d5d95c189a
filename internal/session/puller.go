package session

import (
	"iter"

	"github.com/strata-db/strata/internal/types"
)

// Puller runs statements one after another inside one coroutine
// (iter.Pull) and hands out each one's batches as its reader asks for
// them: the executor pushes batches, and a reader that pulls them (a
// cursor, a row iterator) needs the statement suspended between two. One
// coroutine serves every statement: a fresh one grows its stack anew each
// time, which cost a point query about 4 µs, as much as the query.
//
// A statement's batches are read with Next until it reports the end; Stop
// ends the statement early without failing it (ErrStop). A Puller is used
// by one goroutine at a time and runs one statement at a time.
type Puller struct {
	next func() (*types.Batch, bool)
	stop func()
	// job is the statement the coroutine starts when resumed after the
	// end of the previous one.
	job func(yield func(*types.Batch) bool)
	// stopping asks the running statement to stop.
	stopping bool
	// cols are the running statement's columns, once announced.
	cols []Column
	// dead is set once the coroutine has ended.
	dead bool
}

// endBatch marks the end of a statement's batches in the coroutine's
// stream.
var endBatch = &types.Batch{}

// NewPuller returns a Puller; its coroutine starts with the first
// statement.
func NewPuller() *Puller {
	p := &Puller{}
	p.next, p.stop = iter.Pull(func(yield func(*types.Batch) bool) {
		for {
			job := p.job
			p.job = nil
			if job == nil {
				return
			}
			job(yield)
			job = nil
			if !yield(endBatch) {
				return
			}
		}
	})
	return p
}

// pullerSink is the RowSink of a statement run by a Puller: each batch,
// and a nil one when the columns are known, is yielded to the reader.
type pullerSink struct {
	p     *Puller
	yield func(*types.Batch) bool
}

func (s *pullerSink) Start(cols []Column) error {
	s.p.cols = cols
	return s.give(nil)
}

func (s *pullerSink) Batch(b *types.Batch) error { return s.give(b) }

func (s *pullerSink) give(b *types.Batch) error {
	if !s.yield(b) || s.p.stopping {
		return ErrStop
	}
	return nil
}

// Start runs run on the coroutine with a sink for the statement it runs
// (it passes the sink to ExecuteTo and records the outcome itself) and
// returns once the statement has announced its columns (streaming true:
// read its batches with Next) or has ended without streaming (an error,
// or a result returned whole). ok is false if the coroutine had ended
// (Close, or a bug): then run did not run and the Puller is of no more
// use.
func (p *Puller) Start(run func(sink RowSink)) (streaming, ok bool) {
	if p.dead {
		return false, false
	}
	p.cols = nil
	p.job = func(yield func(*types.Batch) bool) { run(&pullerSink{p: p, yield: yield}) }
	b, ok := p.next()
	if !ok {
		p.dead = true
		return false, false
	}
	return b != endBatch, true
}

// Columns returns the running statement's columns, once announced.
func (p *Puller) Columns() []Column { return p.cols }

// Next returns the running statement's next batch, valid until the next
// call; false once the statement has ended.
func (p *Puller) Next() (*types.Batch, bool) {
	if p.dead {
		return nil, false
	}
	b, ok := p.next()
	if !ok {
		p.dead = true
		return nil, false
	}
	if b == endBatch {
		return nil, false
	}
	return b, true
}

// Stop ends the running statement where it is suspended: it stops there
// (ErrStop, which does not fail it) and unwinds.
func (p *Puller) Stop() {
	p.stopping = true
	for {
		if _, more := p.Next(); !more {
			break
		}
	}
	p.stopping = false
}

// Close ends the coroutine, stopping a statement suspended in it. It may
// be called from another goroutine than the reader's, never at the same
// time as the reader's calls (a cleanup of the reader's owner, say).
func (p *Puller) Close() {
	p.stop()
	p.dead = true
}
