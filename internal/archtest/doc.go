// Package archtest guards sixpin's package layout: its test fails when a
// package imports one it must not (see rules in archtest_test.go and the
// README's Layout section). It has no code of its own.
package archtest
