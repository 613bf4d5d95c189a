package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// serving is a system whose lookups a server process answers (Strata's
// server, a PostgreSQL backend): its process id lets the harness read what
// that process spent on a lookup phase beside the client's own CPU.
type serving interface {
	serverPID(ctx context.Context) (int, error)
}

// schedUsage is what the kernel counted for one process's threads so far:
// from /proc/PID/task/*/schedstat and status, time on a core, time
// runnable but waiting for one, and context switches, voluntary (the
// thread blocked: a read, a futex) and involuntary (it was preempted);
// from /proc/PID/stat, the process's minor page faults.
// A lookup over a socket on a two-core machine is slowed by every
// microsecond its client or its server waits for a core, which neither
// process's CPU time shows.
type schedUsage struct {
	run, wait  time.Duration
	vol, invol int64
	faults     int64
	// threads is how many threads were read.
	threads int
}

// readSched sums schedUsage over the threads of process pid (0: this
// process). Threads that exit between two reads drop out of the sum, so a
// phase's difference is a lower bound where threads come and go.
func readSched(pid int) (schedUsage, error) {
	base := "/proc/self"
	if pid > 0 {
		base = "/proc/" + strconv.Itoa(pid)
	}
	var u schedUsage
	stat, err := os.ReadFile(base + "/stat")
	if err != nil {
		return u, err
	}
	// Fields after the command's closing parenthesis: state is field 3,
	// minflt field 10.
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 {
		f := bytes.Fields(stat[i+1:])
		if len(f) > 7 {
			u.faults, _ = strconv.ParseInt(string(f[7]), 10, 64)
		}
	}
	tasks, err := os.ReadDir(base + "/task")
	if err != nil {
		return u, err
	}
	for _, t := range tasks {
		dir := filepath.Join(base, "task", t.Name())
		ss, err := os.ReadFile(dir + "/schedstat")
		if err != nil {
			continue // exited since the listing
		}
		f := bytes.Fields(ss)
		if len(f) < 2 {
			continue
		}
		r, _ := strconv.ParseInt(string(f[0]), 10, 64)
		w, _ := strconv.ParseInt(string(f[1]), 10, 64)
		u.run += time.Duration(r)
		u.wait += time.Duration(w)
		st, err := os.ReadFile(dir + "/status")
		if err == nil {
			u.vol += statusField(st, "voluntary_ctxt_switches:")
			u.invol += statusField(st, "nonvoluntary_ctxt_switches:")
		}
		u.threads++
	}
	return u, nil
}

// statusField is the number after name at the start of a line of a /proc
// status file, 0 if absent.
func statusField(st []byte, name string) int64 {
	var rest []byte
	for line := range bytes.Lines(st) {
		if r, ok := bytes.CutPrefix(line, []byte(name)); ok {
			rest = r
			break
		}
	}
	if rest == nil {
		return 0
	}
	if j := bytes.IndexByte(rest, '\n'); j >= 0 {
		rest = rest[:j]
	}
	v, _ := strconv.ParseInt(string(bytes.TrimSpace(rest)), 10, 64)
	return v
}

// add adds b−a to u (threads: b's).
func (u *schedUsage) add(b, a schedUsage) {
	u.run += b.run - a.run
	u.wait += b.wait - a.wait
	u.vol += b.vol - a.vol
	u.invol += b.invol - a.invol
	u.faults += b.faults - a.faults
	u.threads = b.threads
}

// perLookup formats b−a per lookup of n.
func (b schedUsage) perLookup(a schedUsage, n int) string {
	f := float64(n)
	return fmt.Sprintf("%.1f µs on a core, %.1f µs waiting for one, %.2f voluntary and %.3f involuntary switches, %.3f page faults per lookup (%d threads)",
		us(b.run-a.run)/f, us(b.wait-a.wait)/f, float64(b.vol-a.vol)/f, float64(b.invol-a.invol)/f, float64(b.faults-a.faults)/f, b.threads)
}
