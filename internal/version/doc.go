// Package version holds the rules of which version of a row wins: SPEC §3
// (R3.1–R3.6), deletes (R5.4), reads AS OF a commit (R6.1) and the states and
// reasons of versions() (R7.1). It is pure: no I/O, no goroutines, no imports
// of Strata's own packages. Storage and the executor call it and never
// re-implement any of what follows.
//
// # Vocabulary
//
// A key is the opaque, memcmp-ordered encoding of a primary key. A group is an
// attribute group of a table, named here by a small integer (GroupID); each
// group has an Ordering: its VALID BY columns, then its REVISION BY columns,
// each value arriving as one memcmp-ordered []byte. A Version is one write of
// one group for one key; a Delete ends every group of one key. A write's
// position is (commit, seq): the commit that made it and its place inside that
// commit. Positions of one key are totally ordered; versions of different
// groups made by the same row share a position, but no delete shares a
// position with a version of its key.
//
// # The rules (cited in code as "rule N")
//
//  1. Order (R3.1). Versions of one key and group compare by their ordering
//     values column by column (valid..., then revision..., bytes.Compare on
//     each), then by commit, then by seq. A group with no ordering columns is
//     ordered by (commit, seq) alone, so its newest write is always greatest.
//
//  2. Epochs (R5.4). A delete at position p ends every version of its key at
//     a position before p: versions of earlier commits, and versions earlier in
//     the same commit. A version after p starts the key afresh. The deletes of
//     a key cut its versions into epochs; an epoch is resolved as if nothing
//     before it had ever been written. The winner of a (key, group) at commit
//     n (R6.1) is the greatest version under rule 1 among the counted versions
//     with commit ≤ n in the epoch begun by the key's last delete with commit
//     ≤ n. None means the group is empty at n. A key exists at n when at least
//     one of its groups has a winner at n; a write of only the key columns
//     (R4.4) is an ordinary version of the default group with no columns.
//
//  3. Repeats (R3.4). In a group with at least one ordering column, a version
//     whose ordering values and encoded values both equal those of a version
//     that still counts (values of two different Version.Layouts compare by
//     Ordering.Same, the caller's judgement of equal values across an ALTER) (same key, group and epoch, earlier position, itself
//     not a repeat; winner or not) adds nothing: it is dropped, as if it had
//     never been written. Within an epoch this keeps exactly the first arrival
//     of every distinct (ordering values, values) pair; it holds inside one
//     statement too. A group ordered by commit alone keeps every write.
//
//  4. Upsert (R3.6). An upsert table retains only the winner, so there
//     "counts" means "is the winner": a write is kept exactly when it is
//     greater than the winner (or the group is empty), and otherwise accepted
//     and discarded, repeats of the winner included (Decide). Versions that an
//     upsert table has already discarded cannot be repeated: an exact repeat
//     of a version that was superseded only by commit order (a tie on every
//     ordering value) wins again in an upsert table, where a versioned table
//     drops it. Both accept the same writes (R1.4).
//
//  5. States (R7.1), as they stand at commit n. A version committed after n is
//     invisible at n. Otherwise it is current (the winner at n); superseded
//     (it was the winner, and a greater version arrived at or before n;
//     SupersededBy is that version's commit); late (on arrival a greater
//     version already counted in its epoch; SupersededBy is the commit of the
//     winner it lost to; it never wins, not even after a delete, which does
//     not revive anything); or deleted (it was the winner when a delete at or
//     before n ended its epoch; SupersededBy is the delete's commit). A state
//     once superseded or late never becomes deleted: a delete changes the state
//     of only the one version that was winning when it came. The Reason names
//     the deciding column and both values ("lost to commit 3: idx 150 < 200",
//     "superseded by commit 5: rev 1 < 2"), or says the tie was broken by
//     commit or by position, or "deleted at commit 4"; it is empty for current.
//
//  6. Intervals. Commits arrive in order, and within an epoch the winner only
//     ever grows. So each version wins over at most one half-open interval of
//     commits [WonAt, EndedAt): WonAt is its own commit, EndedAt the commit of
//     the version that superseded it or of the delete that ended its epoch,
//     Forever while it still wins. A late or dropped version has WonAt =
//     EndedAt = NoCommit. The interval and the state at the newest commit are
//     all AS OF n needs (StateAt, WinnerAt): a range check, no replay. The
//     interval may be empty (WonAt = EndedAt) when a greater version or a
//     delete came later in the same commit; such a version was never visible
//     as the winner and reads as superseded or deleted at its own commit.
//
//  7. Merging. Resolve sorts its input, so it is independent of the order and
//     grouping in which versions reach it. Runs resolved separately can be
//     merged by resolving their retained versions together with every delete,
//     provided each run covers a contiguous range of commits of its keys (as
//     flushed and merged parts do): a repeat dropped inside such a run stays a
//     repeat in any union of runs, because no delete of another run can fall
//     between it and the version it repeats.
//
// # Invariants
//
//   - I1. Within an epoch, a late version is strictly less than the winner it lost
//     to on some ordering column: it arrived after that winner, so a tie on
//     every ordering value would have been broken in its favour.
//   - I2. The winner intervals of one (key, group) are disjoint, and their union
//     is exactly the set of commits at which the group is non-empty.
//   - I3. Register's counted versions are kept sorted under rule 1, so the winner
//     is the last one and the versions a new write could repeat sit directly
//     before its insertion point.
//
// Register is the incremental form (rule 6) for one (key, group) fed in commit
// order; Resolve is the batch form over any input; Decide is the upsert form
// (rule 4). Tests check that the three, and a naive reading of rules 1–5, agree.
package version
