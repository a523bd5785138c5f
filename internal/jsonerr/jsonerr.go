// Package jsonerr makes encoding/json's errors read like sixpin's other
// input errors: a line and column, and the field at fault.
package jsonerr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// Message rewrites err as a field error where it can ("input_tokens: want
// int, got a JSON string"), without the "json: " prefix.
func Message(err error) string {
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) && ute.Field != "" {
		return fmt.Sprintf("%s: want %s, got a JSON %s", ute.Field, want(ute.Type), ute.Value)
	}
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return "unknown key " + rest
	}
	return strings.TrimPrefix(msg, "json: ")
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
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1)
	return line, max(col, 1), true
}
