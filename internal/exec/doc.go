// Package exec runs plans (package plan) as push-based pipelines of
// vectorized operators over types.Batch.
//
// Each plan node becomes a sink that receives batches from its input and
// pushes batches to its parent; a scan drives its pipeline from the storage
// callback (Source.Scan). Buffering operators (aggregate, sort, hash join
// build, distinct, set operations) account the bytes they hold against
// Env.MemLimit and fail with SQLSTATE 53200 instead of exhausting memory.
//
// Invariants:
//  1. A batch pushed to a sink is only valid during the push: sinks that keep
//     rows copy them.
//  2. finish is called exactly once per sink, after its last push; a limit
//     that is satisfied finishes its parent early and stops its source with
//     errStop, which is not an error to the caller.
//  3. Expressions are resolved against their operator's input layout when the
//     operator is built, and evaluated one batch at a time.
package exec
