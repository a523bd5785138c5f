package h1

import (
	"bytes"
	"errors"
	"math"
)

// Bounds on a chunked body's framing.
const (
	// maxLineBytes bounds a chunk-size line (extensions included) and a
	// trailer line.
	maxLineBytes = 4 << 10
	// maxTrailerLines bounds the trailer after the last chunk.
	maxTrailerLines = 64
)

var (
	errChunkSize    = errors.New("h1: malformed chunked encoding: bad chunk size")
	errChunkEnd     = errors.New("h1: malformed chunked encoding: no CRLF after a chunk's data")
	errChunkLine    = errors.New("h1: malformed chunked encoding: a chunk-size or trailer line longer than 4 KiB")
	errChunkTrailer = errors.New("h1: malformed chunked encoding: more than 64 trailer lines")
)

// chunkState is where a dechunker is in the framing.
type chunkState uint8

const (
	inSize    chunkState = iota // a chunk-size line
	inData                      // a chunk's data
	inDataCR                    // the CR after a chunk's data
	inDataLF                    // the LF after it
	inTrailer                   // the trailer lines after the last chunk
	ended                       // the blank line after the trailer was read
)

// dechunker decodes a chunked body (RFC 9112 §7.1) in place: the body's
// raw bytes are read into the caller's buffer and the framing is squeezed
// out of them there, so that a chunk's data is read by one system call
// straight into the buffer that is parsed, and moved at most once, over
// its size line. net/http reads the same bytes into the connection's
// buffer, copies them through its chunked reader into the caller's, and
// reads each size line through a second buffered read. Owned by one
// goroutine.
type dechunker struct {
	state chunkState
	left  int64 // data bytes left in the current chunk
	// line holds a size or trailer line split across reads.
	line     []byte
	trailers int
}

// decode squeezes the framing out of p's raw bytes. It returns how many
// data bytes are now at p's start and, once the body has ended, how many
// bytes followed its end (a server that sends more than it framed).
func (d *dechunker) decode(p []byte) (data, extra int, err error) {
	i := 0
	for i < len(p) {
		switch d.state {
		case inData:
			k := int(min(d.left, int64(len(p)-i)))
			if data != i {
				copy(p[data:], p[i:i+k])
			}
			data, i, d.left = data+k, i+k, d.left-int64(k)
			if d.left == 0 {
				d.state = inDataCR
			}
		case inDataCR, inDataLF:
			want, next := byte('\r'), inDataLF
			if d.state == inDataLF {
				want, next = '\n', inSize
			}
			if p[i] != want {
				return data, 0, errChunkEnd
			}
			i++
			d.state = next
		case inSize, inTrailer:
			line, n, err := d.nextLine(p[i:])
			i += n
			if err != nil || line == nil {
				return data, 0, err
			}
			if err := d.endLine(line); err != nil {
				return data, 0, err
			}
		case ended:
			return data, len(p) - i, nil
		}
	}
	return data, 0, nil
}

// nextLine returns the line that ends in p (without its LF), joined to
// what an earlier read left of it, and how much of p it took; a nil line
// when p ends first.
func (d *dechunker) nextLine(p []byte) (line []byte, n int, err error) {
	j := bytes.IndexByte(p, '\n')
	if j < 0 {
		if len(d.line)+len(p) > maxLineBytes {
			return nil, len(p), errChunkLine
		}
		d.line = append(d.line, p...)
		return nil, len(p), nil
	}
	line = p[:j]
	if len(d.line) > 0 {
		if len(d.line)+j > maxLineBytes {
			return nil, j + 1, errChunkLine
		}
		line = append(d.line, line...)
		d.line = d.line[:0]
	}
	return line, j + 1, nil
}

// endLine acts on a complete size or trailer line.
func (d *dechunker) endLine(line []byte) error {
	line = bytes.TrimSuffix(line, []byte{'\r'})
	if d.state == inTrailer {
		switch {
		case len(line) == 0:
			d.state = ended
		case d.trailers == maxTrailerLines:
			return errChunkTrailer
		default:
			d.trailers++ // a trailer field: ignored
		}
		return nil
	}
	size, ok := chunkSize(line)
	switch {
	case !ok:
		return errChunkSize
	case size == 0:
		d.state = inTrailer
	default:
		d.state, d.left = inData, size
	}
	return nil
}

// chunkSize parses a chunk-size line: hex digits, then optional
// whitespace and ;extensions, which are ignored.
func chunkSize(line []byte) (int64, bool) {
	if i := bytes.IndexByte(line, ';'); i >= 0 {
		line = line[:i]
	}
	line = bytes.TrimRight(line, " \t")
	if len(line) == 0 || len(line) > 16 {
		return 0, false
	}
	var n uint64
	for _, c := range line {
		var v byte
		switch {
		case '0' <= c && c <= '9':
			v = c - '0'
		case 'a' <= c && c <= 'f':
			v = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			v = c - 'A' + 10
		default:
			return 0, false
		}
		n = n<<4 | uint64(v)
	}
	if n > math.MaxInt64 {
		return 0, false
	}
	return int64(n), true
}
