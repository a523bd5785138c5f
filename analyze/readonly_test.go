package analyze

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	oc "github.com/sixpin/sixpin/analyze/opencodetest"
)

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

func sampleDB(t *testing.T, dir string) string {
	d := oc.New(t, dir)
	for i := range 20 {
		at := t0 + int64(i)*30*sec
		d.User("msg_u"+string(rune('a'+i)), "ses_1", at-sec)
		d.Assistant(oc.Message{ID: "msg_a" + string(rune('a'+i)), Session: "ses_1", Provider: "p", Model: "m", Created: at, Completed: at + 3*sec,
			Finish: "tool-calls", Input: 1000 * (i + 1), Output: 300, Parts: []oc.Part{oc.Text(at+500, at+1500), oc.Tool(at+2000, at+2500)}})
	}
	return d.Close()
}

// TestReadOnly copies a database (WAL mode, closed cleanly: no -wal
// file), analyses it, and checks that not a byte changed and that no
// -wal, -shm or journal file appeared: an opencode 1 database and an
// OpenCode 2 one with both layouts.
func TestReadOnly(t *testing.T) {
	for _, c := range []struct {
		name    string
		db      func() string
		samples int
	}{
		{"v1", func() string { return sampleDB(t, t.TempDir()) }, 20},
		{"v1+v2", func() string { return mixedDB(t, 10, 10) }, 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "copy.db")
			copyFile(t, c.db(), path)
			before, _ := os.ReadFile(path)
			fi, _ := os.Stat(path)
			os.Chmod(path, 0o644)
			for range 2 {
				r := analyzeDB(t, Options{DBs: []string{path}, Trace: true})
				if r.Counts.Samples != c.samples {
					t.Fatalf("samples %d, want %d", r.Counts.Samples, c.samples)
				}
			}
			after, _ := os.ReadFile(path)
			if !bytes.Equal(before, after) {
				t.Error("the database's bytes changed")
			}
			if fi2, _ := os.Stat(path); !fi2.ModTime().Equal(fi.ModTime()) {
				t.Error("the database's modification time changed")
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				var names []string
				for _, e := range entries {
					names = append(names, e.Name())
				}
				t.Errorf("files beside the database after analysing: %v, want only copy.db", names)
			}
		})
	}
}

// TestReadOnlyWhileOpencodeWrites: with a writer holding the database
// open in WAL mode (commits in the -wal file, not yet checkpointed),
// analyse sees the committed rows, and the main file stays as it was.
func TestReadOnlyWhileOpencodeWrites(t *testing.T) {
	dir := t.TempDir()
	path := sampleDB(t, dir)
	w, err := sql.Open("sqlite", path+"?_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.SetMaxOpenConns(1)
	if _, err := w.Exec(`INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_new', 'ses_1', ?, ?, ?)`, t0+3600*sec, t0+3600*sec,
		`{"role":"assistant","time":{"created":`+itoa(t0+3600*sec)+`,"completed":`+itoa(t0+3602*sec)+`},"providerID":"p","modelID":"m","finish":"stop","tokens":{"input":5,"output":400,"reasoning":0,"cache":{"read":0,"write":0}}}`); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Fatalf("no -wal file while the writer is open: %v", err)
	}
	before, _ := os.ReadFile(path)
	r := analyzeDB(t, Options{DBs: []string{path}})
	if r.Counts.Samples != 21 {
		t.Errorf("samples %d, want 21 (the row committed to the -wal file included)", r.Counts.Samples)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Error("the database's bytes changed")
	}
	// The writer can still write: the reader held no lock.
	if _, err := w.Exec(`UPDATE message SET time_updated = time_updated + 1 WHERE id = 'msg_new'`); err != nil {
		t.Errorf("writer blocked after the analysis: %v", err)
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func TestDatabaseErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := sampleDB(t, t.TempDir())
	goodBytes, _ := os.ReadFile(good)
	// A valid SQLite database of another program.
	other := filepath.Join(dir, "other.db")
	db, _ := sql.Open("sqlite", other)
	db.Exec("CREATE TABLE notes (id integer primary key, body text)")
	db.Close()
	// A message table without the data column.
	odd := filepath.Join(dir, "odd.db")
	db, _ = sql.Open("sqlite", odd)
	db.Exec("CREATE TABLE message (id text primary key, session_id text, time_created integer, time_updated integer)")
	db.Exec("CREATE TABLE part (id text primary key, message_id text, data text)")
	db.Close()
	// The right header, then garbage pages.
	corrupt := append(append([]byte(nil), goodBytes[:100]...), bytes.Repeat([]byte{0xA5}, len(goodBytes)-100)...)
	// Truncated to half.
	half := goodBytes[:len(goodBytes)/2]
	for _, c := range []struct {
		name, path, want string
	}{
		{"missing", filepath.Join(dir, "nope.db"), "no such file"},
		{"directory", dir, "is a directory"},
		{"empty", write("empty.db", nil), "not a SQLite database"},
		{"text", write("text.db", []byte(strings.Repeat("hello world\n", 20))), "not a SQLite database"},
		{"other program", other, `not an opencode database (no table "message" or "session_message")`},
		{"odd schema", odd, `table "message" has no column "data"`},
		{"corrupt", write("corrupt.db", corrupt), "opencode database " + filepath.Join(dir, "corrupt.db") + ": "},
		{"truncated", write("half.db", half), "opencode database " + filepath.Join(dir, "half.db") + ": "},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Analyze(context.Background(), Options{DBs: []string{c.path}})
			var dbErr *DBError
			if !errors.As(err, &dbErr) {
				t.Fatalf("err = %v (%T), want a *DBError", err, err)
			}
			msg := err.Error()
			if !strings.Contains(msg, c.path) || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
				t.Errorf("err = %q, want one line naming %s and saying %q", msg, c.path, c.want)
			}
		})
	}
}

func TestLockedDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locked.db")
	w, _ := sql.Open("sqlite", path)
	defer w.Close()
	w.SetMaxOpenConns(1)
	for _, s := range []string{"PRAGMA journal_mode = DELETE", oc.Schema, "BEGIN EXCLUSIVE", "INSERT INTO project VALUES ('p', '/', 'git', 'x', 1, 1, '[]')"} {
		if _, err := w.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	_, err := Analyze(context.Background(), Options{DBs: []string{path}, BusyTimeout: 50 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "database is locked") || !strings.Contains(err.Error(), path) {
		t.Errorf("err = %v, want a locked error naming the file", err)
	}
	w.Exec("ROLLBACK")
}

// TestArchives reads a database with its archive: messages in both are
// counted once.
func TestArchives(t *testing.T) {
	live := oc.New(t, t.TempDir())
	arch := oc.New(t, t.TempDir())
	for i := range 6 {
		at := t0 + int64(i)*10*sec
		m := oc.Message{ID: "msg_" + string(rune('a'+i)), Session: "ses_" + string(rune('a'+i%2)), Provider: "p", Model: "m", Created: at, Completed: at + sec, Finish: "stop", Input: 10, Output: 100}
		if i < 4 {
			arch.Assistant(m)
		}
		if i >= 2 {
			live.Assistant(m)
		}
	}
	r := analyzeDB(t, Options{DBs: []string{live.Close(), arch.Close()}})
	if r.Counts.Messages != 6 || r.Counts.Duplicates != 2 || r.Counts.Samples != 6 || r.Sessions.Sessions != 2 {
		t.Errorf("counts %+v, sessions %d; want 6 messages, 2 duplicates, 6 samples, 2 sessions", r.Counts, r.Sessions.Sessions)
	}
}

// TestImmutableReadRedone: a database that changed under an immutable
// read is read again through SQLite's read-only mode.
func TestImmutableReadRedone(t *testing.T) {
	path := sampleDB(t, t.TempDir())
	r := analyzeDB(t, Options{DBs: []string{path}})
	if r.Databases[0].Mode != modeImmutable {
		t.Errorf("mode %q, want %q for a closed WAL database", r.Databases[0].Mode, modeImmutable)
	}
	r = analyzeDB(t, Options{DBs: []string{path}, afterRead: func(attempt int, changed []string) []string {
		if attempt == 0 {
			return []string{path}
		}
		return changed
	}})
	if r.Databases[0].Mode != modeReadOnly || r.Counts.Samples != 20 {
		t.Errorf("mode %q, samples %d; want %q and 20", r.Databases[0].Mode, r.Counts.Samples, modeReadOnly)
	}
}
