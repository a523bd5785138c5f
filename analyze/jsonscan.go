package analyze

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
)

// A small JSON reader for the few fields analyze needs. opencode's part
// rows carry whole files and tool outputs; encoding/json validates and
// walks every byte of them, which was most of an analysis's time. This
// reader checks the structure (strings closed, brackets balanced, keys
// and separators where they belong) and skips what it does not need with
// a byte search, decoding only the values asked for.

var errJSON = errors.New("malformed JSON")

// ws skips whitespace from i.
func ws(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index after the string that opens at b[i] ('"').
func skipString(b []byte, i int) (int, error) {
	i++
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return 0, errJSON
		}
		end := i + j
		// The quote is escaped when an odd number of backslashes
		// precede it.
		bs := 0
		for k := end - 1; k >= i && b[k] == '\\'; k-- {
			bs++
		}
		if bs%2 == 0 {
			return end + 1, nil
		}
		i = end + 1
	}
}

// skipValue returns the index after the value that starts at or after i.
func skipValue(b []byte, i int) (int, error) {
	i = ws(b, i)
	if i >= len(b) {
		return 0, errJSON
	}
	switch c := b[i]; c {
	case '"':
		return skipString(b, i)
	case '{', '[':
		return skipContainer(b, i)
	default:
		// A number or a literal: up to the next delimiter.
		j := i
		for j < len(b) {
			switch b[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				goto done
			case '"', '{', '[', ':':
				return 0, errJSON
			}
			j++
		}
	done:
		if j == i {
			return 0, errJSON
		}
		return j, nil
	}
}

// skipContainer returns the index after the object or array that opens
// at b[i], checking that brackets match.
func skipContainer(b []byte, i int) (int, error) {
	var stack [64]byte
	depth := 0
	for i < len(b) {
		switch c := b[i]; c {
		case '"':
			j, err := skipString(b, i)
			if err != nil {
				return 0, err
			}
			i = j
			continue
		case '{', '[':
			if depth == len(stack) {
				return 0, errJSON
			}
			stack[depth] = c
			depth++
		case '}', ']':
			if depth == 0 || (c == '}') != (stack[depth-1] == '{') {
				return 0, errJSON
			}
			depth--
			if depth == 0 {
				return i + 1, nil
			}
		}
		i++
	}
	return 0, errJSON
}

// fields calls fn with each key and raw value of the object b. fn's
// slices alias b.
func fields(b []byte, fn func(key, val []byte) error) error {
	i := ws(b, 0)
	if i >= len(b) || b[i] != '{' {
		return errJSON
	}
	i = ws(b, i+1)
	if i < len(b) && b[i] == '}' {
		if ws(b, i+1) != len(b) {
			return errJSON
		}
		return nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return errJSON
		}
		end, err := skipString(b, i)
		if err != nil {
			return err
		}
		key := b[i+1 : end-1]
		i = ws(b, end)
		if i >= len(b) || b[i] != ':' {
			return errJSON
		}
		start := ws(b, i+1)
		end, err = skipValue(b, start)
		if err != nil {
			return err
		}
		if err := fn(key, b[start:end]); err != nil {
			return err
		}
		i = ws(b, end)
		if i >= len(b) {
			return errJSON
		}
		switch b[i] {
		case ',':
			i = ws(b, i+1)
		case '}':
			if ws(b, i+1) != len(b) {
				return errJSON
			}
			return nil
		default:
			return errJSON
		}
	}
}

// subfields is fields for a nested object value; a value that is not an
// object (null included) is skipped without error.
func subfields(val []byte, fn func(key, val []byte) error) error {
	if len(val) == 0 || val[0] != '{' {
		return nil
	}
	return fields(val, fn)
}

// number reads a JSON number; ok is false for anything else (null
// included).
func number(val []byte) (float64, bool) {
	if len(val) == 0 || !(val[0] == '-' || (val[0] >= '0' && val[0] <= '9')) {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(val), 64)
	return v, err == nil
}

// str reads a JSON string; ok is false for anything else.
func str(val []byte) (string, bool) {
	if len(val) < 2 || val[0] != '"' {
		return "", false
	}
	inner := val[1 : len(val)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner), true
	}
	var s string
	if json.Unmarshal(val, &s) != nil {
		return "", false
	}
	return s, true
}

// elements calls fn with each raw element of the array b. fn's slices
// alias b.
func elements(b []byte, fn func(elem []byte) error) error {
	i := ws(b, 0)
	if i >= len(b) || b[i] != '[' {
		return errJSON
	}
	i = ws(b, i+1)
	if i < len(b) && b[i] == ']' {
		if ws(b, i+1) != len(b) {
			return errJSON
		}
		return nil
	}
	for {
		start := ws(b, i)
		end, err := skipValue(b, start)
		if err != nil {
			return err
		}
		if err := fn(b[start:end]); err != nil {
			return err
		}
		i = ws(b, end)
		if i >= len(b) {
			return errJSON
		}
		switch b[i] {
		case ',':
			i++
		case ']':
			if ws(b, i+1) != len(b) {
				return errJSON
			}
			return nil
		default:
			return errJSON
		}
	}
}
