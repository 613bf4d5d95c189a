package expr

import (
	"strings"
	"time"

	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// TableFunc is a set-returning function called in FROM: generate_series
// and unnest, which psql's \d and \d+ queries read. Its arguments are
// evaluated once per run (they may read an enclosing query's row, as a
// correlated subquery does), and it yields one column of rows.
type TableFunc struct {
	Name   string
	Params []types.Type // the types the arguments are cast to
	Result types.Type   // the type of the one output column
	gen    func(args []types.Value, out *rowOut) error
}

// rowOut collects a TableFunc's rows into vectors of up to TableFuncBatch
// rows, handing each full one to emit and starting a new one (the
// consumer may keep what it is given).
type rowOut struct {
	t    types.Type
	v    *types.Vector
	emit func(*types.Vector) error
}

// full is called after each row; it emits the vector when it is full.
func (o *rowOut) full() error {
	if o.v.Len() < TableFuncBatch {
		return nil
	}
	return o.flush()
}

func (o *rowOut) flush() error {
	if o.v.Len() == 0 {
		return nil
	}
	v := o.v
	o.v = types.NewVector(o.t, TableFuncBatch)
	return o.emit(v)
}

// TableFuncBatch is the most rows a TableFunc puts in one batch.
const TableFuncBatch = 1024

// NewTableFunc resolves a set-returning function by name and argument
// types; a name it does not know is 42883 naming the table function.
func NewTableFunc(name string, argTypes []types.Type, pos int) (*TableFunc, error) {
	f := &TableFunc{Name: name}
	sig := func() string {
		ts := make([]string, len(argTypes))
		for i, t := range argTypes {
			ts[i] = t.String()
		}
		return name + "(" + strings.Join(ts, ", ") + ")"
	}
	bad := func() (*TableFunc, error) {
		return nil, sqlerr.New(sqlerr.CodeUndefinedFunction, "function %s does not exist", sig()).WithPos(pos).
			WithHint("No function matches the given name and argument types.")
	}
	switch name {
	case "generate_series":
		if len(argTypes) < 2 || len(argTypes) > 3 {
			return bad()
		}
		if len(argTypes) == 3 && isTimeSeries(argTypes) {
			// generate_series(start, stop, step interval) over
			// timestamps: a DATE or untyped literal is read as
			// DATETIME64(6), PostgreSQL's timestamptz. A coarser start
			// is widened to microseconds, as PostgreSQL's series is a
			// timestamptz whatever its input's precision: a step finer
			// than the start's precision would otherwise round back to
			// the value it left and never reach the stop.
			t, _ := timestampParam(argTypes[:2]...)
			t.Precision = max(t.Precision, 6)
			f.Result = t
			f.Params = []types.Type{t, t, types.Of(types.Interval)}
			f.gen = generateTimeSeries
			break
		}
		// As PostgreSQL: integer arguments of up to 32 bits give int4,
		// wider ones int8. Untyped literals and NULLs count as narrow.
		t := types.Of(types.Int32)
		for _, a := range argTypes {
			k := a.Kind
			switch {
			case k == types.Unknown:
			case !k.IsInteger() || k.Bits() > 64 || k == types.Uint64:
				return bad()
			case k.Bits() > 32 || k == types.Uint32:
				t = types.Of(types.Int64)
			}
		}
		f.Result = t
		f.Params = make([]types.Type, len(argTypes))
		for i := range f.Params {
			f.Params[i] = t
		}
		f.gen = generateSeries
	case "unnest":
		// Arrays are kept in PostgreSQL's text form ({a,"b c",NULL}), so
		// unnest takes text and yields its elements as text.
		if len(argTypes) != 1 || argTypes[0].Kind != types.String && argTypes[0].Kind != types.Unknown {
			return bad()
		}
		f.Params = []types.Type{types.Of(types.String)}
		f.Result = types.Of(types.String)
		f.gen = unnest
	default:
		return nil, sqlerr.New(sqlerr.CodeUndefinedFunction, "table function %s does not exist", name).WithPos(pos).WithToken(name)
	}
	return f, nil
}

// Generate computes the function's rows for args (already cast to
// Params) and hands them to emit in vectors of Result's type, each of at
// most TableFuncBatch rows and owned by the callee.
func (f *TableFunc) Generate(args []types.Value, emit func(*types.Vector) error) error {
	for _, a := range args {
		if a.IsNull() {
			// A strict function: NULL in, no rows out.
			return nil
		}
	}
	o := &rowOut{t: f.Result, v: types.NewVector(f.Result, TableFuncBatch), emit: emit}
	if err := f.gen(args, o); err != nil {
		return err
	}
	return o.flush()
}

func generateSeries(args []types.Value, o *rowOut) error {
	start, stop, step := args[0].Int64(), args[1].Int64(), int64(1)
	if len(args) == 3 {
		step = args[2].Int64()
	}
	if step == 0 {
		return sqlerr.New(sqlerr.CodeInvalidParameter, "step size cannot equal zero")
	}
	for x := start; step > 0 && x <= stop || step < 0 && x >= stop; {
		o.v.AppendInt64(x)
		if err := o.full(); err != nil {
			return err
		}
		next := x + step
		if (step > 0) != (next > x) {
			break // the next value would overflow: the series ends here
		}
		x = next
	}
	return nil
}

// isTimeSeries reports whether generate_series's three arguments are
// (timestamp, timestamp, interval), each of the timestamps possibly a DATE
// or an untyped literal, the step possibly an untyped literal.
func isTimeSeries(ts []types.Type) bool {
	if k := ts[2].Kind; k != types.Interval && k != types.Unknown {
		return false
	}
	timed := false
	for _, t := range ts[:2] {
		switch t.Kind {
		case types.DateTime64, types.Date:
			timed = true
		case types.Unknown:
		default:
			return false
		}
	}
	// Three untyped literals stay the integer series' (and fail there).
	return timed || ts[2].Kind == types.Interval
}

// generateTimeSeries is generate_series(start, stop, step) over
// timestamps, PostgreSQL's generate_series_timestamp: start, start +
// step, (start + step) + step, … while not past stop, the direction
// given by the sign of step's span ('1 mon -40 days' runs backwards). A
// step of months adds to the previous value, so from Jan 31 by '1 mon'
// the days run 31, 29, 29, …, as there. Where the next value would leave
// DATETIME64's years the series ends, as the integer series ends before
// an overflow (PostgreSQL, with more years, would go on or fail).
func generateTimeSeries(args []types.Value, o *rowOut) error {
	start, stop, step := args[0], args[1], args[2]
	m, d, us := step.Interval()
	zero, _ := types.NewInterval(0, 0, 0)
	sign := types.Compare(step, zero)
	if sign == 0 {
		return sqlerr.New(sqlerr.CodeInvalidParameter, "step size cannot equal zero")
	}
	t := start.Type()
	end := stop.Int64()
	// A step of whole ticks, with no months (and, in UTC, no days, which
	// elsewhere keep the wall clock across a DST change), is one integer
	// add per row; others go through the calendar.
	up, down := tickScale(int(t.Precision))
	ticks, exact := int64(0), m == 0 && (d == 0 || t.Location() == time.UTC)
	if exact {
		total, ok := mulChecked(int64(d), usecsPerDay)
		if ok {
			total, ok = subChecked(total, -us)
		}
		if ok {
			ticks, ok = mulChecked(total, down)
		}
		exact = ok && total%up == 0
		ticks /= up
	}
	for x := start; sign > 0 && x.Int64() <= end || sign < 0 && x.Int64() >= end; {
		o.v.AppendInt64(x.Int64())
		if err := o.full(); err != nil {
			return err
		}
		if exact {
			next, ok := subChecked(x.Int64(), -ticks)
			if !ok {
				break
			}
			x = types.NewDateTime64(t, next)
			if types.CheckTime(x) != nil {
				break
			}
			continue
		}
		next, err := types.AddTimeInterval(x, step, false, t)
		if err != nil {
			break // past DATETIME64's years: the series ends here
		}
		if next.Int64() == x.Int64() {
			// A step that moves nothing at this precision (not one of
			// whole microseconds or coarser, which t always holds).
			return sqlerr.New(sqlerr.CodeInvalidParameter, "step size %s does not move a %s", step, t)
		}
		x = next
	}
	return nil
}

func unnest(args []types.Value, o *rowOut) error {
	elems, nulls, err := parseArrayText(args[0].Str())
	if err != nil {
		return err
	}
	for i, e := range elems {
		if nulls[i] {
			o.v.AppendNull()
		} else {
			o.v.AppendString(e)
		}
		if err := o.full(); err != nil {
			return err
		}
	}
	return nil
}

// AppendArrayElem appends one element to a PostgreSQL array text form being
// built in dst (without its braces), quoting it as PostgreSQL's array_out
// does; null appends NULL. array_agg builds its result with it.
func AppendArrayElem(dst []byte, elem string, null bool) []byte {
	switch {
	case null:
		return append(dst, "NULL"...)
	case elem == "" || strings.ContainsAny(elem, "{},\"\\ \t\n\r\v\f") || strings.EqualFold(elem, "null"):
		dst = append(dst, '"')
		for i := 0; i < len(elem); i++ {
			if elem[i] == '"' || elem[i] == '\\' {
				dst = append(dst, '\\')
			}
			dst = append(dst, elem[i])
		}
		return append(dst, '"')
	}
	return append(dst, elem...)
}
