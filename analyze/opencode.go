package analyze

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // database/sql driver "sqlite": pure Go, no cgo
)

// opencode's storage, as its source defines it (anomalyco/opencode, formerly
// sst/opencode): packages/opencode/src/session/session.sql.ts declares the
// drizzle tables
//
//	session (id, project_id, parent_id, ..., time_created, time_updated)
//	message (id, session_id, time_created, time_updated, data)   -- data: JSON
//	part    (id, message_id, session_id, time_created, time_updated, data)
//
// with indexes message_session_time_created_id_idx (session_id,
// time_created, id) and part_message_id_id_idx (message_id, id) (older
// databases: message_session_idx, part_message_idx). message.data is
// MessageV2.Info without id and sessionID, part.data is MessageV2.Part
// without id, sessionID and messageID (session/message-v2.ts):
//
//	assistant: {"role":"assistant","time":{"created":ms,"completed":ms?},
//	  "parentID","providerID","modelID","finish"?,"error"?,"cost",
//	  "tokens":{"input","output","reasoning","cache":{"read","write"}}}
//	text, reasoning: {"type":"text"|"reasoning","text",
//	  "time":{"start":ms,"end":ms?}}
//	tool: {"type":"tool","callID","tool","state":{"status":
//	  "pending"|"running"|"completed"|"error","time":{"start":ms,"end":ms}}}
//
// Times are Unix milliseconds. opencode's getUsage (session/index.ts)
// stores tokens.input without the cache reads and writes and
// tokens.output without the reasoning tokens, so the whole prompt is
// input + cache.read + cache.write and everything generated is output +
// reasoning. storage/db.ts opens the file in WAL mode at
// $XDG_DATA_HOME/opencode/opencode.db.
//
// OpenCode 2 (anomalyco/opencode#41217) keeps those tables, frozen, and
// writes new messages to session_message in the same file (see parseV2).
// An upgraded database holds both layouts, and may hold an old message
// in both, under its own id or a new one: analyze reads both and counts
// each message once (see acc.dedupe).

// DBError is a database that cannot be read as opencode's: missing,
// locked, corrupt or of another program. Its message is one line that
// names the file.
type DBError struct {
	Path string
	Err  error
}

func (e *DBError) Error() string { return fmt.Sprintf("opencode database %s: %v", e.Path, e.Err) }
func (e *DBError) Unwrap() error { return e.Err }

// DefaultDB is where opencode keeps its database: $XDG_DATA_HOME/opencode/
// opencode.db, else ~/.local/share/opencode/opencode.db. getenv is
// os.Getenv or a stand-in.
func DefaultDB(getenv func(string) string) string {
	if d := getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "opencode", "opencode.db")
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".local", "share", "opencode", "opencode.db")
}

// stamp is what tells whether a file changed: size and modification time.
type stamp struct {
	size, mtimeNS int64
}

func stampOf(path string) (stamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return stamp{}, err
	}
	return stamp{fi.Size(), fi.ModTime().UnixNano()}, nil
}

// Read modes.
const (
	// modeImmutable reads the file as a snapshot that cannot change: no
	// locks, no -wal or -shm files. Used for a WAL-mode database whose
	// -wal file does not exist (every commit is in the main file and no
	// writer is open), and verified afterwards (see source.changed).
	modeImmutable = "immutable"
	// modeReadOnly reads through SQLite's locks and the -wal file, so a
	// running opencode's committed data is seen.
	modeReadOnly = "read-only"
)

// source is one opencode database opened read-only.
type source struct {
	path   string
	db     *sql.DB
	mode   string
	before stamp
	// v1 and v2 tell which layouts the database holds.
	v1, v2 bool
	// rows counts the message rows read per layout.
	rows [3]int
}

// openSource opens path read-only: immutable when that is safe (see
// modeImmutable) unless forceRO, else read-only, waiting up to busy for
// another program's lock. Nothing is ever written
// to the database; in read-only mode SQLite may create the -shm file of a
// WAL database if it is missing.
func openSource(ctx context.Context, path string, forceRO bool, busy time.Duration) (*source, error) {
	fail := func(err error) (*source, error) { return nil, &DBError{Path: path, Err: err} }
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fail(errors.New("no such file (give its path with --db)"))
	case err != nil:
		return fail(err)
	case fi.IsDir():
		return fail(errors.New("is a directory, not a database file"))
	}
	f, err := os.Open(path)
	if err != nil {
		return fail(err)
	}
	header := make([]byte, 100)
	n, err := io.ReadFull(f, header)
	f.Close()
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return fail(err)
	}
	if n < len(header) || !bytes.HasPrefix(header, []byte("SQLite format 3\x00")) {
		return fail(errors.New("not a SQLite database"))
	}
	wal := header[18] == 2 && header[19] == 2
	_, walErr := os.Stat(path + "-wal")
	mode := modeReadOnly
	if wal && errors.Is(walErr, os.ErrNotExist) && !forceRO {
		mode = modeImmutable
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fail(err)
	}
	q := url.Values{}
	q.Set("mode", "ro")
	if mode == modeImmutable {
		q.Set("immutable", "1")
	}
	q.Add("_pragma", "query_only(1)")
	// Read pages through a memory map rather than a read call each.
	q.Add("_pragma", "mmap_size(1073741824)")
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busy.Milliseconds()))
	dsn := (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: q.Encode()}).String()
	before := stamp{fi.Size(), fi.ModTime().UnixNano()}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return fail(err)
	}
	s := &source{path: path, db: db, mode: mode, before: before}
	if err := s.checkSchema(ctx); err != nil {
		db.Close()
		return fail(err)
	}
	return s, nil
}

// Layouts: where a database keeps its messages.
const (
	// layoutV1 is opencode 1's message and part tables (frozen, not
	// dropped, in OpenCode 2).
	layoutV1 = 1
	// layoutV2 is OpenCode 2's session_message table: one row per
	// message, its parts inline.
	layoutV2 = 2
)

// tables are the tables of each layout with the columns read.
var tables = []struct {
	layout  int
	name    string
	columns []string
}{
	{layoutV1, "message", []string{"id", "session_id", "time_created", "time_updated", "data"}},
	{layoutV1, "part", []string{"id", "message_id", "data"}},
	{layoutV2, "session_message", []string{"id", "session_id", "type", "time_created", "time_updated", "data"}},
}

// checkSchema finds the layouts s holds: v1 when it has the message and
// part tables, v2 when it has session_message. A table of a layout with
// a column missing, or a database with neither layout, is an error.
func (s *source) checkSchema(ctx context.Context) error {
	found := map[int]int{}
	for _, tb := range tables {
		rows, err := s.db.QueryContext(ctx, "SELECT name FROM pragma_table_info(?)", tb.name)
		if err != nil {
			return sqliteErr(err)
		}
		have := map[string]bool{}
		for rows.Next() {
			var name string
			if err := rows.Scan(&name); err != nil {
				rows.Close()
				return sqliteErr(err)
			}
			have[name] = true
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return sqliteErr(err)
		}
		if len(have) == 0 {
			continue
		}
		for _, c := range tb.columns {
			if !have[c] {
				return fmt.Errorf("not an opencode database (table %q has no column %q)", tb.name, c)
			}
		}
		found[tb.layout]++
	}
	s.v1, s.v2 = found[layoutV1] == 2, found[layoutV2] == 1
	switch {
	case found[layoutV1] == 1 && !s.v2:
		return errors.New(`not an opencode database (table "message" without "part", or "part" without "message")`)
	case !s.v1 && !s.v2:
		return errors.New(`not an opencode database (no table "message" or "session_message")`)
	}
	return nil
}

// changed reports whether the file changed while it was read: an
// immutable read must then be redone in read-only mode. (A writer that
// opened the database meanwhile and only appended to a new -wal file
// leaves the main file as it was: the snapshot read stays consistent,
// and what it missed came after it.)
func (s *source) changed() bool {
	now, err := stampOf(s.path)
	return err != nil || now != s.before
}

func (s *source) close() error { return s.db.Close() }

// sqliteErr shortens SQLite's error texts to one line.
func sqliteErr(err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "SQLITE_BUSY"), strings.Contains(msg, "database is locked"):
		return errors.New("database is locked (another program holds it; try again, or read a copy)")
	case strings.Contains(msg, "SQLITE_NOTADB"), strings.Contains(msg, "file is not a database"):
		return errors.New("not a SQLite database (corrupt or encrypted)")
	case strings.Contains(msg, "SQLITE_CORRUPT"), strings.Contains(msg, "malformed"):
		return errors.New("database disk image is malformed (corrupt)")
	case strings.Contains(msg, "SQLITE_CANTOPEN"), strings.Contains(msg, "unable to open"):
		return fmt.Errorf("cannot open: %s", firstLine(msg))
	case strings.Contains(msg, "SQLITE_READONLY"):
		return fmt.Errorf("cannot be read without writing it (a hot journal needs recovery: open it in opencode or sqlite3 once): %s", firstLine(msg))
	}
	return errors.New(firstLine(msg))
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// row is one message row with what its parts say.
type row struct {
	id, session string
	created     int64 // the row's time_created, ms
	updated     int64
	layout      int
	// typ is a session_message row's type (v2).
	typ  string
	data []byte // the row's data (owned)
	// parts is what a v1 message's part rows say (v2 rows carry theirs
	// in data).
	parts parts
}

// parts is what a message's parts say about its timing.
type parts struct {
	n int
	// malformed counts parts whose data is not a JSON object with a
	// type: they are ignored.
	malformed int
	// tools counts tool parts that started; toolStart is the earliest
	// state.time.start among them.
	tools     int
	toolStart int64
	// texts counts text and reasoning parts with a time.start;
	// firstStart is the earliest, lastEnd the latest time.end.
	texts      int
	firstStart int64
	lastEnd    int64
}

// part is what one part's JSON says that analyze reads.
type part struct {
	typ                   string
	start, end, toolStart float64
	hasStart, hasEnd      bool
	hasToolStart          bool
}

// parsePart reads a part's type, time.start, time.end and (tool parts)
// state.time.start.
func parsePart(b []byte) (part, error) {
	var p part
	err := fields(b, func(key, val []byte) error {
		switch string(key) {
		case "type":
			p.typ, _ = str(val)
		case "time":
			return subfields(val, func(k, v []byte) error {
				switch string(k) {
				case "start":
					p.start, p.hasStart = number(v)
				case "end":
					p.end, p.hasEnd = number(v)
				}
				return nil
			})
		case "state":
			return subfields(val, func(k, v []byte) error {
				if string(k) == "time" {
					return subfields(v, func(k, v []byte) error {
						if string(k) == "start" {
							p.toolStart, p.hasToolStart = number(v)
						}
						return nil
					})
				}
				return nil
			})
		}
		return nil
	})
	if err == nil && p.typ == "" {
		err = errJSON
	}
	return p, err
}

func (p *parts) add(data []byte) {
	p.n++
	d, err := parsePart(data)
	if err != nil {
		p.malformed++
		return
	}
	switch d.typ {
	case "tool":
		if d.hasToolStart {
			if t, ok := ms(d.toolStart); ok {
				if p.tools == 0 || t < p.toolStart {
					p.toolStart = t
				}
				p.tools++
			}
		}
	case "text", "reasoning":
		if !d.hasStart {
			return
		}
		if t, ok := ms(d.start); ok {
			if p.texts == 0 || t < p.firstStart {
				p.firstStart = t
			}
			p.texts++
		}
		if d.hasEnd {
			if t, ok := ms(d.end); ok && t > p.lastEnd {
				p.lastEnd = t
			}
		}
	}
}

// ms converts a JSON time to whole milliseconds, truncating a fraction
// as the reference does (throughput.py's int(), grapeot/opencode_skill@
// 73e353aa351ae3fa82b678d2de8d4080ac77506b: 199.5 ms is 199 ms, under
// the 0.2 s bound); false for values no clock gives (negative, NaN,
// beyond year 9999).
func ms(v float64) (int64, bool) {
	if math.IsNaN(v) || v < 0 || v > 253402300799999 {
		return 0, false
	}
	return int64(v), true
}

// Queries. Messages and their parts come in the same order, (session,
// time created, message id), from one read transaction, so one pass over
// each meets a message's parts right after the message. CROSS JOIN keeps
// SQLite's nested loop in that order (messages by their index, then each
// message's parts by theirs): no sort, nothing held in temporary
// storage. OpenCode 2's session_message rows carry their parts; its
// index session_message_session_time_created_id_idx gives the same order.
const (
	messageQuery = `SELECT id, session_id, time_created, time_updated, data FROM message
WHERE time_created >= ? AND time_created < ?
ORDER BY session_id, time_created, id`
	partQuery = `SELECT p.message_id, p.data FROM message m CROSS JOIN part p ON p.message_id = m.id
WHERE m.time_created >= ? AND m.time_created < ?
ORDER BY m.session_id, m.time_created, m.id`
	messageV2Query = `SELECT id, session_id, time_created, time_updated, type, data FROM session_message
WHERE time_created >= ? AND time_created < ?
ORDER BY session_id, time_created, id`
)

// cursor walks one layout of one source: v1 messages with their parts,
// or v2 session_message rows.
type cursor struct {
	src    *source
	layout int
	msgs   *sql.Rows
	parts  *sql.Rows
	// the part row read ahead, if any
	partMsg  string
	partData sql.RawBytes
	partOK   bool
	cur      row
	done     bool
}

// window widens the time filter pushed into SQL: message.time_created
// is when the row was written, a moment after data.time.created, which
// is what the filters test.
const window = 24 * time.Hour

// reader holds one source's read transaction and its cursors.
type reader struct {
	src  *source
	conn *sql.Conn
	curs []*cursor
}

// newReader opens a read transaction on src and a cursor per layout it
// holds, each on its first row.
func newReader(ctx context.Context, src *source, since, until time.Time) (*reader, error) {
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if !since.IsZero() {
		lo = since.Add(-window).UnixMilli()
	}
	if !until.IsZero() {
		hi = until.Add(window).UnixMilli()
	}
	conn, err := src.db.Conn(ctx)
	if err != nil {
		return nil, &DBError{Path: src.path, Err: sqliteErr(err)}
	}
	rd := &reader{src: src, conn: conn}
	fail := func(err error) (*reader, error) {
		rd.close()
		return nil, &DBError{Path: src.path, Err: sqliteErr(err)}
	}
	// One transaction: every query reads the same snapshot.
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		return fail(err)
	}
	if src.v1 {
		c := &cursor{src: src, layout: layoutV1}
		rd.curs = append(rd.curs, c)
		if c.msgs, err = conn.QueryContext(ctx, messageQuery, lo, hi); err != nil {
			return fail(err)
		}
		if c.parts, err = conn.QueryContext(ctx, partQuery, lo, hi); err != nil {
			return fail(err)
		}
		c.advancePart()
	}
	if src.v2 {
		c := &cursor{src: src, layout: layoutV2}
		rd.curs = append(rd.curs, c)
		if c.msgs, err = conn.QueryContext(ctx, messageV2Query, lo, hi); err != nil {
			return fail(err)
		}
	}
	for _, c := range rd.curs {
		if err := c.next(); err != nil {
			rd.close()
			return nil, err
		}
	}
	return rd, nil
}

func (rd *reader) close() {
	for _, c := range rd.curs {
		c.close()
	}
	if rd.conn != nil {
		rd.conn.ExecContext(context.Background(), "ROLLBACK")
		rd.conn.Close()
	}
}

func (c *cursor) advancePart() {
	c.partOK = c.parts.Next()
	if c.partOK {
		if err := c.parts.Scan(&c.partMsg, &c.partData); err != nil {
			c.partOK = false
		}
	}
}

// next reads the next row (a v1 message with its parts) into c.cur;
// c.done at the end.
func (c *cursor) next() error {
	fail := func(err error) error { return &DBError{Path: c.src.path, Err: sqliteErr(err)} }
	if !c.msgs.Next() {
		c.done = true
		if err := c.msgs.Err(); err != nil {
			return fail(err)
		}
		if c.parts != nil {
			if err := c.parts.Err(); err != nil {
				return fail(err)
			}
		}
		return nil
	}
	var created, updated sql.NullFloat64
	var data, typ sql.RawBytes
	r := &c.cur
	dest := []any{&r.id, &r.session, &created, &updated, &data}
	if c.layout == layoutV2 {
		dest = []any{&r.id, &r.session, &created, &updated, &typ, &data}
	}
	if err := c.msgs.Scan(dest...); err != nil {
		return fail(err)
	}
	c.src.rows[c.layout]++
	r.created, r.updated, r.layout = int64(created.Float64), int64(updated.Float64), c.layout
	r.typ = string(typ)
	r.data = append(r.data[:0], data...)
	r.parts = parts{}
	for c.partOK && c.partMsg == r.id {
		r.parts.add(c.partData)
		c.advancePart()
	}
	return nil
}

func (c *cursor) close() {
	if c.msgs != nil {
		c.msgs.Close()
	}
	if c.parts != nil {
		c.parts.Close()
	}
}

// before orders rows as the queries do: session, time created, id.
func before(a, b *row) bool {
	if a.session != b.session {
		return a.session < b.session
	}
	if a.created != b.created {
		return a.created < b.created
	}
	return a.id < b.id
}

// OpenCode 2's session_message rows (anomalyco/opencode,
// packages/core/src/session/message.ts and projector.ts): the row's type
// column is the message's type and data is SessionMessage.Info encoded
// without id and type, times in Unix ms:
//
//	user:      {"text", "files", "agents", "references", "time":{"created"}}
//	assistant: {"agent", "model":{"id","providerID","variant"?},
//	  "content":[...], "finish"?, "cost"?, "error"?,
//	  "tokens":{"input","output","reasoning","cache":{"read","write"}}?,
//	  "time":{"created","completed"?}}
//	content:   {"type":"text","id","text"}
//	           {"type":"reasoning","id","text","time":{"created","completed"?}?}
//	           {"type":"tool","id","name","state":{"status",...},
//	            "time":{"created","ran"?,"completed"?,"pruned"?}}
//
// A tool's time.created is when the model began the call (its input
// streaming), time.ran when it started running: v1's state.time.start
// (message-backfill.ts maps one to the other). Text carries no time.
// The tokens have v1's meaning.

// v2Types are the session_message types that are not user or assistant
// messages (they are counted by type, not analysed).
var v2Types = []string{"system", "synthetic", "compaction", "model-switched", "agent-switched", "shell", "skill", "location-switched", "idle"}

// parseV2 reads an assistant row's data: model, finish, error, time,
// tokens, and from its content the timing parts.
func parseV2(b []byte) (info, parts, error) {
	m := info{role: "assistant"}
	var p parts
	err := fields(b, func(key, val []byte) error {
		switch string(key) {
		case "model":
			return subfields(val, func(k, v []byte) error {
				switch string(k) {
				case "id":
					m.model, _ = str(v)
				case "providerID":
					m.provider, _ = str(v)
				}
				return nil
			})
		case "content":
			if len(val) == 0 || val[0] != '[' {
				return nil
			}
			return p.addContent(val)
		default:
			return m.field(key, val)
		}
	})
	return m, p, err
}

// item is what one v2 content item says that analyze reads.
type item struct {
	typ                string
	created, completed float64
	ran                float64
	hasCreated, hasEnd bool
	hasRan             bool
}

func parseItem(b []byte) (item, error) {
	var it item
	err := fields(b, func(key, val []byte) error {
		switch string(key) {
		case "type":
			it.typ, _ = str(val)
		case "time":
			return subfields(val, func(k, v []byte) error {
				switch string(k) {
				case "created":
					it.created, it.hasCreated = number(v)
				case "completed":
					it.completed, it.hasEnd = number(v)
				case "ran":
					it.ran, it.hasRan = number(v)
				}
				return nil
			})
		}
		return nil
	})
	if err == nil && it.typ == "" {
		err = errJSON
	}
	return it, err
}

// addContent reads a v2 message's content array into p: tools that ran
// (their earliest time.ran), the first token (the first item's start,
// when it is reasoning or a tool call: text has no time) and the last
// token (the last item's end, when it is reasoning).
func (p *parts) addContent(arr []byte) error {
	var last item
	lastOK := false
	err := elements(arr, func(e []byte) error {
		p.n++
		it, err := parseItem(e)
		if err != nil {
			p.malformed++
			lastOK = false
			return nil
		}
		if p.n == 1 && it.hasCreated && (it.typ == "reasoning" || it.typ == "tool") {
			if t, ok := ms(it.created); ok {
				p.texts, p.firstStart = 1, t
			}
		}
		if it.typ == "tool" && it.hasRan {
			if t, ok := ms(it.ran); ok {
				if p.tools == 0 || t < p.toolStart {
					p.toolStart = t
				}
				p.tools++
			}
		}
		last, lastOK = it, true
		return nil
	})
	if lastOK && last.typ == "reasoning" && last.hasEnd {
		if t, ok := ms(last.completed); ok {
			p.lastEnd = t
		}
	}
	return err
}
