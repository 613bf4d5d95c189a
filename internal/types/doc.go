// Package types holds Strata's column types (SPEC §2), their values, their
// canonical text form, and the typed vectors (column batches with validity
// bitmaps) that the executor and storage pass around.
//
// Invariants:
//  1. types does no I/O and imports nothing of Strata's.
//  2. Every value of a type has exactly one canonical text form, the one the
//     conformance scripts print.
//  3. Integer arithmetic never wraps silently: overflow is an error.
package types
