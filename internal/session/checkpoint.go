package session

import "context"

// checkpoint runs CHECKPOINT: every memtable flushed to a part and the
// merges the compaction policy has due run to the end, what the background
// merger would reach once the database went idle (storage MergeNow). It
// takes no commit and changes no answer (R5.1); reads and commits of other
// sessions go on meanwhile. PostgreSQL's CHECKPOINT writes its dirty
// buffers out so that recovery starts later in the log; this one also
// leaves the parts merged, so that what follows reads them as a settled
// table. The statement's context ends it between two merges (a cancel, a
// statement timeout).
func (s *Session) checkpoint(ctx context.Context) (*Result, error) {
	if err := s.eng.MergeNow(ctx); err != nil {
		return nil, err
	}
	return &Result{Tag: "CHECKPOINT"}, nil
}
