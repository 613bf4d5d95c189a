// Package expr evaluates bound scalar expressions over column vectors.
//
// The binder (package plan) turns syntax into a tree of the node types here:
// every node already carries its result type, every operand has already been
// cast to the type its operator works in, and every column reference names a
// column by a plan-wide id. Before execution the plan resolves each id to the
// index of that column in the batch the node will see (Resolve); from then on
// Eval is a function of a batch.
//
// Eval works one batch at a time: a node evaluates its children into vectors
// and then runs one typed loop over them, chosen by a switch on the operand
// types once per batch. The per-row work is a slice index and an arithmetic
// or comparison instruction; rows are never boxed into interfaces and the hot
// paths (64-bit integers, floats, strings, booleans) allocate nothing once the
// scratch vectors of a Ctx have grown to the batch size. Other types (the
// 128- and 256-bit integers, DECIMAL, dates across precisions) go through
// types.Arith and types.Compare per row, which are exact and allocation-free
// for fixed-size values.
//
// Invariants:
//  1. SQL NULL semantics: an operator with a NULL operand is NULL, except AND
//     (FALSE wins), OR (TRUE wins), IS [NOT] NULL, IS [NOT] DISTINCT FROM,
//     coalesce and CASE, which are defined on NULL.
//  2. Arithmetic never wraps: overflow is an error naming the type
//     ("UINT256 overflow"), a zero divisor is "division by zero" (22012).
//  3. A vector returned by Eval is valid until the Ctx is Reset; callers that
//     keep values copy them. A column reference returns the input vector
//     itself, so Eval never modifies what it returns.
//  4. CASE evaluates a branch only over the rows that reach it, so a branch
//     that cannot run raises no error (PostgreSQL semantics).
//  5. A subquery is run through the Ctx's Runner: once when uncorrelated, once
//     per distinct tuple of outer values when correlated (results are cached).
package expr
