package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/strata-db/strata"
)

// engine runs one statement; *strata.Session satisfies it through
// sessionEngine, and tests drive the shell with a fake.
type engine interface {
	run(ctx context.Context, sql string) (*result, *stmtError)
}

// sessionEngine adapts a strata session to engine.
type sessionEngine struct{ s *strata.Session }

// run executes sql, returning its result or its error: what a user caused
// with its position, any other failure (a cancelled statement, I/O) as a
// message alone.
func (e sessionEngine) run(ctx context.Context, sql string) (*result, *stmtError) {
	res, err := e.s.Run(ctx, sql)
	if err != nil {
		var se *strata.Error
		if errors.As(err, &se) {
			return nil, &stmtError{message: se.Message, detail: se.Detail, hint: se.Hint, line: se.Line, column: se.Column}
		}
		return nil, &stmtError{message: err.Error()}
	}
	r := &result{tag: res.Tag}
	for _, n := range res.Notices {
		msg := n.Severity + ": " + n.Message + "\n"
		if n.Hint != "" {
			msg += "HINT: " + n.Hint + "\n"
		}
		r.notices = append(r.notices, msg)
	}
	if len(res.Columns) > 0 {
		r.columns = make([]column, len(res.Columns))
		for j, c := range res.Columns {
			r.columns[j] = column{name: c.Name, typ: c.Type}
		}
		cells := make([]cell, len(res.Rows)*len(res.Columns))
		r.rows = make([][]cell, len(res.Rows))
		for i, row := range res.Rows {
			out := cells[i*len(res.Columns) : (i+1)*len(res.Columns) : (i+1)*len(res.Columns)]
			for j, v := range row {
				if v.IsNull() {
					out[j] = cell{null: true}
				} else {
					out[j] = cell{text: v.String()}
				}
			}
			r.rows[i] = out
		}
	}
	return r, nil
}

// shell is the state of one `strata sql` run: where output goes, the format,
// and whether \timing is on. Both the interactive loop and the -c/-f runner
// use it, so a statement prints the same way in either.
type shell struct {
	eng    engine
	out    *bufio.Writer
	errOut io.Writer
	format format
	timing bool
	failed int // statements that failed
}

func newShell(eng engine, out, errOut io.Writer, f format) *shell {
	return &shell{eng: eng, out: bufio.NewWriter(out), errOut: errOut, format: f}
}

// script runs every statement of src, going on after an error, and prints
// each result as soon as its statement finishes (flushed, so a reader of the
// stream sees every acknowledged statement even if the process dies next).
// A line starting with a backslash between statements is a meta-command, as
// in psql's -c and -f; \q ends the script.
func (sh *shell) script(ctx context.Context, src string) error {
	start, startLine := 0, 1 // the SQL chunk not yet run, and its first line
	line := 1
	for off := 0; off < len(src); line++ {
		end := strings.IndexByte(src[off:], '\n')
		next := len(src)
		if end >= 0 {
			next = off + end + 1
		} else {
			end = len(src) - off
		}
		text := strings.TrimSpace(src[off : off+end])
		if chunk := src[start:off]; strings.HasPrefix(text, `\`) && (strings.TrimSpace(chunk) == "" || complete(chunk)) {
			if err := sh.chunk(ctx, chunk, startLine); err != nil {
				return err
			}
			if err := sh.meta(ctx, text); errors.Is(err, errQuit) {
				return nil
			} else if err != nil {
				return err
			}
			start, startLine = next, line+1
		}
		off = next
	}
	return sh.chunk(ctx, src[start:], startLine)
}

// chunk runs the statements of src, whose first line is line firstLine of
// the input.
func (sh *shell) chunk(ctx context.Context, src string, firstLine int) error {
	for _, st := range strata.SplitStatements(src) {
		line, col := lineCol(src, st.Offset)
		if err := sh.exec(ctx, st.SQL, firstLine+line-1, col); err != nil {
			return err
		}
	}
	return nil
}

// exec runs one statement and prints its outcome. line and col locate the
// statement's first character in the input, so jsonl errors can name their
// place in the whole script.
func (sh *shell) exec(ctx context.Context, sql string, line, col int) error {
	start := time.Now()
	res, serr := sh.eng.run(ctx, sql)
	elapsed := time.Since(start)
	if serr != nil {
		sh.failed++
		if sh.format == formatJSONL {
			l, c := 0, 0
			if serr.line > 0 {
				l, c = line+serr.line-1, serr.column
				if serr.line == 1 {
					c += col - 1
				}
			}
			if err := writeJSONLError(sh.out, serr.message, l, c); err != nil {
				return err
			}
		} else {
			if err := sh.out.Flush(); err != nil {
				return err
			}
			if _, err := io.WriteString(sh.errOut, formatError(sql, serr)); err != nil {
				return err
			}
		}
	} else {
		if len(res.notices) > 0 {
			if err := sh.out.Flush(); err != nil {
				return err
			}
			for _, n := range res.notices {
				if _, err := io.WriteString(sh.errOut, n); err != nil {
					return err
				}
			}
		}
		if err := writeResult(sh.out, sh.format, res); err != nil {
			return err
		}
	}
	if sh.timing {
		if err := sh.printTiming(elapsed); err != nil {
			return err
		}
	}
	return sh.out.Flush()
}

// printTiming prints `Time: 1.234 ms`: on the output in table format as psql
// does, on the error stream otherwise so machine-read output stays clean.
func (sh *shell) printTiming(d time.Duration) error {
	msg := fmt.Sprintf("Time: %.3f ms\n", float64(d.Nanoseconds())/1e6)
	if sh.format == formatTable {
		_, err := io.WriteString(sh.out, msg)
		return err
	}
	_, err := io.WriteString(sh.errOut, msg)
	return err
}

// lineCol converts byte offset off of src into a 1-based line and a 1-based
// column counted in characters.
func lineCol(src string, off int) (line, col int) {
	off = min(off, len(src))
	head := src[:off]
	line = strings.Count(head, "\n") + 1
	return line, utf8.RuneCountInString(head[strings.LastIndexByte(head, '\n')+1:]) + 1
}

// complete reports whether buf ends with a statement terminated by a
// semicolon outside strings, quoted names and comments, so the interactive
// shell knows when to run it. The check appends a probe statement: the
// terminator is real exactly when the probe comes back as a statement of its
// own.
func complete(buf string) bool {
	t := strings.TrimRight(buf, " \t\r\n")
	if !strings.HasSuffix(t, ";") {
		return false
	}
	// A quoted name no one types alone, so the buffer's own last statement
	// cannot equal it.
	const probe = `"strata: probe for a terminated statement"`
	st := strata.SplitStatements(t + " " + probe)
	return len(st) > 0 && st[len(st)-1].SQL == probe
}

// takeTerminated splits an interactive buffer into the statements a
// semicolon has already ended, which the shell runs at once, and the rest,
// which waits for more lines.
func takeTerminated(buf string) (done, rest string) {
	if complete(buf) {
		return buf, ""
	}
	cut := 0
	for _, st := range strata.SplitStatements(buf) {
		end := st.Offset + len(st.SQL)
		after := strings.TrimLeft(buf[end:], " \t\r\n")
		if !strings.HasPrefix(after, ";") {
			break
		}
		cut = len(buf) - len(after) + 1
	}
	return buf[:cut], buf[cut:]
}

// blank reports whether rest holds nothing that text typed after it could
// continue: only spaces and finished comments, no open string or comment.
func blank(rest string) bool {
	if strings.TrimSpace(rest) == "" {
		return true
	}
	const probe = `"strata: probe for a terminated statement"`
	st := strata.SplitStatements(rest + "\n" + probe)
	return len(st) == 1 && st[0].SQL == probe
}

// help is what \? prints.
const help = `General
  \q              quit
  \?              show this help
  \timing [on|off] toggle printing how long each statement took
Informational
  \dt             list tables (SHOW TABLES)
  \d NAME         describe a table (DESCRIBE NAME)
Statements end with a semicolon and may span several lines.
`

// errQuit is returned by meta when the user asked to leave.
var errQuit = errors.New("quit")

// meta runs a backslash command.
func (sh *shell) meta(ctx context.Context, line string) error {
	fields := strings.Fields(strings.TrimSpace(line))
	cmd, args := fields[0], fields[1:]
	switch cmd {
	case `\q`:
		return errQuit
	case `\?`:
		_, err := io.WriteString(sh.out, help)
		if err == nil {
			err = sh.out.Flush()
		}
		return err
	case `\timing`:
		switch {
		case len(args) == 0:
			sh.timing = !sh.timing
		case strings.EqualFold(args[0], "on"):
			sh.timing = true
		case strings.EqualFold(args[0], "off"):
			sh.timing = false
		default:
			return sh.metaError(`\timing: expected on or off, found "%s"`, args[0])
		}
		state := "off"
		if sh.timing {
			state = "on"
		}
		_, err := fmt.Fprintf(sh.errOut, "Timing is %s.\n", state)
		return err
	case `\dt`:
		return sh.exec(ctx, "SHOW TABLES", 1, 1)
	case `\d`:
		if len(args) == 0 {
			return sh.exec(ctx, "SHOW TABLES", 1, 1)
		}
		return sh.exec(ctx, "DESCRIBE "+args[0], 1, 1)
	}
	return sh.metaError(`invalid command %s; try \? for help`, cmd)
}

// metaError reports a mistyped backslash command; it is not a statement
// failure.
func (sh *shell) metaError(format string, args ...any) error {
	_, err := fmt.Fprintf(sh.errOut, format+"\n", args...)
	return err
}
