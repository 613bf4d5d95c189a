package ast

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

var (
	spanType  = reflect.TypeFor[Span]()
	spansType = reflect.TypeFor[[]Span]() // LitRows.Rows
)

// Equal reports whether two trees are the same ignoring positions: the
// same node types, the same field values, Span fields (and LitRows's row
// spans) skipped. A nil slice and an empty one are equal. A VALUES list
// kept compact (Values.Lits) and the same list as nodes are not equal:
// compare AllRows. It uses reflection and is meant for tests and
// assertions, not for hot paths.
func Equal(a, b Node) bool {
	return equalValue(reflect.ValueOf(a), reflect.ValueOf(b))
}

func equalValue(a, b reflect.Value) bool {
	if a.IsValid() != b.IsValid() {
		return false
	}
	if !a.IsValid() {
		return true
	}
	if a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return equalValue(a.Elem(), b.Elem())
	case reflect.Struct:
		for i := 0; i < a.NumField(); i++ {
			if ft := a.Type().Field(i).Type; ft == spanType || ft == spansType {
				continue
			}
			if !equalValue(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Slice:
		if a.Len() != b.Len() {
			return false
		}
		for i := 0; i < a.Len(); i++ {
			if !equalValue(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.String:
		return a.String() == b.String()
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint8:
		return a.Uint() == b.Uint()
	}
	panic("ast.Equal: unexpected kind " + a.Kind().String())
}

// Dump returns a compact one-line rendering of a tree for tests: each node
// as Type@pos-end{Field: value …} with zero-valued fields left out. Enum
// fields print as numbers, operators as their spelling.
func Dump(n Node) string {
	var b strings.Builder
	dumpValue(&b, reflect.ValueOf(n))
	return b.String()
}

func dumpValue(b *strings.Builder, v reflect.Value) {
	switch v.Kind() {
	case reflect.Invalid:
		b.WriteString("nil")
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			b.WriteString("nil")
			return
		}
		dumpValue(b, v.Elem())
	case reflect.Struct:
		t := v.Type()
		b.WriteString(t.Name())
		first := true
		for i := 0; i < v.NumField(); i++ {
			f := v.Field(i)
			if t.Field(i).Type == spanType {
				s := f.Interface().(Span)
				fmt.Fprintf(b, "@%d-%d", s.Start, s.Stop)
				continue
			}
			if f.IsZero() {
				continue
			}
			if first {
				b.WriteString("{")
				first = false
			} else {
				b.WriteString(" ")
			}
			b.WriteString(t.Field(i).Name + ":")
			dumpValue(b, f)
		}
		if !first {
			b.WriteString("}")
		}
	case reflect.Slice:
		b.WriteString("[")
		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				b.WriteString(" ")
			}
			dumpValue(b, v.Index(i))
		}
		b.WriteString("]")
	case reflect.String:
		b.WriteString(strconv.Quote(v.String()))
	default:
		if s, ok := v.Interface().(fmt.Stringer); ok {
			b.WriteString(s.String())
			return
		}
		fmt.Fprint(b, v.Interface())
	}
}
