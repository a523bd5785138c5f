package results

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sixpin/sixpin/internal/tmpfs"
	"github.com/sixpin/sixpin/record"
)

// spillRun adds n records of 50 chunks each to a collector spilling to
// path and returns it, its spill still open.
func spillRun(t testing.TB, path string, n int) *Collector {
	t.Helper()
	c, err := NewCollector(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Begin(&Header{}); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		r := stream(i, time.Duration(i)*10*ms, 50*ms, 5*ms, 50, 1)
		r.Class = []string{"a", "b", "c"}[i%3]
		c.Add(r)
	}
	return c
}

// A spill whose disk fills (a 16 KB tmpfs) loses no record: those the
// disk did not take stay in memory for Finish, and the file holds only
// whole records, every one of them recoverable.
func TestSpillOnAFullDisk(t *testing.T) {
	t.Parallel()
	path := filepath.Join(tmpfs.Mount(t, 16<<10), "r.spill")
	c := spillRun(t, path, 300)
	m, err := c.Finish(WindowSpec{}, SLO{}, Tolerances{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Errors.Requests != 300 || m.Windows[WindowAll].Completed != 300 {
		t.Errorf("Finish saw %d requests (%d completed), want 300", m.Errors.Requests, m.Windows[WindowAll].Completed)
	}
	st := c.Spill()
	if st.Err == nil || !strings.Contains(st.Err.Error(), "no space left on device") {
		t.Errorf("spill state %+v: want the full disk's error", st)
	}
	if st.OnDisk == 0 || st.OnDisk+st.InMemory != 300 {
		t.Errorf("spill state %+v: want some of 300 records on disk, the rest in memory", st)
	}
	if err := c.Release(); err != nil {
		t.Errorf("release: %v", err)
	}
	rec, err := Recover(path, "test")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Requests != st.OnDisk || rec.SkippedBytes != 0 {
		t.Errorf("recovered %d records (%d bytes skipped), want the %d on disk and nothing skipped", rec.Requests, rec.SkippedBytes, st.OnDisk)
	}
}

// A spill whose tail is damaged (zeros from a crash, garbage, a record
// cut mid-write): Recover rebuilds every whole record before the damage,
// says how many bytes it skipped, and marks the results incomplete.
func TestRecoverSkipsADamagedTail(t *testing.T) {
	t.Parallel()
	garbage := make([]byte, 3000)
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range garbage {
		garbage[i] = byte(rnd.Uint32())
	}
	for _, tc := range []struct {
		name    string
		damage  func(b []byte) []byte
		records int
		skipped string
	}{
		{"zeros", func(b []byte) []byte { return append(b, make([]byte, 4096)...) }, 100, "4,096 bytes"},
		{"garbage", func(b []byte) []byte { return append(b, garbage...) }, 100, "3,000 bytes"},
		{"cut mid-record", func(b []byte) []byte { return b[:len(b)-7] }, 99, ""},
		{"a record overwritten", func(b []byte) []byte {
			copy(b[len(b)-90:], "overwritten")
			return b
		}, 99, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "r.spill")
			if err := spillRun(t, path, 100).Release(); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, tc.damage(bytes.Clone(b)), 0o644); err != nil {
				t.Fatal(err)
			}
			rec, err := Recover(path, "killed")
			if err != nil {
				t.Fatal(err)
			}
			if rec.Requests != tc.records || rec.Run.Errors.Requests != tc.records {
				t.Errorf("recovered %d records (%d in the results), want %d", rec.Requests, rec.Run.Errors.Requests, tc.records)
			}
			if rec.SkippedBytes == 0 || !rec.Run.Incomplete || !strings.Contains(rec.Run.IncompleteReason, "skipped the last "+tc.skipped) {
				t.Errorf("skipped %d bytes; incomplete %v: %q", rec.SkippedBytes, rec.Run.Incomplete, rec.Run.IncompleteReason)
			}
		})
	}
}

// Records kept in memory while the disk is full reach the file at the
// first flush after room is made.
func TestSpillCatchesUpWhenTheDiskHasRoom(t *testing.T) {
	t.Parallel()
	dir := tmpfs.Mount(t, 64<<10)
	path := filepath.Join(dir, "r.spill")
	c, err := NewCollector(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	filler := tmpfs.Fill(t, dir)
	if err := c.Begin(&Header{}); err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		c.Add(stream(i, time.Duration(i)*10*ms, 50*ms, 5*ms, 50, 1))
	}
	c.Flush()
	if st := c.Spill(); st.Err == nil || st.OnDisk != 0 || st.InMemory != 40 {
		t.Fatalf("on a full disk: %+v", st)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	c.Flush()
	if st := c.Spill(); st.Err != nil || st.OnDisk != 40 || st.InMemory != 0 || st.MemoryBytes != 0 {
		t.Fatalf("with room again: %+v", st)
	}
	rec, err := RecoverUpTo(path, c.Spill().Bytes, "test")
	if err != nil || rec.Requests != 40 || rec.SkippedBytes != 0 {
		t.Fatalf("recovered %+v: %v", rec, err)
	}
}

// A spill of an older sixpin (v1: frames without checksums) is still
// recovered.
func TestRecoverReadsAV1Spill(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "r.spill")
	if err := spillRun(t, path, 20).Release(); err != nil {
		t.Fatal(err)
	}
	v2, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v1 := []byte(spillMagicV1)
	for b := v2[len(spillMagic):]; len(b) > 0; {
		size, w := binary.Uvarint(b)
		v1 = append(v1, b[:w+int(size)]...)
		b = b[w+int(size)+crc32.Size:]
	}
	if err := os.WriteFile(path, v1, 0o644); err != nil {
		t.Fatal(err)
	}
	rec, err := Recover(path, "test")
	if err != nil || rec.Requests != 20 || rec.SkippedBytes != 0 {
		t.Fatalf("recovered %+v: %v", rec, err)
	}
}

// Whatever bytes a spill holds, reading it never panics, and the whole
// frames it reads and the bytes it skips make up the file.
func FuzzSpillReader(f *testing.F) {
	path := filepath.Join(f.TempDir(), "r.spill")
	c := spillRun(f, path, 5)
	if err := c.Release(); err != nil {
		f.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(append(bytes.Clone(good), make([]byte, 100)...))
	f.Add(append([]byte(spillMagicV1), good[len(spillMagic):]...))
	f.Fuzz(func(t *testing.T, data []byte) {
		rd, err := newSpillReader(bytes.NewReader(data), "fuzz")
		if err != nil {
			return
		}
		if err := readRecords(rd, "fuzz", -1, nil, func(*record.Record) {}); err != nil {
			t.Fatal(err)
		}
		if rd.end+rd.skipped != int64(len(data)) || (rd.skipped > 0) != (rd.damage != "") {
			t.Fatalf("read %d bytes of whole frames, skipped %d (%q), of %d", rd.end, rd.skipped, rd.damage, len(data))
		}
	})
}
