// Package tmpfs mounts small tmpfs file systems for sixpin's tests.
//
// Each is a real disk that fills up (writes past its size fail with ENOSPC), so that what
// a run does on a full disk is tested on one rather than through an
// injected writer.
//
// Mounting needs root or passwordless sudo (CI runs as root or with
// sudo). Where neither is there, Mount fails the test: a test of what a
// full disk does is never skipped.
package tmpfs

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Mount mounts a tmpfs of size bytes (rounded up to whole pages) on a new
// empty directory, owned by the test's user, and returns the directory. It
// is unmounted when the test ends.
func Mount(t testing.TB, size int) string {
	t.Helper()
	dir := t.TempDir()
	opts := fmt.Sprintf("size=%d,uid=%d,gid=%d,mode=0755", size, os.Getuid(), os.Getgid())
	if out, err := privileged("mount", "-t", "tmpfs", "-o", opts, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount a %d-byte tmpfs on %s: %v: %s (this test needs a real full disk: run it as root or with passwordless sudo, as CI does)",
			size, dir, err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		// Lazily: a file the test left open must not keep it mounted.
		if out, err := privileged("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("unmount the tmpfs on %s: %v: %s", dir, err, strings.TrimSpace(string(out)))
		}
	})
	return dir
}

// Fill writes a file in dir until the file system is full, so that the
// next write anywhere on it fails, and returns the file's path (removing
// it makes room again).
func Fill(t testing.TB, dir string) string {
	t.Helper()
	f, err := os.CreateTemp(dir, "filler-*")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 4096)
	for {
		if _, err := f.Write(block); err != nil {
			break
		}
	}
	for { // the last partial page
		if _, err := f.Write(block[:1]); err != nil {
			return f.Name()
		}
	}
}

// privileged is the command name args, run through `sudo -n` unless the
// test runs as root.
func privileged(name string, args ...string) *exec.Cmd {
	if os.Geteuid() == 0 {
		return exec.Command(name, args...)
	}
	return exec.Command("sudo", append([]string{"-n", name}, args...)...)
}
