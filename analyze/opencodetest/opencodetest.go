// Package opencodetest writes databases shaped like opencode's, for tests.
//
// They have its tables and indexes, message and part rows whose data is the JSON
// opencode 1 stores (MessageV2.Info and MessageV2.Part without their ids),
// and OpenCode 2's session_message rows (SessionMessage.Info without id
// and type, its content inline).
package opencodetest

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite" // database/sql driver "sqlite"
)

// opencode's tables and indexes as its drizzle migrations create them
// (packages/opencode/migration/*/migration.sql, current layout; the
// project and session tables trimmed to their required columns).
const Schema = "CREATE TABLE `project` (`id` text PRIMARY KEY, `worktree` text NOT NULL, `vcs` text, `name` text, `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `sandboxes` text NOT NULL);" + `
CREATE TABLE ` + "`session` (`id` text PRIMARY KEY, `project_id` text NOT NULL, `parent_id` text, `slug` text NOT NULL, `directory` text NOT NULL, `title` text NOT NULL, `version` text NOT NULL, `share_url` text, `summary_additions` integer, `summary_deletions` integer, `summary_files` integer, `summary_diffs` text, `revert` text, `permission` text, `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `time_compacting` integer, `time_archived` integer, CONSTRAINT `fk_session_project_id_project_id_fk` FOREIGN KEY (`project_id`) REFERENCES `project`(`id`) ON DELETE CASCADE);" + `
CREATE TABLE ` + "`message` (`id` text PRIMARY KEY, `session_id` text NOT NULL, `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL, CONSTRAINT `fk_message_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE);" + `
CREATE TABLE ` + "`part` (`id` text PRIMARY KEY, `message_id` text NOT NULL, `session_id` text NOT NULL, `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL, CONSTRAINT `fk_part_message_id_message_id_fk` FOREIGN KEY (`message_id`) REFERENCES `message`(`id`) ON DELETE CASCADE);" + `
CREATE INDEX ` + "`message_session_time_created_id_idx` ON `message` (`session_id`,`time_created`,`id`);" + `
CREATE INDEX ` + "`part_message_id_id_idx` ON `part` (`message_id`,`id`);" + `
CREATE INDEX ` + "`part_session_idx` ON `part` (`session_id`);" + `
CREATE INDEX ` + "`session_project_idx` ON `session` (`project_id`);" + `
CREATE INDEX ` + "`session_parent_idx` ON `session` (`parent_id`);"

// SchemaV2 is OpenCode 2's session_message table and its indexes as
// anomalyco/opencode's packages/core/src/database/schema.gen.ts creates
// them. OpenCode 2 keeps the message and part tables, frozen, beside it;
// its session table is named session in that file and session_v2 in some
// releases, and sixpin reads neither, so the fixture keeps session.
const SchemaV2 = "CREATE TABLE `session_message` (`id` text PRIMARY KEY, `session_id` text NOT NULL, `type` text NOT NULL, `seq` integer NOT NULL, `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL, CONSTRAINT `fk_session_message_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE);" + `
CREATE UNIQUE INDEX ` + "`session_message_session_seq_idx` ON `session_message` (`session_id`,`seq`);" + `
CREATE INDEX ` + "`session_message_session_type_seq_idx` ON `session_message` (`session_id`,`type`,`seq`);" + `
CREATE INDEX ` + "`session_message_session_time_created_id_idx` ON `session_message` (`session_id`,`time_created`,`id`);" + `
CREATE INDEX ` + "`session_message_time_created_idx` ON `session_message` (`time_created`);"

// DB writes rows the way opencode does, all in one transaction until
// Close. It is not safe for concurrent use.
type DB struct {
	t        testing.TB
	path     string
	db       *sql.DB
	tx       *sql.Tx
	sessions map[string]bool
	nparts   int
	seq      map[string]int // the last session_message seq per session
	v2       bool
}

// New creates dir/opencode.db, opencode-shaped (the v1 tables), in WAL
// mode as opencode opens it, with one project.
func New(t testing.TB, dir string) *DB {
	t.Helper()
	return create(t, dir, false)
}

// NewV2 is New with OpenCode 2's session_message table beside the v1
// tables, as an OpenCode 2 database upgraded in place has them.
func NewV2(t testing.TB, dir string) *DB {
	t.Helper()
	return create(t, dir, true)
}

func create(t testing.TB, dir string, v2 bool) *DB {
	t.Helper()
	path := filepath.Join(dir, "opencode.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	stmts := []string{"PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL", "PRAGMA foreign_keys = ON", Schema,
		"INSERT INTO project VALUES ('prj_1', '/home/me/work', 'git', 'work', 1, 1, '[]')"}
	if v2 {
		stmts = append(stmts, SchemaV2)
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	d := &DB{t: t, path: path, db: db, sessions: map[string]bool{}, seq: map[string]int{}, v2: v2}
	d.begin()
	return d
}

func (d *DB) begin() {
	tx, err := d.db.Begin()
	if err != nil {
		d.t.Fatal(err)
	}
	d.tx = tx
}

func (d *DB) exec(q string, args ...any) {
	d.t.Helper()
	if _, err := d.tx.Exec(q, args...); err != nil {
		d.t.Fatalf("%s: %v", q, err)
	}
}

// Session inserts a session row unless it exists.
func (d *DB) Session(id string, created int64) {
	if d.sessions[id] {
		return
	}
	d.sessions[id] = true
	d.exec("INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) VALUES (?, 'prj_1', ?, '/home/me/work', 'a session', '1.0.0', ?, ?)",
		id, "slug-"+id, created, created)
}

// Raw inserts a message row with data as given.
func (d *DB) Raw(id, session string, created int64, data string) {
	d.t.Helper()
	d.Session(session, created)
	d.exec("INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)", id, session, created, created, data)
}

// RawPart inserts a part row with data as given.
func (d *DB) RawPart(message, session string, at int64, data string) {
	d.t.Helper()
	d.nparts++
	d.exec("INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)",
		fmt.Sprintf("prt_%06d", d.nparts), message, session, at, at, data)
}

// Message is an assistant message. Times are Unix ms.
type Message struct {
	ID, Session        string
	Provider, Model    string
	Created, Completed int64 // Completed 0: not completed
	Finish             string
	// Token counts as opencode stores them: Input without the cache
	// reads and writes, Output without the reasoning.
	Input, Output, Reasoning, CacheRead, CacheWrite int
	// Error names an error (MessageAbortedError, APIError); "" for none.
	Error string
	Parts []Part
}

// Part is a text, reasoning or tool part with its times (Unix ms; an End
// of 0 is left out). A tool part's times are its state.time in v1; in
// OpenCode 2 they are its time.ran and time.completed, and Input is its
// time.created, when the model began the call (Start when 0). OpenCode 2
// stores no times for text, and a reasoning's Start and End as its
// time.created and time.completed.
type Part struct {
	Type       string
	Start, End int64
	Input      int64
}

// Text, Reasoning and Tool make parts.
func Text(start, end int64) Part      { return Part{Type: "text", Start: start, End: end} }
func Reasoning(start, end int64) Part { return Part{Type: "reasoning", Start: start, End: end} }
func Tool(start, end int64) Part      { return Part{Type: "tool", Start: start, End: end} }

// ToolNoStart is a tool part that never started (state pending: no
// state.time in v1, no time.ran in OpenCode 2).
func ToolNoStart() Part { return Part{Type: "tool"} }

// User inserts a user message with one text part.
func (d *DB) User(id, session string, created int64) {
	d.t.Helper()
	data, _ := json.Marshal(map[string]any{
		"role": "user", "time": map[string]any{"created": created}, "agent": "build",
		"model": map[string]any{"providerID": "p", "modelID": "m"},
	})
	d.Raw(id, session, created, string(data))
	d.RawPart(id, session, created, `{"type":"text","text":"please fix the tests"}`)
}

// Assistant inserts an assistant message with a step-start part, its
// parts, and a step-finish part.
func (d *DB) Assistant(m Message) {
	d.t.Helper()
	tm := map[string]any{"created": m.Created}
	if m.Completed != 0 {
		tm["completed"] = m.Completed
	}
	info := map[string]any{
		"role": "assistant", "time": tm, "parentID": "msg_user", "modelID": m.Model, "providerID": m.Provider,
		"mode": "build", "agent": "build", "path": map[string]any{"cwd": "/home/me/work", "root": "/home/me/work"},
		"cost": 0.001,
		"tokens": map[string]any{"input": m.Input, "output": m.Output, "reasoning": m.Reasoning,
			"cache": map[string]any{"read": m.CacheRead, "write": m.CacheWrite}},
	}
	if m.Finish != "" {
		info["finish"] = m.Finish
	}
	if m.Error != "" {
		info["error"] = map[string]any{"name": m.Error, "data": map[string]any{"message": "aborted"}}
	}
	data, _ := json.Marshal(info)
	d.Raw(m.ID, m.Session, m.Created, string(data))
	d.RawPart(m.ID, m.Session, m.Created, `{"type":"step-start","snapshot":"abc"}`)
	for _, p := range m.Parts {
		var v map[string]any
		switch p.Type {
		case "tool":
			st := map[string]any{"status": "completed", "input": map[string]any{"filePath": "/x"}, "output": "ok", "title": "x", "metadata": map[string]any{},
				"time": map[string]any{"start": p.Start, "end": p.End}}
			if p.Start == 0 {
				st = map[string]any{"status": "pending", "input": map[string]any{}, "raw": ""}
			}
			v = map[string]any{"type": "tool", "callID": "call_1", "tool": "read", "state": st}
		default:
			t := map[string]any{"start": p.Start}
			if p.End != 0 {
				t["end"] = p.End
			}
			v = map[string]any{"type": p.Type, "text": "some words", "time": t}
		}
		b, _ := json.Marshal(v)
		d.RawPart(m.ID, m.Session, p.Start, string(b))
	}
	d.RawPart(m.ID, m.Session, m.Completed, fmt.Sprintf(`{"type":"step-finish","reason":%q,"cost":0,"tokens":{"input":%d,"output":%d,"reasoning":%d,"cache":{"read":%d,"write":%d}}}`,
		m.Finish, m.Input, m.Output, m.Reasoning, m.CacheRead, m.CacheWrite))
}

// RawV2 inserts a session_message row of type typ with data as given, at
// the session's next seq.
func (d *DB) RawV2(id, session, typ string, created int64, data string) {
	d.t.Helper()
	if !d.v2 {
		d.t.Fatal("opencodetest: RawV2 on a database made by New (use NewV2)")
	}
	d.Session(session, created)
	d.seq[session]++
	d.exec("INSERT INTO session_message (id, session_id, type, seq, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?, ?)",
		id, session, typ, d.seq[session], created, created, data)
}

// UserV2 inserts an OpenCode 2 user message.
func (d *DB) UserV2(id, session string, created int64) {
	d.t.Helper()
	data, _ := json.Marshal(map[string]any{"text": "please fix the tests", "files": []any{}, "agents": []any{}, "references": []any{},
		"time": map[string]any{"created": created}})
	d.RawV2(id, session, "user", created, string(data))
}

// AssistantV2 inserts m as OpenCode 2 stores an assistant message: one
// session_message row whose data carries the model as {id, providerID},
// the parts inline as content, and an error as {type, message}.
func (d *DB) AssistantV2(m Message) {
	d.t.Helper()
	tm := map[string]any{"created": m.Created}
	if m.Completed != 0 {
		tm["completed"] = m.Completed
	}
	content := []any{}
	for i, p := range m.Parts {
		id := fmt.Sprintf("prt_%s_%d", m.ID, i)
		switch p.Type {
		case "tool":
			ttm := map[string]any{"created": p.Input}
			if p.Input == 0 {
				ttm["created"] = p.Start
			}
			st := map[string]any{"status": "streaming", "input": ""}
			if p.Start != 0 {
				ttm["ran"] = p.Start
				st = map[string]any{"status": "running", "input": map[string]any{"filePath": "/x"}, "structured": map[string]any{}, "content": []any{}}
				if p.End != 0 {
					ttm["completed"] = p.End
					st = map[string]any{"status": "completed", "input": map[string]any{"filePath": "/x"}, "structured": map[string]any{},
						"content": []any{map[string]any{"type": "text", "text": "ok"}}}
				}
			} else {
				ttm["created"] = m.Created
			}
			content = append(content, map[string]any{"type": "tool", "id": "call_" + id, "name": "read", "state": st, "time": ttm})
		case "reasoning":
			rt := map[string]any{"created": p.Start}
			if p.End != 0 {
				rt["completed"] = p.End
			}
			content = append(content, map[string]any{"type": "reasoning", "id": id, "text": "thinking", "time": rt})
		default:
			content = append(content, map[string]any{"type": p.Type, "id": id, "text": "some words"})
		}
	}
	info := map[string]any{
		"agent": "build", "model": map[string]any{"id": m.Model, "providerID": m.Provider},
		"content": content, "cost": 0.001, "time": tm,
		"tokens": map[string]any{"input": m.Input, "output": m.Output, "reasoning": m.Reasoning,
			"cache": map[string]any{"read": m.CacheRead, "write": m.CacheWrite}},
	}
	if m.Finish != "" {
		info["finish"] = m.Finish
	}
	if m.Error != "" {
		info["error"] = map[string]any{"type": "aborted", "message": m.Error}
		info["finish"] = "error"
	}
	data, _ := json.Marshal(info)
	d.RawV2(m.ID, m.Session, "assistant", m.Created, string(data))
}

// Close commits, checkpoints and closes: like opencode on exit, it leaves
// no -wal file. It returns the database's path.
func (d *DB) Close() string {
	d.t.Helper()
	if err := d.tx.Commit(); err != nil {
		d.t.Fatal(err)
	}
	if _, err := d.db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		d.t.Fatal(err)
	}
	if err := d.db.Close(); err != nil {
		d.t.Fatal(err)
	}
	return d.path
}
