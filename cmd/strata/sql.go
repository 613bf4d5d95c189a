package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/chzyer/readline"
	"github.com/spf13/cobra"
	"github.com/strata-db/strata"
)

// errFailed makes `strata sql` exit 1 after it has printed every failed
// statement's error itself.
var errFailed = errors.New("one or more statements failed")

// sqlFlags are the flags of `strata sql`.
type sqlFlags struct {
	data     string
	url      string
	commands []string
	files    []string
	format   string
	// asofIndex is strata.Options.AsOfIndex for the embedded directory.
	asofIndex bool
}

func sqlCmd() *cobra.Command {
	var fl sqlFlags
	cmd := &cobra.Command{
		Use:   "sql",
		Short: "Run SQL: an interactive shell, or -c / -f without a prompt",
		Long: `sql opens the data directory in-process and runs SQL on it (SPEC R13.2);
with --url it runs the same shell against a server (strata serve) instead.

With -c or -f (both may be repeated; the -c strings run first, then the files,
"-" meaning standard input) it runs every statement without a prompt, goes on
after an error and exits 1 if any statement failed. Without them it is an
interactive shell when standard input is a terminal (history in
~/.strata_history; \? lists the meta-commands), and otherwise runs standard
input as a script.

--format jsonl prints one JSON object per statement, flushed as soon as the
statement finishes:
  {"ok":true,"tag":"INSERT 0 2","columns":[],"types":[],"rows":[]}
  {"ok":false,"error":"…","line":1,"column":8}
values as JSON strings of their canonical text and NULL as null; an error's
line and column count from the start of the -c string or file.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runSQL(cmd.Context(), fl, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&fl.data, "data", "./strata-data", "data directory (created if missing)")
	f.StringVar(&fl.url, "url", "", "run against a server instead, e.g. postgres://strata@127.0.0.1:5433/strata")
	f.StringArrayVarP(&fl.commands, "command", "c", nil, "run the SQL statements of this string and exit")
	f.StringArrayVarP(&fl.files, "file", "f", nil, "run the SQL statements of this file (- for standard input) and exit")
	f.StringVar(&fl.format, "format", "table", "output format: table, csv, tsv, json or jsonl")
	f.BoolVar(&fl.asofIndex, "asof-index", false, "write AS OF indexes of versioned tables' merged runs: faster first reads at past commits, more disk and merge CPU")
	return cmd
}

// runSQL is `strata sql` once its flags are read.
func runSQL(ctx context.Context, fl sqlFlags, in io.Reader, out, errOut io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	f, err := parseFormat(fl.format)
	if err != nil {
		return err
	}
	var eng engine
	if fl.url != "" && fl.asofIndex {
		return errors.New("--asof-index is a setting of the data directory's process: give it to strata serve, not to sql --url")
	}
	if fl.url != "" {
		w, err := dialWire(ctx, fl.url)
		if err != nil {
			return err
		}
		defer w.close()
		eng = w
	} else {
		if err := os.MkdirAll(fl.data, 0o755); err != nil {
			return fmt.Errorf("data directory: %w", err)
		}
		db, err := strata.Open(fl.data, strata.Options{AsOfIndex: fl.asofIndex})
		if err != nil {
			return err
		}
		defer db.Close()
		eng = sessionEngine{db.NewSession()}
	}
	sh := newShell(eng, out, errOut, f)

	stdin, isFile := in.(*os.File)
	switch {
	case len(fl.commands) > 0 || len(fl.files) > 0:
		for _, c := range fl.commands {
			if err := sh.script(ctx, c); err != nil {
				return err
			}
		}
		for _, name := range fl.files {
			src, err := readScript(name, in)
			if err != nil {
				return err
			}
			if err := sh.script(ctx, src); err != nil {
				return err
			}
		}
	case isFile && readline.IsTerminal(int(stdin.Fd())):
		cfg := &readline.Config{HistoryFile: historyFile(), Stdout: out, Stderr: errOut}
		if err := sh.interactive(ctx, cfg); err != nil {
			return err
		}
	default:
		src, err := io.ReadAll(in)
		if err != nil {
			return err
		}
		if err := sh.script(ctx, string(src)); err != nil {
			return err
		}
	}
	if sh.failed > 0 {
		return errFailed
	}
	return nil
}

// readScript reads a -f file; "-" is standard input.
func readScript(name string, in io.Reader) (string, error) {
	if name == "-" {
		b, err := io.ReadAll(in)
		return string(b), err
	}
	b, err := os.ReadFile(name)
	return string(b), err
}

// historyFile is ~/.strata_history, or "" (no history kept) when there is
// no home directory.
func historyFile() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".strata_history")
}
