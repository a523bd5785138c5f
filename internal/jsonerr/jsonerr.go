// Package jsonerr makes encoding/json's errors read like sixpin's other
// input errors: a line and column, and the field at fault.
package jsonerr

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// Message rewrites err as a field error where it can ("input_tokens: want
// int, got a JSON string"), without the "json: " prefix.
func Message(err error) string {
	if field, msg := Describe(err); field != "" {
		return field + ": " + msg
	} else {
		return msg
	}
}

// Describe splits err, an encoding/json decoding error, into the field
// at fault ("windows.steady.requests"; "" when the error names none) and
// a message without the "json: " prefix: "want int, got a JSON string",
// "unknown key", "invalid character ',' looking for beginning of value".
func Describe(err error) (field, msg string) {
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) && ute.Field != "" {
		return ute.Field, fmt.Sprintf("want %s, got a JSON %s", want(ute.Type), ute.Value)
	}
	msg = err.Error()
	if rest, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		if key, err := strconv.Unquote(rest); err == nil {
			return key, "unknown key"
		}
		return "", "unknown key " + rest
	}
	return "", strings.TrimPrefix(msg, "json: ")
}

// want names the JSON a Go type decodes from: an object or an array for
// composites (their Go types mean nothing to a user), else the type.
func want(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Map, reflect.Struct:
		return "a JSON object"
	case reflect.Slice, reflect.Array:
		return "a JSON array"
	}
	return t.String()
}

// Position returns the 1-based line and column in data where err, a
// syntax or type error from decoding data, was found; ok is false for
// errors that carry no offset.
func Position(data []byte, err error) (line, col int, ok bool) {
	var off int64
	var se *json.SyntaxError
	var ute *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &ute):
		off = ute.Offset
	default:
		return 0, 0, false
	}
	// encoding/json's offsets count the bytes read, the culprit included.
	line, col = LineCol(data, int(off)-1)
	return line, col, true
}

// LineCol returns the 1-based line and column (in bytes) of the byte at
// offset off in data.
func LineCol(data []byte, off int) (line, col int) {
	off = min(max(off, 0), len(data))
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = off - bytes.LastIndexByte(before, '\n')
	return line, col
}

// Find returns the offset in data, a JSON document, of the value at path:
// object keys, and decimal indices for array items ("windows", "steady",
// "requests"; "runs", "0"). When the path is not all there, found is
// false and off is where the deepest part of it that is begins (0 for
// none). Find reads only as far as it must and never fails on what
// follows.
func Find(data []byte, path ...string) (off int, found bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	at := skip(data, 0)
	for _, seg := range path {
		tok, err := dec.Token()
		if err != nil {
			return at, false
		}
		next, ok := -1, false
		switch tok {
		case json.Delim('{'):
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return at, false
				}
				if k == seg {
					next, ok = skip(data, int(dec.InputOffset())), true
					break
				}
				var v json.RawMessage
				if dec.Decode(&v) != nil {
					return at, false
				}
			}
		case json.Delim('['):
			want, err := strconv.Atoi(seg)
			if err != nil {
				return at, false
			}
			for i := 0; dec.More(); i++ {
				if i == want {
					next, ok = skip(data, int(dec.InputOffset())), true
					break
				}
				var v json.RawMessage
				if dec.Decode(&v) != nil {
					return at, false
				}
			}
		}
		if !ok {
			return at, false
		}
		at = next
	}
	return at, true
}

// skip returns the offset of the first byte at or after off that is not
// white space or a separator (':' after a key, ',' between items).
func skip(data []byte, off int) int {
	for off < len(data) {
		switch data[off] {
		case ' ', '\t', '\r', '\n', ':', ',':
			off++
			continue
		}
		break
	}
	return off
}

// Locate returns the path (object keys, and decimal indices of array
// items, as Find takes them) of the deepest value in data that does not
// decode into its part of t, the Go type data was decoded into: where an
// error that carries no offset came from (a time.Time's own parse error,
// say). It returns nil when no part of data fails on its own.
func Locate(data []byte, t reflect.Type) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if leaf(t) {
		return nil
	}
	fails := func(raw json.RawMessage, t reflect.Type) bool {
		return json.Unmarshal(raw, reflect.New(t).Interface()) != nil
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		var obj map[string]json.RawMessage
		if json.Unmarshal(data, &obj) != nil {
			return nil
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			et := t
			if t.Kind() == reflect.Map {
				et = t.Elem()
			} else if f, ok := jsonField(t, k); ok {
				et = f.Type
			} else {
				continue // an unknown key decodes into nothing
			}
			if fails(obj[k], et) {
				return append([]string{k}, Locate(obj[k], et)...)
			}
		}
	case reflect.Slice, reflect.Array:
		var items []json.RawMessage
		if json.Unmarshal(data, &items) != nil {
			return nil
		}
		for i, raw := range items {
			if fails(raw, t.Elem()) {
				return append([]string{strconv.Itoa(i)}, Locate(raw, t.Elem())...)
			}
		}
	}
	return nil
}

// leaf reports whether t decodes itself (json.Unmarshaler or
// encoding.TextUnmarshaler) or is not a composite: nothing inside it to
// locate.
func leaf(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	if p.Implements(reflect.TypeFor[json.Unmarshaler]()) || p.Implements(reflect.TypeFor[encoding.TextUnmarshaler]()) {
		return true
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map, reflect.Slice, reflect.Array:
		return false
	}
	return true
}

// jsonField returns the field of struct t that encoding/json decodes key
// into: its json tag name (or Go name) matched exactly, else without
// regard to case.
func jsonField(t reflect.Type, key string) (reflect.StructField, bool) {
	var fold reflect.StructField
	found := false
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		if name == key {
			return f, true
		}
		if !found && strings.EqualFold(name, key) {
			fold, found = f, true
		}
	}
	return fold, found
}

// Path formats a Find path as a field name: "windows.steady.requests",
// "runs[1].schema".
func Path(path []string) string {
	var b strings.Builder
	for _, p := range path {
		if _, err := strconv.Atoi(p); err == nil && b.Len() > 0 {
			b.WriteString("[" + p + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}
