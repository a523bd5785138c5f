package analyze

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseTime reads a --since or --until value, in now's time zone:
//
//   - a time back from now: 30d, 2w, 36h, 90m (d is 24 h, w 7 d; any Go
//     duration works);
//   - a date, 2026-11-01: its midnight, or with endOfDay the next
//     midnight (so --until 2026-11-30 includes the 30th);
//   - a date and time, 2026-11-01T15:04 or "2026-11-01 15:04[:05]";
//   - RFC 3339, 2026-11-01T15:04:05Z.
func ParseTime(s string, now time.Time, endOfDay bool) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, fmt.Errorf("empty time")
	}
	if d, ok := parseAgo(s); ok {
		if d < 0 {
			return time.Time{}, fmt.Errorf("%q: a time back from now must not be negative", s)
		}
		return now.Add(-d), nil
	}
	loc := now.Location()
	if t, err := time.ParseInLocation("2006-01-02", s, loc); err == nil {
		if endOfDay {
			t = t.AddDate(0, 0, 1)
		}
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a time: want 30d, 12h, 2026-11-01, 2026-11-01T15:04 or RFC 3339", s)
}

// parseAgo reads 30d, 2w or a Go duration.
func parseAgo(s string) (time.Duration, bool) {
	for unit, size := range map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour} {
		if num, ok := strings.CutSuffix(s, unit); ok {
			v, err := strconv.ParseFloat(num, 64)
			if err != nil {
				return 0, false
			}
			return time.Duration(v * float64(size)), true
		}
	}
	d, err := time.ParseDuration(s)
	return d, err == nil
}
