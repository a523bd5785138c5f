package trace

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sixpin/sixpin/internal/bounds"
	"github.com/sixpin/sixpin/internal/clip"
	"github.com/sixpin/sixpin/internal/numfmt"
)

// Azure's LLM inference traces (Azure/AzurePublicDataset,
// AzureLLMInferenceTrace_{code,conv}.csv, 2023 and 2024) are CSV files:
//
//	TIMESTAMP,ContextTokens,GeneratedTokens
//	2023-11-16 18:15:46.6805900,374,44
//
// TIMESTAMP is the arrival (UTC, up to 100 ns ticks). Every row is one
// request with no session: a single-turn session here, named by its row
// number (1 for the first request). Offsets count from the earliest row.
const azureTimeLayout = "2006-01-02 15:04:05.999999999"

type azureCols struct{ ts, ctx, gen int }

// azureColumns finds the three columns in a header line (names matched
// without regard to case).
func azureColumns(header string) (azureCols, error) {
	r := csv.NewReader(strings.NewReader(header))
	fields, err := r.Read()
	if err != nil {
		return azureCols{}, err
	}
	return azureColumnsOf(fields)
}

func azureColumnsOf(fields []string) (azureCols, error) {
	c := azureCols{-1, -1, -1}
	for i, f := range fields {
		switch strings.ToLower(strings.TrimSpace(f)) {
		case "timestamp":
			c.ts = i
		case "contexttokens":
			c.ctx = i
		case "generatedtokens":
			c.gen = i
		}
	}
	if c.ts < 0 || c.ctx < 0 || c.gen < 0 {
		return c, errors.New("want TIMESTAMP, ContextTokens and GeneratedTokens columns")
	}
	return c, nil
}

// azureRows reads an Azure CSV, each row a session of its own named by
// its row number (1 for the first request), at its TIMESTAMP from the
// first row's (the tracker makes it from the earliest's). A row more than
// a century from the first, or rows spanning more than a century, are
// errors.
func azureRows(name string, br *bufio.Reader, fn func(*row) error) error {
	r := csv.NewReader(br)
	r.ReuseRecord = true
	r.FieldsPerRecord = -1
	csvErr := func(err error) error {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return fieldErr(name, pe.Line, pe.Column, "", "invalid CSV: %v", pe.Err)
		}
		return &Error{File: name, Err: err}
	}
	header, err := r.Read()
	if err != nil {
		return csvErr(err)
	}
	header = slices.Clone(header) // ReuseRecord: the next Read overwrites it
	header[0] = strings.TrimPrefix(header[0], "\ufeff")
	cols, err := azureColumnsOf(header)
	if err != nil {
		return lineErr(name, 1, "%v", err)
	}
	need := max(cols.ts, cols.ctx, cols.gen) + 1
	var (
		first         time.Time
		firstText     string
		firstLine     int
		earliest, lat time.Duration // from the first row
		out           row
	)
	for n := 1; ; n++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return csvErr(err) // before FieldPos: a broken row has no fields to place
		}
		field := func(i int, format string, args ...any) error {
			line, col := r.FieldPos(i)
			return fieldErr(name, line, col, header[i], format, args...)
		}
		if len(rec) < need {
			line, _ := r.FieldPos(0)
			return lineErr(name, line, "want %d fields, got %d", need, len(rec))
		}
		text := strings.TrimSpace(rec[cols.ts])
		ts, err := time.Parse(azureTimeLayout, text)
		if err != nil {
			return field(cols.ts, "%q is not a time like 2023-11-16 18:15:46.6805900", rec[cols.ts])
		}
		ctx, err := count(rec[cols.ctx])
		if err != nil {
			return field(cols.ctx, "%v", err)
		}
		gen, err := count(rec[cols.gen])
		if err != nil {
			return field(cols.gen, "%v", err)
		}
		line, _ := r.FieldPos(cols.ts)
		switch {
		case n == 1:
			first, firstText, firstLine = ts, text, line
		case ts.Sub(first) > bounds.Century:
			return field(cols.ts, "%q is more than a century after the trace's first request (%q)", text, firstText)
		case first.Sub(ts) > bounds.Century:
			return field(cols.ts, "%q is more than a century before the trace's first request (%q)", text, firstText)
		}
		at := ts.Sub(first)
		earliest, lat = min(earliest, at), max(lat, at)
		out = row{line: line, id: strconv.Itoa(n), turn: -1, start: at, at: at, t: Turn{InputTokens: ctx, OutputTokens: gen}}
		if err := fn(&out); err != nil {
			return err
		}
	}
	if lat-earliest > bounds.Century {
		return fieldErr(name, firstLine, 0, header[cols.ts], "the requests span more than a century")
	}
	return nil
}

// count reads a token count: a whole number from 0 to bounds.Tokens.
func count(s string) (int, error) {
	s = strings.TrimSpace(s)
	n, err := strconv.Atoi(s)
	var ne *strconv.NumError
	switch {
	case errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) && !strings.HasPrefix(s, "-"):
		return 0, fmt.Errorf("must be ≤ %s tokens (got %s)", numfmt.Thousands(bounds.Tokens), clip.Cut(s))
	case err != nil:
		return 0, fmt.Errorf("%s is not a whole number of tokens", clip.Quote(s))
	case n < 0:
		return 0, fmt.Errorf("must be ≥ 0 (got %d)", n)
	case n > bounds.Tokens:
		return 0, fmt.Errorf("must be ≤ %s tokens (got %d)", numfmt.Thousands(bounds.Tokens), n)
	}
	return n, nil
}
