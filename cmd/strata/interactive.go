package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/chzyer/readline"
)

// Prompts: the first line of a statement, and the lines that continue it.
const (
	promptFirst = "strata=> "
	promptMore  = "strata-> "
)

// interactive reads statements with line editing and history until \q or
// end of input. Lines accumulate until one ends the statement with a
// semicolon; a line starting with a backslash is a meta-command and leaves
// the statement being typed alone. Ctrl-C clears the line being typed, or
// cancels the statement running.
func (sh *shell) interactive(ctx context.Context, cfg *readline.Config) error {
	cfg.Prompt = promptFirst
	cfg.DisableAutoSaveHistory = true
	rl, err := readline.NewEx(cfg)
	if err != nil {
		return err
	}
	defer rl.Close()
	if _, err := fmt.Fprintf(cfg.Stdout, "strata %s\nType \\? for help, \\q to quit.\n\n", version); err != nil {
		return err
	}
	var buf strings.Builder
	for {
		line, err := rl.Readline()
		if errors.Is(err, readline.ErrInterrupt) {
			buf.Reset()
			rl.SetPrompt(promptFirst)
			continue
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if t := strings.TrimSpace(line); strings.HasPrefix(t, `\`) {
			_ = rl.SaveHistory(t)
			if err := sh.meta(ctx, t); errors.Is(err, errQuit) {
				return nil
			} else if err != nil {
				return err
			}
			continue
		}
		if buf.Len() > 0 {
			buf.WriteByte('\n')
		}
		buf.WriteString(line)
		if strings.TrimSpace(buf.String()) == "" {
			buf.Reset()
			continue
		}
		text, rest := takeTerminated(buf.String())
		buf.Reset()
		if blank(rest) {
			rl.SetPrompt(promptFirst)
		} else {
			buf.WriteString(rest)
			rl.SetPrompt(promptMore)
		}
		if text == "" {
			continue
		}
		// One history entry per statement: the history file holds one
		// line per entry.
		_ = rl.SaveHistory(strings.Join(strings.Fields(text), " "))
		if err := sh.runCancelable(ctx, text); err != nil {
			return err
		}
	}
}

// runCancelable runs the statements of text with Ctrl-C cancelling them
// instead of ending the shell.
func (sh *shell) runCancelable(ctx context.Context, text string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	defer signal.Stop(sig)
	go func() {
		select {
		case <-sig:
			cancel()
		case <-ctx.Done():
		}
	}()
	return sh.script(ctx, text)
}
