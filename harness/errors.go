package harness

import "errors"

// The errors sixpin's commands end with, by exit code: 2 for bad input, 1
// for a run that measured but failed its bar, was interrupted or invalid
// (cmd/sixpin maps them; DESIGN §5). A gate's regression is
// verdict.ErrRegression.

// ErrBadInput marks errors in what the user gave (exit code 2).
var ErrBadInput = errors.New("bad input")

// ErrRunFailed marks a run that completed but failed its own bar: no
// successful request, or the error budget exceeded (exit code 1).
var ErrRunFailed = errors.New("run failed")

// ErrInterrupted marks a run cut short by a signal; its partial results
// were written (exit code 1).
var ErrInterrupted = errors.New("run interrupted")

// ErrInvalid marks a run whose pins did not hold within tolerance: its
// results were written, marked valid: false (exit code 1).
var ErrInvalid = errors.New("run invalid")

// ErrVendorLost marks a bake-off that ran whole and compared its vendors
// but lost some of them — a vendor invalid, failed, or throttled by its
// rate limit — while at least one vendor's figures stand. Every result
// and the memo were written (exit code 3: not a failed bake-off).
var ErrVendorLost = errors.New("bake-off lost a vendor")
