package results

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzRead feeds the results-file reader arbitrary bytes: it returns a
// run or an error, never panics. In CI it runs over its seed corpus (the
// good and bad files) as a normal test; go test
// -fuzz FuzzRead ./results/ explores beyond.
func FuzzRead(f *testing.F) {
	for _, glob := range []string{"testdata/*.json", "testdata/bad/*"} {
		files, _ := filepath.Glob(glob)
		for _, file := range files {
			if data, err := os.ReadFile(file); err == nil {
				f.Add(data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		run, err := Read("fuzz.json", data)
		if err == nil && run == nil {
			t.Fatal("no run and no error")
		}
	})
}
