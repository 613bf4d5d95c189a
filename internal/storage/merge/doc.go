// Package merge decides when the parts of a shard are merged (the policy)
// and merges them (the algorithms, one per table mode). The engine calls
// Choose from its background goroutine, opens the chosen parts, calls Merge,
// and swaps inputs for outputs in one manifest edit. Nothing here keeps
// state between calls or touches a file other than through part.Write and
// the readers it is given; Merge writes its output parts on one goroutine
// of its own and returns only after that goroutine is done.
//
// # The policy
//
// A shard's parts form runs: the parts one flush or one merge wrote. A
// merge's outputs (a current and a history run, or a run cut into parts of
// PartRows rows at key boundaries) all draw on the commit range the merge
// covered, and the ranges of different flushes and merges are disjoint, so
// grouping the parts whose commit ranges overlap recovers the runs, and runs
// are totally ordered by commit (Runs). The rows of one output may hold only
// part of that range (a current part and a history part can hold disjoint
// commits), so the engine records every output in the manifest with the
// merge's whole input range (storage/mergejob.go); Runs relies on it. A read of one key opens at most one
// part per run (for a versioned table's current read, only the current
// parts and the deltas), which is why the read budget counts runs.
//
// Choose serves three goals, in this order:
//
//   - Bounded write amplification (size tiering, ClickHouse's and
//     Cassandra's choice). A merge waits until FanIn adjacent runs of
//     similar size (within SizeRatio) are below target_part_bytes, and then
//     merges the cheapest such window. A byte is rewritten about once per
//     FanIn-fold growth of its run, and runs that reached the target leave
//     tiering: they are rewritten only to honour the read budget.
//   - Bounded read amplification. When a shard holds more runs than
//     max_parts_per_shard, Choose merges the window of adjacent runs that
//     removes runs at the fewest bytes rewritten per run removed. Every
//     merge removes at least one run, so repeated calls reach the budget.
//   - AS OF keeps skipping data. Merges take whole runs, adjacent in commit
//     order, never a run from the middle of someone else's range: the
//     output covers one contiguous commit range, parts keep tight
//     MinCommit/MaxCommit bounds, and a read AS OF n still skips every part
//     whose MinCommit is above n. It is also what makes merging exact
//     (version rule 7).
//
// What is traded away: tiering keeps up to FanIn-1 small runs per tier
// unmerged, so a read may open a few more parts than leveled compaction
// would; in exchange ingest-heavy shards rewrite each byte O(log n) times
// instead of O(n). A versioned shard's history is rewritten by every merge
// that includes the oldest run, because repeat detection (R3.4) must see
// every counted version of an epoch; the history run is therefore the
// largest run and leaves tiering soonest, and only the read budget merges
// into it.
//
// # Merging by mode
//
// The inputs are merged block by block into one stream sorted by (key,
// group, commit, seq), the order every part has. What happens to it depends
// on the table's mode and on Options.Oldest (the inputs hold the shard's
// oldest data):
//
//   - Append: rows are copied through unchanged, one KindAppend run.
//   - Upsert: each (key, group) is folded with version.Decide in commit
//     order, a delete emptying it: the winner as of the inputs' newest
//     commit survives. The key's last delete marker is kept while older
//     parts may hold versions it ends; with Oldest it is dropped together
//     with everything it ended. Oldest gives a KindCurrent run of winners.
//     Without it the output is a KindDelta run that keeps, besides the
//     winner, the versions that won since the winner's ordering values were
//     reached: an older part's winner with those same values must meet each
//     of them, since Decide drops a write only when it repeats the winner
//     of its moment (version rule 4), and keeping the winner alone would
//     give a different current row's commit (R7.2).
//   - Versioned with Oldest: each (key, group) and its key's deletes are fed
//     to one reused version.Register in commit order. The winner goes to a
//     KindCurrent run with State Current and its interval; every other
//     retained version, with its State, WonAt, EndedAt and SupersededBy,
//     and every delete marker go to a KindHistory run. Repeats are dropped.
//   - Versioned without Oldest: older runs may hold versions that decide
//     states here, so nothing is resolved; the versions (repeats dropped,
//     which rule 7 allows) and all delete markers go to one KindDelta run.
//
// Part conventions the engine's flush must follow: delete markers have
// Group 0, no ordering values and NULL columns; Order holds AppendOrder of
// the group's ordering values.
//
// # Invariants
//
//  1. A merge's inputs are whole runs adjacent in commit order, so its
//     outputs cover one contiguous commit range of their keys.
//  2. Merging never changes a result: resolving a shard's rows before and
//     after any sequence of merges Choose could produce gives the same
//     winners at every commit and the same versions() rows (tested with
//     rapid against version.Resolve).
//  3. Delete markers sort in group 0, so when any other group of a key is
//     decided, every delete of that key has been seen.
//  4. Memory is bounded by one block per input, the versions of the largest
//     (key, group), and two parts of PartRows rows per output run (one
//     filling, one being written by the single background writer), never
//     by part size; the row loop allocates only while reused buffers grow.
//  5. Outputs are written with part.Write, durable before Merge returns; on
//     error every output already written is removed.
package merge
