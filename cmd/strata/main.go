// Command strata is Strata's command line: it holds flags only and calls
// into the library for everything else.
//
//	strata version                  print the release
//	strata sql [--data DIR] [-c SQL]... [-f FILE]... [--format table|csv|tsv|json|jsonl]
//
// `strata sql` (SPEC R13.2) opens the data directory in-process through the
// root package's Go API. It has one core, shell, used both by the
// interactive loop (readline, history in ~/.strata_history, statements
// ending in ";" over several lines, meta-commands \dt \d \timing \? \q)
// and by the non-interactive runner of -c, -f and piped standard input, so a
// statement prints the same way in either. Scripts are cut into statements
// with strata.SplitStatements and run one by one, so an error stops only its
// own statement; the exit status is 1 when any failed. Errors are shown as
// psql shows them (R13.5): ERROR, a LINE with the statement's line and a
// caret under the offending character, DETAIL and HINT.
//
// --format jsonl is a contract with other tools: one line per statement,
// written and flushed when the statement finishes, in exactly the shape
// writeJSONLine and writeJSONLError print.
package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"

	"github.com/spf13/cobra"
)

// version is Strata's release; set with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

func main() {
	if err := rootCmd().Execute(); err != nil {
		// Failed statements have printed their own errors.
		if !errors.Is(err, errFailed) {
			fmt.Fprintln(os.Stderr, "Error:", err)
		}
		os.Exit(1)
	}
}

func rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "strata",
		Short:         "Strata: a versioned SQL database",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(versionCmd(), sqlCmd(), checkCmd(), serveCmd(), demoCmd())
	return root
}

func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print Strata's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "strata %s (%s %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
}
