// Package strictyaml decodes YAML into Go structs strictly.
//
// A file must hold exactly one document, no unknown keys, every value of its field's type, and every
// error positioned at file:line:col with its field path
// ("pins.mix.classes[1].weight"). It keeps where each field came from, so
// that errors found later by validation can be positioned too.
package strictyaml

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/sixpin/sixpin/internal/clip"
	"github.com/sixpin/sixpin/internal/numfmt"
)

// Kind says what a document holds, for the errors about the whole file.
type Kind struct {
	// Noun names it: "scenario", "profile", "rules".
	Noun string
	// Keys lists some of its top-level keys, for messages such as "empty
	// file: want a scenario mapping (name, pins, ...)".
	Keys string
	// Many says what to do with more values than a file may hold
	// ("replay a trace instead"); "" says nothing.
	Many string
}

// mapping describes the mapping a document of kind k must be.
func (k Kind) mapping() string {
	if k.Keys == "" {
		return "a mapping"
	}
	return "a mapping (" + k.Keys + ")"
}

// Doc is a decoded document: where each field path sits in the YAML.
type Doc struct {
	file string
	tree tree
	d    *decoder
}

// Decode decodes data (read from file, used in positions) strictly into v,
// a pointer to a struct or a map, a document of kind. It returns the Doc
// and every decoding error, sorted by position; a syntax error or an
// empty document gives a nil Doc. A document that is not a mapping, or a
// mapping none of whose keys is a field of v (some other YAML file), is
// refused in one error that echoes none of its content. So is one with a
// list longer than MaxItems or more than MaxNodes values, before it is
// parsed (see measure), and one whose aliases expand past MaxNodes.
func Decode(file string, data []byte, v any, kind Kind) (*Doc, ErrorList) {
	return decodeAtMost(file, data, v, kind, MaxNodes)
}

// decodeAtMost is Decode with aliases expanded to at most limit values.
func decodeAtMost(file string, data []byte, v any, kind Kind, limit int) (*Doc, ErrorList) {
	if e := checkSize(file, data, kind); e != nil {
		return nil, ErrorList{e}
	}
	root, errs := parseYAML(file, data, kind)
	if errs != nil {
		return nil, errs
	}
	d := &decoder{file: file, tree: tree{}, kind: kind, limit: limit}
	if rv := reflect.ValueOf(v).Elem(); d.root(root, rv.Type()) {
		d.decode(root, rv, "", nil)
	} else {
		d.tree[""] = entry{val: root, res: root}
	}
	d.errs.Sort()
	return &Doc{file: file, tree: d.tree, d: d}, d.errs
}

// DecodeNode decodes n, a section of file kept as a yaml.Node by Decode,
// strictly into v (a pointer to a struct or a map), as Decode does: every
// error names file:line:col and the field path, path being the section's
// own ("sim"), so "sim.max_num_seqs: must be ≥ 1" reads as if the whole
// file had been decoded at once. The Doc places validation errors the same
// way.
func DecodeNode(file string, n *yaml.Node, v any, path string) (*Doc, ErrorList) {
	d := &decoder{file: file, tree: tree{}, limit: MaxNodes}
	d.decode(n, reflect.ValueOf(v).Elem(), path, nil)
	d.errs.Sort()
	return &Doc{file: file, tree: d.tree, d: d}, d.errs
}

// Has reports whether the YAML sets the field at path to a non-null value.
func (doc *Doc) Has(path string) bool { return doc.tree.has(path) }

// Place positions e at the deepest node on e.Field's path that the YAML
// has (a missing key: its nearest present parent), and returns e.
func (doc *Doc) Place(e *FieldError) *FieldError { return doc.tree.place(doc.file, e) }

// Node returns the YAML node (aliases resolved) of the field at path.
func (doc *Doc) Node(path string) (*yaml.Node, bool) {
	e, ok := doc.tree.lookup(path)
	return e.res, ok
}

// Failed reports whether decoding already failed at path or at a field
// that holds it, so validation need not report it again.
func (doc *Doc) Failed(path string) bool { return doc.d.failed(path) }

// yamlLine matches yaml.v3's syntax errors, which carry a line but no column.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parseYAML parses data as exactly one YAML document and returns its root.
func parseYAML(file string, data []byte, kind Kind) (*yaml.Node, ErrorList) {
	syntax := func(err error) ErrorList {
		return ErrorList{syntaxError(file, data, err)}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
		return nil, ErrorList{{File: file, Msg: "empty file: want a " + kind.Noun + " " + strings.TrimPrefix(kind.mapping(), "a ")}}
	} else if err != nil {
		return nil, syntax(err)
	}
	for {
		var extra yaml.Node
		err := dec.Decode(&extra)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, syntax(err)
		}
		if len(extra.Content) > 0 && !(IsNull(extra.Content[0]) && extra.Content[0].Value == "") {
			return nil, ErrorList{{File: file, Line: extra.Line, Col: extra.Column,
				Msg: "a second YAML document: a " + kind.Noun + " file holds exactly one"}}
		}
	}
	if len(doc.Content) == 0 || IsNull(doc.Content[0]) {
		return nil, ErrorList{{File: file, Line: doc.Line, Col: doc.Column, Msg: "empty document: want a " + kind.Noun + " " + strings.TrimPrefix(kind.mapping(), "a ")}}
	}
	return doc.Content[0], nil
}

// syntaxError positions a yaml.v3 syntax error. yaml.v3 reports the line
// where the enclosing construct began (often the line of "pins:") rather
// than the offending one, so syntaxError looks for the shortest prefix of
// the file, from that line on, that fails the same way, and reports its
// last line. Past maxSyntaxScan lines it keeps yaml.v3's line.
func syntaxError(file string, data []byte, err error) *FieldError {
	split := func(err error) (line int, msg string) {
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			line, _ = strconv.Atoi(m[1])
			return line, m[2]
		}
		return 0, strings.TrimPrefix(err.Error(), "yaml: ")
	}
	line, msg := split(err)
	lines := bytes.SplitAfter(data, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	if len(lines)-line <= maxSyntaxScan {
		for k := max(line, 1); k <= len(lines); k++ {
			if perr := parseAll(bytes.Join(lines[:k], nil)); perr != nil {
				if _, pmsg := split(perr); pmsg == msg {
					line = k
					break
				}
			}
		}
	}
	return &FieldError{File: file, Line: line, Msg: "invalid YAML: " + msg}
}

// maxSyntaxScan bounds the lines syntaxError re-parses.
const maxSyntaxScan = 2000

// parseAll parses every YAML document in data and returns the first error.
func parseAll(data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		if err := dec.Decode(&n); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
	}
}

// An entry is where one field path sits in the YAML tree.
type entry struct {
	key *yaml.Node // the mapping key; nil for sequence items and the root
	val *yaml.Node // the value as written (possibly an alias)
	res *yaml.Node // the value with aliases resolved
}

// where is the position to report for the field: a scalar value's own
// position, else its key's (a mapping's first line is its first child).
func (e entry) where() (line, col int) {
	if e.key != nil && (e.res.Kind != yaml.ScalarNode || IsNull(e.res)) {
		return e.key.Line, e.key.Column
	}
	return e.val.Line, e.val.Column
}

// tree maps every decoded field path ("" is the root) to its nodes.
type tree map[string]entry

// has reports whether the YAML sets the field at path to a non-null value.
func (t tree) has(path string) bool {
	e, ok := t.lookup(path)
	return ok && !IsNull(e.res)
}

// lookup returns the entry at path. Scalar items of a list are not in the
// map (a list of a million values would need a million keys): they are
// found through their list's node.
func (t tree) lookup(path string) (entry, bool) {
	if e, ok := t[path]; ok {
		return e, true
	}
	i := strings.LastIndexByte(path, '[')
	if i <= 0 || !strings.HasSuffix(path, "]") {
		return entry{}, false
	}
	e, ok := t.lookup(path[:i])
	k, err := strconv.Atoi(path[i+1 : len(path)-1])
	if !ok || err != nil || e.res.Kind != yaml.SequenceNode || k < 0 || k >= len(e.res.Content) {
		return entry{}, false
	}
	item := e.res.Content[k]
	return entry{val: item, res: resolve(item)}, true
}

// place fills e's File, Line and Col from the deepest node on e.Field's
// path that exists in the tree, and returns e.
func (t tree) place(file string, e *FieldError) *FieldError {
	e.File = file
	for p := e.Field; ; p = parentPath(p) {
		if n, ok := t.lookup(p); ok {
			e.Line, e.Col = n.where()
			return e
		}
		if p == "" {
			return e
		}
	}
}

// parentPath returns the path of the field or item that holds path.
func parentPath(path string) string {
	i := strings.LastIndexAny(path, ".[")
	if i < 0 {
		return ""
	}
	return path[:i]
}

// join appends a mapping key to a field path.
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// Shorthander is implemented by types whose YAML form may also be a single
// scalar (a distribution given as a bare number; a window given as "auto").
// Shorthand decodes the scalar n into the receiver and returns an error
// message, or "". YAMLWant describes the accepted forms for messages.
type Shorthander interface {
	Shorthand(n *yaml.Node) (msg string)
	YAMLWant() string
}

// Durationer marks an int64-based type that reads from YAML as a Go
// duration string, as time.Duration does.
type Durationer interface {
	YAMLDuration()
}

var (
	stdDurationType = reflect.TypeFor[time.Duration]()
	durationerType  = reflect.TypeFor[Durationer]()
	nodeType        = reflect.TypeFor[yaml.Node]()
)

// decoder walks a yaml.Node tree against Go types by reflection, strictly,
// collecting every error and recording where each field came from.
type decoder struct {
	file       string
	kind       Kind
	errs       ErrorList
	tree       tree
	rootFailed bool // the document is not a mapping: nothing else to say
	// nodes counts the values decoded, an alias's each time it is used:
	// past limit (MaxNodes), decoding stops.
	nodes, limit int
}

func (d *decoder) fail(n *yaml.Node, field, format string, args ...any) {
	d.errs = append(d.errs, &FieldError{File: d.file, Line: n.Line, Col: n.Column,
		Field: field, Msg: fmt.Sprintf(format, args...)})
}

// failed reports whether decoding already failed at path or at a field
// that holds it, so validation need not report it again.
func (d *decoder) failed(path string) bool {
	if d.rootFailed {
		return true
	}
	for _, e := range d.errs {
		if path == e.Field || strings.HasPrefix(path, e.Field+".") || strings.HasPrefix(path, e.Field+"[") {
			return true
		}
	}
	return false
}

// decode decodes n into v (addressable) at field path; key is n's mapping
// key, if any. It records the field in the tree and leaves v zero for null.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string, key *yaml.Node) {
	if d.nodes++; d.nodes > d.limit {
		if d.nodes == d.limit+1 {
			d.fail(n, path, "more than %s values in all, aliases expanded as often as they are used", numfmt.Thousands(float64(d.limit)))
		}
		return
	}
	// Aliases cannot loop here: the Go types are not recursive, so a
	// self-referencing alias ends in a type error.
	e := entry{key: key, val: n, res: resolve(n)}
	if key != nil || e.res.Kind != yaml.ScalarNode || path == "" {
		d.tree[path] = e // a scalar list item is found through its list
	}
	if !IsNull(e.res) {
		d.value(e, v, path)
	}
}

// value decodes the non-null node of e into v by v's type.
func (d *decoder) value(e entry, v reflect.Value, path string) {
	n, t := e.res, v.Type()
	if t == nodeType {
		// A section another package decodes (see DecodeNode), kept as
		// written with its positions.
		v.Set(reflect.ValueOf(*n))
		return
	}
	if t == stdDurationType || t.Implements(durationerType) {
		d.duration(n, v, path)
		return
	}
	if sh, ok := v.Addr().Interface().(Shorthander); ok && n.Kind == yaml.ScalarNode {
		if msg := sh.Shorthand(n); msg != "" {
			d.fail(n, path, "%s", msg)
		}
		return
	}

	switch t.Kind() {
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		d.value(e, p.Elem(), path)
		v.Set(p)
	case reflect.Struct:
		d.mapping(n, v, path)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			d.fail(n, path, "must be a list (got %s)", Got(n))
			return
		}
		s := reflect.MakeSlice(t, len(n.Content), len(n.Content))
		for i, item := range n.Content {
			if d.nodes > d.limit {
				break
			}
			d.decode(item, s.Index(i), fmt.Sprintf("%s[%d]", path, i), nil)
		}
		v.Set(s)
	case reflect.Map:
		d.dict(n, v, path)
	case reflect.Interface:
		var x any
		if err := n.Decode(&x); err != nil {
			d.fail(n, path, "%v", err)
			return
		}
		if x != nil {
			v.Set(reflect.ValueOf(x))
		}
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Float32, reflect.Float64:
		d.scalar(n, v, path)
	default:
		panic(fmt.Sprintf("strictyaml: no YAML decoding for %s at %q", t, path))
	}
}

// field is one YAML-visible struct field.
type field struct {
	key   string
	index int
}

// yamlFields lists t's fields that have a yaml key, in declaration order.
func yamlFields(t reflect.Type) []field {
	var fs []field
	for i := range t.NumField() {
		f := t.Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || key == "" || key == "-" {
			continue
		}
		fs = append(fs, field{key, i})
	}
	return fs
}

// mapping decodes a mapping node into struct v. Explicit keys win over
// merged ones (<<: *anchor), and earlier merge sources over later ones.
func (d *decoder) mapping(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		want := "a mapping"
		if sh, ok := v.Addr().Interface().(Shorthander); ok {
			want = sh.YAMLWant()
		}
		d.fail(n, path, "must be %s (got %s)", want, Got(n))
		return
	}
	fields := yamlFields(v.Type())
	seen := map[string]*yaml.Node{}
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merges = append(merges, val)
			continue
		}
		d.pair(k, val, v, path, fields, seen, true)
	}
	for _, m := range merges {
		srcs := []*yaml.Node{m}
		if r := resolve(m); r.Kind == yaml.SequenceNode {
			srcs = r.Content
		}
		for _, src := range srcs {
			src = resolve(src)
			if src.Kind != yaml.MappingNode {
				d.fail(src, path, "<< must merge a mapping (got %s)", Got(src))
				continue
			}
			for i := 0; i+1 < len(src.Content); i += 2 {
				d.pair(src.Content[i], src.Content[i+1], v, path, fields, seen, false)
			}
		}
	}
}

// root checks that the document's root n is a mapping with at least one
// key of t's (a struct) or close to one, and reports whether it is. A
// root that is not is some other file: it is refused in one error that
// echoes nothing of it.
func (d *decoder) root(n *yaml.Node, t reflect.Type) bool {
	if n.Kind != yaml.MappingNode {
		d.rootFailed = true
		d.fail(n, "", "not a %s file: want %s, got %s", d.kind.Noun, d.kind.mapping(), kindOf(n))
		return false
	}
	if t.Kind() != reflect.Struct || len(n.Content) == 0 {
		return true
	}
	fields := yamlFields(t)
	keys := make([]string, len(fields))
	for i, f := range fields {
		keys[i] = f.key
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if k.Kind != yaml.ScalarNode || k.ShortTag() == "!!merge" || slices.Contains(keys, k.Value) || Suggest(k.Value, keys) != "" {
			return true
		}
	}
	d.rootFailed = true
	want := d.kind.Keys
	if want == "" {
		want = strings.Join(keys, ", ")
	}
	d.fail(n, "", "not a %s file: none of its keys is a %s key (want %s)", d.kind.Noun, d.kind.Noun, want)
	return false
}

// kindOf names a node's kind without its content.
func kindOf(n *yaml.Node) string {
	if n.Kind != yaml.ScalarNode {
		return Got(n)
	}
	switch n.ShortTag() {
	case "!!int", "!!float":
		return "a number"
	case "!!bool":
		return "true or false"
	}
	return "a string"
}

// pair decodes one key: value of a mapping into struct v. seen holds the
// keys already decoded; explicit is false for keys brought in by a merge,
// which yield silently to keys already seen.
func (d *decoder) pair(k, val *yaml.Node, v reflect.Value, path string, fields []field, seen map[string]*yaml.Node, explicit bool) {
	if k.Kind != yaml.ScalarNode {
		d.fail(k, path, "keys must be strings (got %s)", Got(k))
		return
	}
	fp := join(path, k.Value)
	if first, dup := seen[k.Value]; dup {
		if explicit {
			d.fail(k, fp, "duplicate key (first at line %d)", first.Line)
		}
		return
	}
	seen[k.Value] = k
	for _, f := range fields {
		if f.key == k.Value {
			d.decode(val, v.Field(f.index), fp, k)
			return
		}
	}
	keys := make([]string, len(fields))
	for i, f := range fields {
		keys[i] = f.key
	}
	if s := Suggest(k.Value, keys); s != "" {
		d.fail(k, fp, "unknown field (did you mean %q?)", s)
	} else {
		d.fail(k, fp, "unknown field (want one of %s)", strings.Join(keys, ", "))
	}
}

// dict decodes a mapping node into a map with string keys.
func (d *decoder) dict(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.fail(n, path, "must be a mapping (got %s)", Got(n))
		return
	}
	if v.Type().Key().Kind() != reflect.String {
		panic(fmt.Sprintf("strictyaml: map keys of %s at %q must be strings", v.Type(), path))
	}
	out := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.fail(k, path, "keys must be strings (got %s)", Got(k))
			continue
		}
		fp := join(path, k.Value)
		if first, dup := seen[k.Value]; dup {
			d.fail(k, fp, "duplicate key (first at line %d)", first.Line)
			continue
		}
		seen[k.Value] = k
		elem := reflect.New(v.Type().Elem()).Elem()
		d.decode(val, elem, fp, k)
		out.SetMapIndex(reflect.ValueOf(k.Value).Convert(v.Type().Key()), elem)
	}
	v.Set(out)
}

// scalar decodes a scalar node into a string, bool, integer or float v.
func (d *decoder) scalar(n *yaml.Node, v reflect.Value, path string) {
	var want string
	switch v.Kind() {
	case reflect.String:
		want = "a string"
	case reflect.Bool:
		want = "true or false"
	case reflect.Float32, reflect.Float64:
		want = "a number"
	default:
		want = "an integer"
	}
	if n.Kind != yaml.ScalarNode {
		d.fail(n, path, "must be %s (got %s)", want, Got(n))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(n.Value) // any scalar reads as its text, as in yaml.v3
	case reflect.Bool:
		var b bool
		if n.ShortTag() != "!!bool" || n.Decode(&b) != nil {
			d.fail(n, path, "must be %s (got %s)", want, Got(n))
			return
		}
		v.SetBool(b)
	case reflect.Float32, reflect.Float64:
		f, ok := Number(n)
		if !ok || v.OverflowFloat(f) {
			d.fail(n, path, "must be %s (got %s)", want, Got(n))
			return
		}
		v.SetFloat(f)
	default: // integers
		f, ok := Number(n)
		if !ok || f != math.Trunc(f) {
			d.fail(n, path, "must be %s (got %s)", want, Got(n))
			return
		}
		var i int64
		if n.ShortTag() == "!!int" {
			if n.Decode(&i) != nil {
				d.fail(n, path, "out of range (got %s)", Got(n))
				return
			}
		} else if f < math.MinInt64 || f >= math.MaxInt64 {
			d.fail(n, path, "out of range (got %s)", Got(n))
			return
		} else {
			i = int64(f) // an integral float such as 1e3
		}
		if v.OverflowInt(i) {
			d.fail(n, path, "out of range (got %s)", Got(n))
			return
		}
		v.SetInt(i)
	}
}

// duration decodes a Go duration string into a Duration or time.Duration.
// A bare number is an error (in what unit?), except 0.
func (d *decoder) duration(n *yaml.Node, v reflect.Value, path string) {
	like := `must be a duration like "30s" or "5m" (got %s)`
	bare := `must be a duration with a unit, e.g. "%[1]ss" or "%[1]sm" (got bare number %[1]s)`
	if n.Kind != yaml.ScalarNode {
		d.fail(n, path, like, Got(n))
		return
	}
	switch n.ShortTag() {
	case "!!int", "!!float":
		if f, ok := Number(n); ok && f == 0 {
			v.SetInt(0)
			return
		}
		d.fail(n, path, bare, n.Value)
	case "!!str":
		dur, err := time.ParseDuration(n.Value)
		if err != nil {
			if _, perr := strconv.ParseFloat(n.Value, 64); perr == nil {
				d.fail(n, path, bare, n.Value)
			} else {
				d.fail(n, path, like, Got(n))
			}
			return
		}
		v.SetInt(int64(dur))
	default:
		d.fail(n, path, like, Got(n))
	}
}

// Number returns a scalar's value if it is a finite YAML int or float.
func Number(n *yaml.Node) (float64, bool) {
	if n.Kind != yaml.ScalarNode {
		return 0, false
	}
	switch n.ShortTag() {
	case "!!int", "!!float":
	default:
		return 0, false
	}
	var f float64
	if plainDecimal(n.Value) {
		var err error
		f, err = strconv.ParseFloat(n.Value, 64) // what yaml.v3 does, without a decoder per value
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return 0, false
		}
	} else if err := n.Decode(&f); err != nil {
		return 0, false
	}
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// plainDecimal reports whether s is written with digits, a sign, a point
// and an exponent only (no 0x, 0o, .inf or underscores).
func plainDecimal(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c == '+', c == '-', c == '.', c == 'e', c == 'E':
		default:
			return false
		}
	}
	return true
}

// resolve follows an alias to its anchored node.
func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// IsNull reports whether n is a YAML null (including an empty value).
func IsNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// Got describes a node for "(got ...)" in messages.
func Got(n *yaml.Node) string {
	switch n.Kind {
	case yaml.ScalarNode:
		return clip.Quote(n.Value)
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	return "nothing"
}

// Suggest returns the candidate closest to key by edit distance, ignoring
// case, or "" when none is close enough to be a likely typo.
func Suggest(key string, candidates []string) string {
	best, bestD := "", math.MaxInt
	lk := strings.ToLower(key)
	for _, c := range candidates {
		if dist := editDistance(lk, strings.ToLower(c)); dist < bestD {
			best, bestD = c, dist
		}
	}
	if bestD <= max(1, len([]rune(key))/3) && bestD < len([]rune(best)) {
		return best
	}
	return ""
}

// editDistance is the optimal-string-alignment distance between a and b,
// in runes: insertions, deletions, substitutions and adjacent
// transpositions ("modle" → "model") cost 1 each.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// FieldByKey returns the field of struct v (through pointers) whose yaml
// key is key.
func FieldByKey(v reflect.Value, key string) (reflect.Value, bool) {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return reflect.Value{}, false
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return reflect.Value{}, false
	}
	for _, f := range yamlFields(v.Type()) {
		if f.key == key {
			return v.Field(f.index), true
		}
	}
	return reflect.Value{}, false
}
