package expr

import (
	"strings"

	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// PGSetter is the part of a PGEnv that set_config() needs: the session's
// SET. A PGEnv that cannot change settings (a DEFAULT, a test) does not
// implement it, and set_config then fails with a clear error.
type PGSetter interface {
	// SetSetting runs SET name = value, or SET LOCAL when local; it returns
	// the errors SET returns (an unknown or read-only setting, a bad
	// value).
	SetSetting(name, value string, local bool) error
}

// setConfig binds set_config(name, value, is_local): SET [LOCAL] as a
// function, returning the new value. As in PostgreSQL it is not strict: a
// NULL value sets the empty string and a NULL is_local means false; a NULL
// name is an error.
func setConfig(f *Func, sig Signature, arity bool, env PGEnv, pos int) (*Func, Signature, bool, error) {
	if !arity {
		return nil, sig, true, sqlerr.New(sqlerr.CodeUndefinedFunction, "function set_config takes (text, text, boolean)").WithPos(pos).
			WithHint("No function matches the given name and argument types.")
	}
	setter, _ := env.(PGSetter)
	if setter == nil {
		return nil, sig, true, sqlerr.NotSupported(pos, "set_config() needs a session")
	}
	f.strict = false
	f.effect = true
	f.T = sig.Result
	f.fn = func(a []types.Value, _ types.Type) (types.Value, error) {
		if a[0].IsNull() {
			return types.Value{}, sqlerr.New("22004", "SET requires parameter name")
		}
		value := ""
		if !a[1].IsNull() {
			value = a[1].Str()
		}
		local := !a[2].IsNull() && a[2].Bool()
		name := strings.ToLower(a[0].Str())
		if err := setter.SetSetting(name, value, local); err != nil {
			return types.Value{}, err
		}
		if v, ok := env.Setting(name); ok && !local {
			return types.NewString(v), nil
		}
		return types.NewString(value), nil
	}
	return f, sig, true, nil
}
