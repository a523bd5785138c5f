package verdict

import "errors"

// The errors a comparison or a gate ends in. cmd/sixpin maps them to exit
// codes (DESIGN §5): a regression to 1, runs that cannot be compared to 2
// (bad input).

// ErrRegression marks a gate that found a statistically significant
// regression against its baseline (exit code 1).
var ErrRegression = errors.New("regression")

// ErrIncomparable marks errors about runs whose pins differ (commands wrap
// it when they refuse to compare): test with errors.Is (exit code 2).
var ErrIncomparable = errors.New("runs are not comparable")

// incomparable is an error that errors.Is reports as ErrIncomparable.
type incomparable string

func (e incomparable) Error() string        { return string(e) }
func (e incomparable) Is(target error) bool { return target == ErrIncomparable }
