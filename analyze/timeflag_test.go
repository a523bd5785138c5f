package analyze

import (
	"testing"
	"time"
)

func TestParseTime(t *testing.T) {
	loc := time.FixedZone("CET", 3600)
	now := time.Date(2026, 11, 30, 18, 30, 0, 0, loc)
	for _, c := range []struct {
		in       string
		endOfDay bool
		want     time.Time
	}{
		{"30d", false, now.Add(-30 * 24 * time.Hour)},
		{"2w", false, now.Add(-14 * 24 * time.Hour)},
		{"1.5d", false, now.Add(-36 * time.Hour)},
		{"12h", false, now.Add(-12 * time.Hour)},
		{"90m", true, now.Add(-90 * time.Minute)},
		{"2026-11-01", false, time.Date(2026, 11, 1, 0, 0, 0, 0, loc)},
		{"2026-11-01", true, time.Date(2026, 11, 2, 0, 0, 0, 0, loc)},
		{"2026-11-01T15:04", false, time.Date(2026, 11, 1, 15, 4, 0, 0, loc)},
		{"2026-11-01 15:04:05", true, time.Date(2026, 11, 1, 15, 4, 5, 0, loc)},
		{"2026-11-01T15:04:05Z", false, time.Date(2026, 11, 1, 15, 4, 5, 0, time.UTC)},
	} {
		got, err := ParseTime(c.in, now, c.endOfDay)
		if err != nil || !got.Equal(c.want) {
			t.Errorf("ParseTime(%q, %v) = %v, %v; want %v", c.in, c.endOfDay, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "soon", "-3d", "30x", "2026-13-01", "d"} {
		if _, err := ParseTime(bad, now, false); err == nil {
			t.Errorf("ParseTime(%q): no error", bad)
		}
	}
}
