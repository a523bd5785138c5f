package scenario

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse feeds the scenario loader arbitrary bytes: it must return a
// scenario or an error, never panic or hang, and a scenario it returns
// must plan, declare its pins and draw requests without panicking. In CI it runs
// over its seed corpus (testdata and the ready scenarios) as a normal
// test; go test -fuzz FuzzParse ./scenario/ explores beyond.
func FuzzParse(f *testing.F) {
	for _, glob := range []string{"testdata/*.yaml", "testdata/invalid/*.yaml", "../scenarios/*.yaml"} {
		files, _ := filepath.Glob(glob)
		for _, file := range files {
			if data, err := os.ReadFile(file); err == nil {
				f.Add(data)
			}
		}
	}
	f.Add([]byte(valid + "sweep: {pin: concurrency.streams, values: [1, 2]}\n"))
	f.Add([]byte(agenticYAML))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(filepath.Join("testdata", "fuzz.yaml"), data)
		if err != nil {
			return
		}
		p := NewPlan(s)
		for i := range 4 {
			p.Request(i)
			if s.Workload.Agentic() {
				p.Session(i)
			}
		}
		p.Declared(Wire{})
	})
}
