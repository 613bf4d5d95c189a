// Package vfs is the only package in Strata that touches the operating
// system's file APIs. Storage code takes an FS and never imports os for
// files, so the same code runs on the real disk (OS), in memory with a model
// of what a crash keeps (Mem), and under injected failures (Fault wrapping
// either).
//
// Why a model of durability: a storage engine is correct only if what it
// acknowledged survives losing power, and that depends on the order of
// writes, fsyncs of files and fsyncs of directories. Mem keeps, for every
// file, the bytes the last Sync made durable and, for every directory, the
// entries the last SyncDir made durable; Mem.CrashClone returns exactly that
// state. A test can then "crash" at any point without a process and check
// the engine recovers.
//
// Invariants:
//
//  1. Only this package calls os file functions (os.Open, os.Create, ...);
//     storage/wal's tests check its own sources for it.
//  2. Bytes written to a File are durable only once File.Sync returns nil;
//     after a failed Sync nothing written since the last successful one is
//     known to be durable, and retrying Sync does not change that (Linux
//     may drop the dirty pages and report success next time).
//  3. A created, renamed or removed name is durable only once SyncDir of
//     its directory returns nil, even if the file itself was synced. Mem
//     implements this strict reading (ext4 with data=writeback, or any file
//     system after a badly timed crash, can behave so); code that is correct
//     on Mem is correct on the real file systems. Directories made by
//     MkdirAll are durable at once (Mem's simplification: storage creates
//     its directories once, at startup, and syncs their parents itself).
//  4. Lock is exclusive between holders, including two in one process, and
//     the error a loser gets wraps ErrLocked and names the holder's pid.
//  5. Fault is deterministic: rules count operations in the order they reach
//     it, under one mutex, so a test that fails "the 3rd Sync" fails the
//     same call on every run.
package vfs
