package tokenizer

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// A tokenizer.json is megabytes of vocabulary and merges; encoding/json
// takes about half a second over the Qwen2 file. These helpers walk the
// JSON text without building it, so that the big values can be read by
// hand and only the small ones go through encoding/json. They work on a
// string so that the tokens they return are substrings of it, not
// hundreds of thousands of small allocations.

// jsonError reports malformed JSON at a byte offset of the input.
func jsonError(off int, what string) error {
	return fmt.Errorf("invalid JSON at byte %d: %s", off, what)
}

func skipSpace(data string, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\n' || data[i] == '\t' || data[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the offset after the string that starts at data[i]
// (a '"'), and whether it has escapes.
func skipString(data string, i int) (end int, escaped bool, err error) {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '"':
			return j + 1, escaped, nil
		case '\\':
			escaped = true
			j++
		}
	}
	return 0, false, jsonError(i, "unterminated string")
}

// skipValue returns the offset after the value that starts at data[i].
func skipValue(data string, i int) (int, error) {
	if i >= len(data) {
		return 0, jsonError(i, "value expected")
	}
	switch data[i] {
	case '"':
		end, _, err := skipString(data, i)
		return end, err
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				end, _, err := skipString(data, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, jsonError(i, "unterminated object or array")
	}
	j := i
loop:
	for ; j < len(data); j++ {
		switch data[j] {
		case ' ', '\t', '\r', '\n', ',', ']', '}':
			break loop
		}
	}
	if j == i {
		return 0, jsonError(i, "value expected")
	}
	return j, nil
}

// jsonString decodes a JSON string literal, quotes included.
// Unescaped strings share raw's memory.
func jsonString(raw string, escaped bool) (string, error) {
	if !escaped {
		return raw[1 : len(raw)-1], nil
	}
	var s string
	err := json.Unmarshal([]byte(raw), &s)
	return s, err
}

// eachMember calls fn with each key and raw value of the object data holds.
func eachMember(data string, fn func(key string, val string) error) error {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return jsonError(i, "object expected")
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return nil
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return jsonError(i, "object key expected")
		}
		end, escaped, err := skipString(data, i)
		if err != nil {
			return err
		}
		key, err := jsonString(data[i:end], escaped)
		if err != nil {
			return jsonError(i, err.Error())
		}
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return jsonError(i, "':' expected")
		}
		i = skipSpace(data, i+1)
		end, err = skipValue(data, i)
		if err != nil {
			return err
		}
		if err := fn(key, data[i:end]); err != nil {
			return err
		}
		i = skipSpace(data, end)
		if i < len(data) && data[i] == '}' {
			return nil
		}
		if i >= len(data) || data[i] != ',' {
			return jsonError(i, "',' or '}' expected")
		}
		i = skipSpace(data, i+1)
	}
}

// eachElement calls fn with each raw element of the array data holds.
func eachElement(data string, fn func(elem string) error) error {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return jsonError(i, "array expected")
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return nil
	}
	for {
		end, err := skipValue(data, i)
		if err != nil {
			return err
		}
		if err := fn(data[i:end]); err != nil {
			return err
		}
		i = skipSpace(data, end)
		if i < len(data) && data[i] == ']' {
			return nil
		}
		if i >= len(data) || data[i] != ',' {
			return jsonError(i, "',' or ']' expected")
		}
		i = skipSpace(data, i+1)
	}
}

// parseVocab reads model.vocab, an object of token → id.
func parseVocab(raw string) (map[string]int, error) {
	vocab := make(map[string]int, strings.Count(raw, `":`))
	err := eachMember(raw, func(key string, val string) error {
		id, err := strconv.Atoi(val)
		if err != nil {
			return fmt.Errorf("token %q: id %s is not an integer", key, val)
		}
		vocab[key] = id
		return nil
	})
	return vocab, err
}

// parseMerges reads model.merges in either form: "a b" strings, or
// ["a", "b"] pairs (which allow spaces inside tokens).
func parseMerges(raw string) ([][2]string, error) {
	if raw == "" || raw == "null" {
		return nil, nil
	}
	var pairs [][2]string
	err := eachElement(raw, func(elem string) error {
		k := len(pairs)
		switch elem[0] {
		case '"':
			end, escaped, err := skipString(elem, 0)
			if err != nil {
				return err
			}
			line, err := jsonString(elem[:end], escaped)
			if err != nil {
				return fmt.Errorf("[%d]: %w", k, err)
			}
			a, b, ok := cutSpace(line)
			if !ok {
				return fmt.Errorf("[%d] %q: want two tokens separated by one space", k, line)
			}
			pairs = append(pairs, [2]string{a, b})
		case '[':
			var p []string
			if err := json.Unmarshal([]byte(elem), &p); err != nil || len(p) != 2 {
				return fmt.Errorf("[%d] %s: want a pair of strings", k, elem)
			}
			pairs = append(pairs, [2]string{p[0], p[1]})
		default:
			return fmt.Errorf("[%d] %s: want a string or a pair of strings", k, elem)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("model.merges: %w", err)
	}
	return pairs, nil
}

// cutSpace splits "a b" at its only space.
func cutSpace(line string) (a, b string, ok bool) {
	i := -1
	for k := 0; k < len(line); k++ {
		if line[k] == ' ' {
			if i >= 0 {
				return "", "", false
			}
			i = k
		}
	}
	if i <= 0 || i == len(line)-1 {
		return "", "", false
	}
	return line[:i], line[i+1:], true
}
