package session

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// defaultSettings are the session settings and their initial values: those
// PostgreSQL clients read or send on connect (psql, pgx, psycopg, JDBC and BI
// tools), so that SET and SHOW of them work as the clients expect. Only
// statement_timeout changes what Strata does; the others are recorded and
// shown (values print in their column's own time zone whatever TimeZone
// says, R2.4).
var defaultSettings = map[string]string{
	"application_name":                    "",
	"client_encoding":                     "UTF8",
	"client_min_messages":                 "notice",
	"datestyle":                           "ISO, MDY",
	"default_transaction_isolation":       "serializable",
	"default_transaction_read_only":       "off",
	"default_transaction_deferrable":      "off",
	"extra_float_digits":                  "1",
	"integer_datetimes":                   "on",
	"intervalstyle":                       "postgres",
	"is_superuser":                        "on",
	"lock_timeout":                        "0",
	"search_path":                         "public",
	"server_encoding":                     "UTF8",
	"server_version":                      "15.0",
	"server_version_num":                  "150000",
	"session_authorization":               "strata",
	"standard_conforming_strings":         "on",
	"statement_timeout":                   "0",
	"timezone":                            "UTC",
	"transaction_isolation":               "serializable",
	"transaction_read_only":               "off",
	"transaction_deferrable":              "off",
	"idle_in_transaction_session_timeout": "0",
}

// readOnly settings can be shown but not set.
var readOnly = map[string]bool{
	"integer_datetimes": true, "is_superuser": true, "server_encoding": true, "server_version": true,
	"server_version_num": true, "session_authorization": true, "strata.backend_pid": true,
}

type settings struct {
	values map[string]string
}

func newSettings() settings {
	v := make(map[string]string, len(defaultSettings))
	for k, x := range defaultSettings {
		v[k] = x
	}
	return settings{values: v}
}

func (s settings) get(name string) (string, bool) {
	v, ok := s.values[strings.ToLower(name)]
	return v, ok
}

// timeout returns statement_timeout; 0 means none. Every statement asks,
// so the default's text is answered without parsing it.
func (s settings) timeout() time.Duration {
	v := s.values["statement_timeout"]
	if v == "0" {
		return 0
	}
	d, _ := parseTimeout(v)
	return d
}

// timeoutUnits are the units parseTimeout accepts after the number; none
// means milliseconds, as in PostgreSQL.
var timeoutUnits = map[string]time.Duration{"": time.Millisecond, "us": time.Microsecond, "ms": time.Millisecond,
	"s": time.Second, "min": time.Minute, "h": time.Hour, "d": 24 * time.Hour}

// parseTimeout reads a PostgreSQL duration setting: a bare number is
// milliseconds; units us, ms, s, min, h, d are accepted.
func parseTimeout(v string) (time.Duration, bool) {
	v = strings.TrimSpace(strings.ToLower(v))
	if v == "" {
		return 0, false
	}
	i := 0
	for i < len(v) && (v[i] >= '0' && v[i] <= '9' || v[i] == '.') {
		i++
	}
	n, err := strconv.ParseFloat(v[:i], 64)
	if err != nil || n < 0 {
		return 0, false
	}
	u, ok := timeoutUnits[strings.TrimSpace(v[i:])]
	if !ok {
		return 0, false
	}
	return time.Duration(n * float64(u)), true
}

// known reports whether name is a setting SET may change: a listed one, or
// a custom one with a dot in its name (PostgreSQL's extension namespace).
func known(name string) bool {
	_, ok := defaultSettings[name]
	return ok || strings.Contains(name, ".")
}

func (s *Session) set(n *ast.SetStmt) (*Result, error) {
	name := strings.ToLower(n.Name)
	if !known(name) {
		return nil, sqlerr.New(sqlerr.CodeUndefinedObject, "unrecognized configuration parameter %q", n.Name).WithPos(n.Pos())
	}
	if readOnly[name] {
		return nil, sqlerr.New("55P02", "parameter %q cannot be changed", n.Name).WithPos(n.Pos())
	}
	value, ok := defaultSettings[name]
	if !n.Default {
		parts := make([]string, 0, len(n.Values))
		for _, e := range n.Values {
			t, err := settingText(e)
			if err != nil {
				return nil, err
			}
			parts = append(parts, t)
		}
		value = strings.Join(parts, ", ")
	} else if !ok {
		value = ""
	}
	if !n.Local && !n.Default && len(n.Values) == 1 {
		if res, ok, err := s.setTxSetting(name, value, n.Pos()); ok {
			return res, err
		}
	}
	if name == "statement_timeout" || name == "lock_timeout" || name == "idle_in_transaction_session_timeout" {
		if _, ok := parseTimeout(value); !ok {
			return nil, sqlerr.New(sqlerr.CodeInvalidParameter, "invalid value for parameter %q: %q", n.Name, value).
				WithPos(n.Pos()).WithHint("give milliseconds, or a number with one of the units us, ms, s, min, h, d")
		}
	}
	var notices []Notice
	if name == "timezone" && !n.Default {
		var serr *sqlerr.Error
		if value, notices, serr = timeZoneSetting(value); serr != nil {
			return nil, serr.WithPos(n.Pos())
		}
	}
	if n.Local {
		if s.tx == nil {
			// PostgreSQL warns that SET LOCAL outside a transaction has
			// no effect, and succeeds.
			return &Result{Tag: "SET", Notices: []Notice{noTransaction("SET LOCAL can only be used in transaction blocks")}}, nil
		}
		if s.tx.local == nil {
			s.tx.local = map[string]string{}
		}
		if _, saved := s.tx.local[name]; !saved {
			s.tx.local[name] = s.settings.values[name]
		}
	}
	s.settings.values[name] = value
	return &Result{Tag: "SET", Notices: notices}, nil
}

// utcZones are the zone database's names of UTC itself, which change
// nothing a DATETIME64 shows (a zone merely at offset 0 today, such as
// Europe/London, is not one).
var utcZones = map[string]bool{"UTC": true, "Etc/UTC": true, "UCT": true, "Etc/UCT": true, "GMT": true,
	"Etc/GMT": true, "GMT0": true, "Etc/GMT0": true, "Etc/GMT+0": true, "Etc/GMT-0": true, "GMT+0": true,
	"GMT-0": true, "Greenwich": true, "Etc/Greenwich": true, "Universal": true, "Etc/Universal": true,
	"Zulu": true, "Etc/Zulu": true}

// timeZoneSetting checks a TimeZone value: a zone name Go's database holds
// (in any case, as DATETIME64 takes it), UTC, LOCAL (the server's, which
// is UTC here), or an offset in hours (SET TIME ZONE -5). A zone other
// than UTC is recorded (SHOW, the ParameterStatus drivers read) but
// changes no answer: a DATETIME64 is read, computed and shown in its
// column's zone, UTC when it names none (R2.4), where PostgreSQL's
// timestamptz would follow the session's zone. The statement says so
// with a warning rather than accept it silently.
func timeZoneSetting(v string) (string, []Notice, *sqlerr.Error) {
	if strings.EqualFold(v, "local") || strings.EqualFold(v, "utc") || strings.EqualFold(v, "default") {
		return "UTC", nil, nil
	}
	zone, ok := types.ZoneName(v)
	cast := "Cast to DATETIME64(6, '" + zone + "') to work in this one."
	if h, err := strconv.ParseFloat(v, 64); err == nil && h >= -15 && h <= 15 {
		zone, ok, cast = v, true, "Cast to DATETIME64(6, 'zone name') to work in another zone."
		if h == 0 {
			return zone, nil, nil
		}
	}
	if !ok {
		return "", nil, sqlerr.New(sqlerr.CodeInvalidParameter, "invalid value for parameter \"TimeZone\": %q", v).
			WithHint("Name a zone of the IANA database, such as UTC or America/New_York.")
	}
	if utcZones[zone] {
		return zone, nil, nil
	}
	return zone, []Notice{{Severity: "WARNING", Code: "01000",
		Message: fmt.Sprintf("TimeZone is set to %s, but DATETIME64 values keep their column's zone", zone),
		Hint:    "A DATETIME64 is read, computed (date_trunc, extract, ::DATE) and shown in its column's zone, UTC when it names none. " + cast}}, nil
}

// setConfig is set_config(name, value, is_local): SET [LOCAL] name =
// 'value', with SET's checks and errors.
func (s *Session) setConfig(name, value string, local bool) error {
	_, err := s.set(&ast.SetStmt{Span: ast.Span{Start: -1, Stop: -1}, Local: local, Name: name,
		Values: []ast.Expr{&ast.StringLit{Value: value}}})
	return err
}

// settingText renders one value of SET as the setting's text.
func settingText(e ast.Expr) (string, error) {
	switch v := e.(type) {
	case *ast.StringLit:
		return v.Value, nil
	case *ast.NumberLit:
		return v.Text, nil
	case *ast.ColumnRef:
		return v.Name, nil
	case *ast.BoolLit:
		if v.Value {
			return "on", nil
		}
		return "off", nil
	case *ast.UnaryExpr:
		if num, ok := v.X.(*ast.NumberLit); ok {
			return "-" + num.Text, nil
		}
	case *ast.IntervalLit:
		return v.Value, nil
	}
	return "", sqlerr.New(sqlerr.CodeSyntax, "SET takes a literal, a word or DEFAULT").WithPos(e.Pos())
}

func (s *Session) show(n *ast.ShowStmt) (*Result, error) {
	str := types.Of(types.String)
	if n.All {
		names := make([]string, 0, len(s.settings.values))
		for k := range s.settings.values {
			names = append(names, k)
		}
		slices.Sort(names)
		res := &Result{Tag: "SHOW", Columns: []Column{{"name", str}, {"setting", str}}}
		for _, k := range names {
			res.Rows = append(res.Rows, []types.Value{types.NewString(k), types.NewString(s.settings.values[k])})
		}
		res.RowsAffected = int64(len(res.Rows))
		return res, nil
	}
	v, ok := s.settings.get(n.Name)
	if !ok {
		return nil, sqlerr.New(sqlerr.CodeUndefinedObject, "unrecognized configuration parameter %q", n.Name).WithPos(n.Pos())
	}
	return &Result{Tag: "SHOW", Columns: []Column{{strings.ToLower(n.Name), str}},
		Rows: [][]types.Value{{types.NewString(v)}}, RowsAffected: 1}, nil
}

func (s *Session) reset(n *ast.ResetStmt) (*Result, error) {
	if n.All {
		for k := range s.settings.values {
			if !readOnly[k] {
				s.settings.values[k] = defaultSettings[k]
			}
		}
		return &Result{Tag: "RESET"}, nil
	}
	name := strings.ToLower(n.Name)
	if !known(name) {
		return nil, sqlerr.New(sqlerr.CodeUndefinedObject, "unrecognized configuration parameter %q", n.Name).WithPos(n.Pos())
	}
	if readOnly[name] {
		return nil, sqlerr.New("55P02", "parameter %q cannot be changed", n.Name).WithPos(n.Pos())
	}
	if d, ok := defaultSettings[name]; ok {
		s.settings.values[name] = d
	} else {
		delete(s.settings.values, name)
	}
	return &Result{Tag: "RESET"}, nil
}
