// Package opencodetest writes databases shaped like opencode's for tests:
// its tables and indexes, and message and part rows whose data is the JSON
// opencode stores (MessageV2.Info and MessageV2.Part without their ids).
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

// DB writes rows the way opencode does, all in one transaction until
// Close. It is not safe for concurrent use.
type DB struct {
	t        testing.TB
	path     string
	db       *sql.DB
	tx       *sql.Tx
	sessions map[string]bool
	nparts   int
}

// New creates dir/opencode.db, opencode-shaped, in WAL mode as opencode
// opens it, with one project.
func New(t testing.TB, dir string) *DB {
	t.Helper()
	path := filepath.Join(dir, "opencode.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	for _, s := range []string{"PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL", "PRAGMA foreign_keys = ON", Schema,
		"INSERT INTO project VALUES ('prj_1', '/home/me/work', 'git', 'work', 1, 1, '[]')"} {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	d := &DB{t: t, path: path, db: db, sessions: map[string]bool{}}
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
// of 0 is left out). A tool part's times are its state.time.
type Part struct {
	Type       string
	Start, End int64
}

// Text, Reasoning and Tool make parts.
func Text(start, end int64) Part      { return Part{"text", start, end} }
func Reasoning(start, end int64) Part { return Part{"reasoning", start, end} }
func Tool(start, end int64) Part      { return Part{"tool", start, end} }

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
