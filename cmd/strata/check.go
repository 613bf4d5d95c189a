package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/strata-db/strata/internal/storage"
)

// checkCmd is `strata check DIR`: verify a closed database's manifest, every
// part file's checksums and a full replay of its write-ahead log.
func checkCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "check DIR",
		Short: "Verify a data directory: manifest, part checksums and the write-ahead log",
		Long: "check verifies a database that no process has open: the manifest agrees with\n" +
			"itself, every part file's checksums verify, and every WAL record decodes.\n" +
			"It exits 1 and names what is wrong when anything is.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := storage.CheckDir(args[0], storage.Options{}); err != nil {
				return fmt.Errorf("check %s: %w", args[0], err)
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "%s: ok\n", args[0])
			return err
		},
	}
}
