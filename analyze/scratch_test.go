package analyze

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"
)

func ls(t *testing.T, dir string) {
	es, _ := os.ReadDir(dir)
	for _, e := range es {
		fi, _ := e.Info()
		t.Logf("  %s %d", e.Name(), fi.Size())
	}
}

func TestScratch(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.db")
	db, err := sql.Open("sqlite", p)
	if err != nil {
		t.Fatal(err)
	}
	var v string
	db.QueryRow("select sqlite_version()").Scan(&v)
	t.Log("version", v)
	for _, s := range []string{"PRAGMA journal_mode=WAL", "create table t(a)", "insert into t values(1)"} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	t.Log("after close")
	ls(t, dir)
	ro, err := sql.Open("sqlite", "file:"+p+"?mode=ro&_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := ro.QueryRow("select count(*) from t").Scan(&n); err != nil {
		t.Fatal(err)
	}
	t.Log("during ro open", n)
	ls(t, dir)
	ro.Close()
	t.Log("after ro close")
	ls(t, dir)
	// now writer open while reading
	w, _ := sql.Open("sqlite", p)
	w.Exec("PRAGMA journal_mode=WAL")
	w.Exec("insert into t values(2)")
	t.Log("writer open")
	ls(t, dir)
	ro, _ = sql.Open("sqlite", "file:"+p+"?mode=ro&_pragma=query_only(1)")
	if err := ro.QueryRow("select count(*) from t").Scan(&n); err != nil {
		t.Fatal(err)
	}
	t.Log("ro sees", n)
	ro.Close()
	ro, _ = sql.Open("sqlite", "file:"+p+"?immutable=1")
	if err := ro.QueryRow("select count(*) from t").Scan(&n); err != nil {
		t.Fatal(err)
	}
	t.Log("immutable sees", n)
	ro.Close()
	w.Close()
}
