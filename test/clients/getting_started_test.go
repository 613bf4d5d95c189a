package clients

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// block is one fenced block of a Markdown file.
type block struct {
	lang, text string
	line       int // of the opening fence
}

func fencedBlocks(t *testing.T, path string) []block {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []block
	var cur *block
	for i, l := range strings.SplitAfter(string(src), "\n") {
		switch {
		case cur == nil && strings.HasPrefix(l, "```"):
			cur = &block{lang: strings.TrimSpace(l[3:]), line: i + 1}
		case cur != nil && strings.TrimRight(l, "\n") == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += l
		}
	}
	if cur != nil {
		t.Fatalf("%s:%d: unclosed fence", path, cur.line)
	}
	return out
}

// psqlPrefix is what non-interactive psql puts before a message and an
// interactive one does not.
var psqlPrefix = regexp.MustCompile(`(?m)^psql:<stdin>:\d+: `)

// TestGettingStarted follows docs/getting-started.md (issue 5, item 8):
// it starts `strata demo` as the document says, compares the banner, and
// runs every SQL block followed by a text block through psql, comparing
// the output exactly. The document's /tmp/strata-demo and 127.0.0.1:5433
// stand for the test's directory and port.
func TestGettingStarted(t *testing.T) {
	_, err := exec.LookPath("psql")
	need(t, "psql", err == nil, "no psql on PATH; Debian package postgresql-client")
	const doc = "../../docs/getting-started.md"
	blocks := fencedBlocks(t, doc)

	dir := t.TempDir()
	data := filepath.Join(dir, "strata-demo")
	addr := freePort(t)
	p := startStrata(t, dir, "demo", "--data", data, "--listen", addr)
	p.waitListening(t, addr)
	fix := strings.NewReplacer("/tmp/strata-demo", data, "127.0.0.1:5433", addr)

	banner := -1
	for i, b := range blocks {
		if b.lang == "sh" && strings.Contains(b.text, "strata demo --data /tmp/strata-demo") {
			banner = i + 1
			break
		}
	}
	if banner < 0 || banner >= len(blocks) || blocks[banner].lang != "text" {
		t.Fatalf("%s: no sh block running `strata demo --data /tmp/strata-demo` followed by the text it prints", doc)
	}
	want := fix.Replace(blocks[banner].text)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(p.stdout.String(), "Stop with Ctrl-C.") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := p.stdout.String(); got != want {
		t.Errorf("%s:%d: strata demo printed\n%s\nthe document says\n%s", doc, blocks[banner].line, got, want)
	}

	url := "postgres://strata@" + addr + "/strata?sslmode=disable"
	ran := 0
	for i := 0; i+1 < len(blocks); i++ {
		sqlB, outB := blocks[i], blocks[i+1]
		if sqlB.lang != "sql" || outB.lang != "text" {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, "psql", "-X", url, "-f", "-")
		cmd.Env = nil
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "PG") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Stdin = strings.NewReader(sqlB.text)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out // one pipe: messages stay in order
		_ = cmd.Run()                       // an error shown in the document exits 0 too (no ON_ERROR_STOP)
		cancel()
		got := psqlPrefix.ReplaceAllString(out.String(), "")
		if got != outB.text {
			t.Errorf("%s:%d: psql printed\n%s\nthe document says (line %d)\n%s", doc, sqlB.line, got, outB.line, outB.text)
		}
		ran++
	}
	if ran < 5 {
		t.Errorf("%s: only %d SQL blocks with output; the walk-through has more", doc, ran)
	}
}
