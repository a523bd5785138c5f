// Package archtest guards sixpin's package layout.
//
// Its test fails when a package reaches one it must not, directly or
// through a chain of imports, or has no rule: the rules in
// archtest_test.go are ARCHITECTURE.md's "never" list. It has no code of
// its own.
package archtest
