// Package types holds Strata's column types (SPEC §2), their values, their
// canonical text form, and the typed vectors (column batches with validity
// bitmaps) that the executor and storage pass around.
//
// # Values
//
// A Value is a small struct, not an interface: the type, a null flag, and
// one field per physical class (Class). Integers up to 64 bits, DATE (days
// since 1970-01-01), DATETIME64 (ticks of 10^-p seconds since the epoch,
// UTC), floats and BOOL share one 64-bit word; INT128, INT256, UINT128,
// UINT256 and DECIMAL's unscaled integer sit inline in a uint256.Int, the
// signed ones in two's complement. A FLOAT32 is stored as the float64 of its
// float32. DECIMAL(p,s) is the integer u with value u × 10^-s and |u| < 10^p;
// since 10^76 < 2^255 every DECIMAL fits a signed 256-bit integer.
//
// Work that crosses kinds — comparing an INT64 with a UINT256, casting,
// checking a range — goes through an unexported sign-magnitude form whose
// magnitude is a uint256.Int: it holds every integer of every kind, INT256's
// minimum (magnitude 2^255) and UINT256's maximum alike, so nothing on
// those paths is ever routed through float64.
//
// # Literals and text
//
// ParseNumber types a numeric literal as the scanner gives it (the smallest
// of INT64, UINT64, INT128, UINT128, INT256, UINT256; an exact DECIMAL for
// digits with a point; FLOAT64 with an exponent). A minus sign is Neg,
// whose type for an unsigned operand is the signed kind twice as wide;
// Narrow gives a folded constant its smallest literal type back.
// ParseText reads a string literal, COPY field or wire text into a column
// type with exact range and calendar checks. Errors a user sees are
// *RangeError (fits no value of the type: 300 for UINT8), *ParseError (is
// not a value at all: 'yesterday' for a DATETIME64) and *CastError; the
// caller that knows the column names it with WithColumn.
//
// # Widening
//
// Common(a, b) is the type both operands of an operator, both sides of a
// comparison, or the arms of a UNION or CASE are widened to. It is the
// smallest type that holds every value of both:
//
//   - integers of one signedness: the wider; an unsigned kind of b bits with
//     a signed kind of c bits: the signed kind of max(2b, c) bits
//     (UINT8+INT8 → INT16, UINT64+INT64 → INT128);
//   - an integer with a DECIMAL: a DECIMAL with the integer's digits (19 for
//     INT64, 20 for UINT64, 39 for 128 bits) and the DECIMAL's scale;
//     two DECIMALs: the larger integer part and the larger scale;
//   - any integer or DECIMAL with a float, or FLOAT32 with FLOAT64: FLOAT64;
//   - DATE with DATETIME64: the DATETIME64; two DATETIME64s: the larger
//     precision, the left zone;
//   - an untyped NULL (Unknown) with x: x.
//
// Where no type holds both — UINT256 with a signed kind narrower than 256
// bits, INT256 with UINT256, INT256 with a DECIMAL, or a DECIMAL past 76
// digits — Common returns the nearest type (UINT256, INT256, DECIMAL(76, s)),
// and a value that does not fit it is a RangeError when it is converted at
// run time: UINT256 - 1 stays UINT256, and UINT256 + (-1) is an error rather
// than a silent change of type. ResultType refines Common for DECIMAL
// arithmetic (see its table: + and - keep the larger scale, * adds scales,
// / gives scale max(s1, s2, 6) rounded half away from zero).
//
// # Invariants
//
//  1. types does no I/O and imports nothing of Strata's.
//  2. Every value of a type has exactly one canonical text form, the one
//     the conformance scripts print, and ParseText of that text gives the
//     value back (floats included: shortest round-trip digits). The one
//     exception is a zoned DATETIME64 in the hour a DST change repeats:
//     its text carries no offset, so it reads back as the first of the two.
//     For this DATE and DATETIME64 values hold years 1 to 9999 only (the
//     text's four-digit years): everything that makes one checks it
//     (CheckTime, timerange.go).
//  3. Integer and DECIMAL arithmetic never wraps silently: overflow is a
//     *RangeError, and no integer is converted through float64.
//  4. Each kind has one physical class; a Value keeps its payload only in
//     that class's field and a Vector only in that class's slice.
//  5. Compare is a total order per type: NULL after every value (and equal
//     to NULL), NaN after every number and equal to itself, -0 equal to 0;
//     numbers of different kinds compare exactly.
//  6. Equal values hash alike: within one type always, and across numeric
//     kinds for integral values. Callers hash values of their Common type.
//  7. A Vector's row i is at index i of its backing slice, NULL rows
//     included; a nil validity bitmap means no NULLs; typed appends
//     allocate only when a slice grows, never per value.
//  8. For values of one type, bytes.Compare of AppendKey encodings agrees
//     with Compare (NULLs last here too), and every encoding is
//     self-delimiting, so concatenated keys sort column by column.
//  9. No input panics: bad text, bad bytes and impossible casts are errors.
//     The one panic is Vector.Append of a value of another physical class,
//     a bug in the caller.
package types
