// Package plan binds a parsed query to the catalog and turns it into a tree
// of plan nodes that package exec runs.
//
// The boundary with the session layer is frozen: Source, Virtual, Column,
// Env, Build, Plan.Columns and EvalConst (env.go). exec.Run executes a Plan.
//
// Binding gives every column a plan-wide integer id (ColRef.ID). Nodes name
// their output columns by id and expressions refer to ids, so the rewrite
// rules (rules.go, one ordered list) move predicates between nodes without
// renumbering; exec maps ids to batch positions when it builds operators.
//
// Invariants:
//  1. A column id is produced by exactly one node of a statement; every
//     expression refers only to ids its node's inputs produce (or to Outer
//     slots of a correlated subquery).
//  2. AS OF operands are evaluated once, at plan time (R6.3); a relation's own
//     AS OF wins over the query-block trailing form, which reaches
//     subqueries, derived tables and CTE references (R6.2).
//  3. Constant folding never raises an error: an expression whose folding
//     fails is left to run, so a CASE arm that no row reaches never fails.
//  4. A filter pushed into a scan is still checked on every row the scan
//     returns (R10.2).
//  5. SELECT * never shows hidden columns; _commit (R7.2) is added to a scan
//     only when a query names it.
package plan
