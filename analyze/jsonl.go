package analyze

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Agent logs that are JSON Lines (Claude Code's transcripts, Codex's
// rollouts) are read file by file, line by line, opened read-only; a
// line is held only while it is read, a file's messages until the file
// ends.

// FileError is a transcript path that cannot be read: missing, not a
// file or directory, or holding no .jsonl file. Its message is one line
// that names the path.
type FileError struct {
	Source string
	Path   string
	Err    error
}

func (e *FileError) Error() string { return fmt.Sprintf("%s logs %s: %v", e.Source, e.Path, e.Err) }
func (e *FileError) Unwrap() error { return e.Err }

// jsonlFiles lists the .jsonl files of paths, each a file (taken
// whatever its name) or a directory (searched recursively), in order.
func jsonlFiles(source string, paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		fail := func(err error) ([]string, error) { return nil, &FileError{Source: source, Path: p, Err: err} }
		fi, err := os.Stat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return fail(errors.New("no such file or directory"))
		case err != nil:
			return fail(err)
		case !fi.IsDir():
			out = append(out, p)
			continue
		}
		n := len(out)
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(d.Name(), ".jsonl") {
				out = append(out, path)
			}
			return nil
		})
		if err != nil {
			return fail(err)
		}
		if len(out) == n {
			return fail(errors.New("no .jsonl files in it"))
		}
		slices.Sort(out[n:])
	}
	return out, nil
}

// maxExamples bounds the skipped lines a report names.
const maxExamples = 5

// lineReader reads one JSON Lines file.
type lineReader struct {
	path string
	br   *bufio.Reader
	buf  []byte
	n    int
}

// eachLine calls fn with every non-blank line of path (its number from
// 1, the bytes valid until fn returns), checking ctx every 4,096 lines.
func eachLine(ctx context.Context, source, path string, fn func(n int, line []byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return &FileError{Source: source, Path: path, Err: err}
	}
	defer f.Close()
	r := &lineReader{path: path, br: bufio.NewReaderSize(f, 256<<10)}
	for {
		line, err := r.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return &FileError{Source: source, Path: path, Err: err}
		}
		if r.n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if len(line) == 0 {
			continue
		}
		if err := fn(r.n, line); err != nil {
			return err
		}
	}
}

// next returns the next line without its end of line; a long line is
// gathered into r.buf, reused from line to line.
func (r *lineReader) next() ([]byte, error) {
	r.buf = r.buf[:0]
	for {
		frag, err := r.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			r.buf = append(r.buf, frag...)
			continue
		}
		if err == io.EOF && len(frag) == 0 && len(r.buf) == 0 {
			return nil, io.EOF
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		r.n++
		line := frag
		if len(r.buf) > 0 {
			r.buf = append(r.buf, frag...)
			line = r.buf
		}
		line = trimEOL(line)
		return line, nil
	}
}

func trimEOL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// jsonTime reads an ISO-8601 timestamp (a JSON string) as Unix ms.
func jsonTime(val []byte) (float64, bool) {
	s, ok := str(val)
	if !ok {
		return 0, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, false
	}
	return float64(t.UnixMilli()), true
}

// skipLine counts a line that cannot be read, naming the first few.
func (a *acc) skipLine(path string, n int, why string) {
	sk := &a.counts.Skipped
	sk.MalformedLines++
	if len(sk.Examples) < maxExamples {
		sk.Examples = append(sk.Examples, fmt.Sprintf("%s:%d: %s", path, n, why))
	}
}

// session hands one session's messages, as a reader gathered them, to
// the accumulator.
func (a *acc) session(id string, msgs []msg) {
	a.flushSession()
	a.sess.id = id
	a.sess.msgs = append(a.sess.msgs, msgs...)
	a.flushSession()
}

// requestStart is when a model call was sent, as logs without request
// times tell it: the later of the last input before it (a prompt or a
// tool result) and the end of the previous call.
func requestStart(lastInput, prevEnd float64) (float64, bool) {
	t := max(lastInput, prevEnd)
	return t, t > 0
}
