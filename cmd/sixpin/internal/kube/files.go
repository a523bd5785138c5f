package kube

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/sixpin/sixpin/internal/atomicfile"
)

// A file travels through a pod's log as a block of lines:
//
//	-----BEGIN SIXPIN FILE name=NAME bytes=N sha256=HEX-----
//	the file's bytes (a newline added when they do not end in one)
//	-----END SIXPIN FILE name=NAME-----
//
// or, when there was no file, as one line
//
//	-----SIXPIN FILE MISSING name=NAME-----
//
// Lines outside blocks are ignored, so the log may hold other output.
const (
	beginMark   = "-----BEGIN SIXPIN FILE "
	endMark     = "-----END SIXPIN FILE "
	missingMark = "-----SIXPIN FILE MISSING "
	markEnd     = "-----"
)

// fileName is what a travelling file may be called: a plain base name.
var fileName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$`)

// Emit writes the files paths name to w, each as one block (see above),
// for a pod's log. A path with glob characters (*?[) stands for the files
// it matches. A file that is missing is written as a MISSING line and
// reported in the returned error; the others are written all the same.
func Emit(w io.Writer, paths ...string) error {
	var errs []error
	for _, p := range paths {
		files := []string{p}
		if strings.ContainsAny(p, "*?[") {
			var err error
			if files, err = filepath.Glob(p); err != nil {
				return fmt.Errorf("emit %s: %w", p, err)
			}
			if len(files) == 0 {
				errs = append(errs, fmt.Errorf("emit: no file matches %s", p))
				continue
			}
		}
		for _, f := range files {
			if err := emitFile(w, f); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

func emitFile(w io.Writer, path string) error {
	name := filepath.Base(path)
	if !fileName.MatchString(name) {
		return fmt.Errorf("emit %s: the name must be letters, digits, '.', '_' and '-'", path)
	}
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintf(w, "%sname=%s%s\n", missingMark, name, markEnd)
		return fmt.Errorf("emit: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		return fmt.Errorf("emit %s: %w", path, err)
	}
	if _, err := fmt.Fprintf(w, "%sname=%s bytes=%d sha256=%x%s\n", beginMark, name, n, h.Sum(nil), markEnd); err != nil {
		return fmt.Errorf("emit %s: %w", path, err)
	}
	lw := &lastByte{w: w}
	if _, err := io.Copy(lw, io.LimitReader(f, n)); err != nil {
		return fmt.Errorf("emit %s: %w", path, err)
	}
	if lw.n > 0 && lw.last != '\n' {
		io.WriteString(w, "\n")
	}
	_, err = fmt.Fprintf(w, "%sname=%s%s\n", endMark, name, markEnd)
	return err
}

// lastByte passes writes on and remembers the last byte written.
type lastByte struct {
	w    io.Writer
	n    int64
	last byte
}

func (l *lastByte) Write(p []byte) (int, error) {
	n, err := l.w.Write(p)
	if n > 0 {
		l.n += int64(n)
		l.last = p[n-1]
	}
	return n, err
}

// Collected is a file Collect wrote.
type Collected struct {
	// Path is where it was written; Bytes its length.
	Path  string
	Bytes int64
}

// header is a BEGIN line's fields.
type header struct {
	name   string
	bytes  int64
	sha256 string
	// prefix is what kubectl logs --prefix put before the line
	// ("[pod/NAME/results] "); every line of the block carries it.
	prefix string
}

// Collect reads logs holding blocks that Emit wrote, among any other
// lines, and writes each block's file into dir under its name,
// atomically, once its length and sha256 match its BEGIN line. A block
// that is cut short, does not match or is MISSING is reported in the
// returned error, which names every such file; the good ones are written
// all the same. The same file twice is written once; two different files
// of the same name are an error.
func Collect(r io.Reader, dir string) ([]Collected, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var out []Collected
	var errs []error
	seen := map[string]string{}
	blocks := 0
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			text := strings.TrimSuffix(string(line), "\n")
			if i := strings.Index(text, missingMark); i >= 0 && strings.HasSuffix(text, markEnd) {
				blocks++
				name := strings.TrimPrefix(strings.TrimSuffix(text[i+len(missingMark):], markEnd), "name=")
				errs = append(errs, fmt.Errorf("%s: missing in its pod: the run wrote no results (see that pod's %s container log)", name, ContainerName))
			} else if i := strings.Index(text, beginMark); i >= 0 {
				blocks++
				h, herr := parseHeader(text[i:], text[:i])
				if herr != nil {
					errs = append(errs, herr)
					continue
				}
				c, cerr := collectBlock(br, h, dir, seen)
				if cerr != nil {
					errs = append(errs, cerr)
				} else if c != nil {
					out = append(out, *c)
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return out, fmt.Errorf("collect: %w", err)
		}
	}
	if blocks == 0 {
		errs = append(errs, errors.New("collect: no sixpin files in the input (are these the logs of the run's results containers, without --timestamps?)"))
	}
	return out, errors.Join(errs...)
}

// CollectFile is Collect on the file at path.
func CollectFile(path, dir string) ([]Collected, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("collect: %w", err)
	}
	defer f.Close()
	return Collect(f, dir)
}

func parseHeader(line, prefix string) (header, error) {
	h := header{prefix: prefix}
	if prefix != "" && !(strings.HasPrefix(prefix, "[") && strings.HasSuffix(prefix, "] ")) {
		return h, fmt.Errorf("collect: a BEGIN line after %q: only kubectl's --prefix may precede it", prefix)
	}
	body, ok := strings.CutSuffix(strings.TrimPrefix(line, beginMark), markEnd)
	if !ok {
		return h, fmt.Errorf("collect: a malformed BEGIN line")
	}
	for _, f := range strings.Fields(body) {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "name":
			h.name = v
		case "bytes":
			h.bytes, _ = strconv.ParseInt(v, 10, 64)
		case "sha256":
			h.sha256 = v
		}
	}
	if !fileName.MatchString(h.name) || h.bytes < 0 || len(h.sha256) != 64 {
		return h, fmt.Errorf("collect: a malformed BEGIN line (name=%q)", h.name)
	}
	return h, nil
}

// collectBlock reads the rest of h's block from br and writes its file
// into dir (nil when it is a copy of one already written).
func collectBlock(br *bufio.Reader, h header, dir string, seen map[string]string) (*Collected, error) {
	path := filepath.Join(dir, h.name)
	if sum, dup := seen[h.name]; dup {
		if err := readBlock(br, h, io.Discard); err != nil {
			return nil, err
		}
		if sum != h.sha256 {
			return nil, fmt.Errorf("%s: two different files of that name in the input", h.name)
		}
		return nil, nil
	}
	if err := atomicfile.Write(path, func(w io.Writer) error { return readBlock(br, h, w) }); err != nil {
		return nil, err
	}
	seen[h.name] = h.sha256
	return &Collected{Path: path, Bytes: h.bytes}, nil
}

// readBlock copies the lines of h's block up to its END line to w and
// checks them against h.
func readBlock(br *bufio.Reader, h header, w io.Writer) error {
	end := h.prefix + endMark + "name=" + h.name + markEnd
	sum := sha256.New()
	out := io.MultiWriter(w, sum)
	var n int64
	newline := false // the last line's newline, not yet known to be the file's
	for {
		line, err := br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return fmt.Errorf("%s: %w", h.name, err)
		}
		text, complete := bytes.CutSuffix(line, []byte("\n"))
		if complete && string(text) == end {
			if newline && n+1 == h.bytes {
				out.Write([]byte("\n"))
				n++
			}
			if n != h.bytes {
				return fmt.Errorf("%s: %d bytes arrived, its BEGIN line says %d", h.name, n, h.bytes)
			}
			if got := hex.EncodeToString(sum.Sum(nil)); got != h.sha256 {
				return fmt.Errorf("%s: its bytes do not match their sha256 (the log was altered)", h.name)
			}
			return nil
		}
		if !complete {
			return fmt.Errorf("%s: the log ends inside it (cut short?)", h.name)
		}
		if h.prefix != "" {
			var ok bool
			if text, ok = bytes.CutPrefix(text, []byte(h.prefix)); !ok {
				return fmt.Errorf("%s: a line of it lacks the prefix %q (logs of several pods interleaved?)", h.name, h.prefix)
			}
		}
		if newline {
			out.Write([]byte("\n"))
			n++
		}
		if _, err := out.Write(text); err != nil {
			return err
		}
		n += int64(len(text))
		newline = true
		if n > h.bytes {
			return fmt.Errorf("%s: more bytes than its BEGIN line's %d (the END line is missing?)", h.name, h.bytes)
		}
	}
}
