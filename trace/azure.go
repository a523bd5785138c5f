package trace

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
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

func readAzure(name string, br *bufio.Reader) (*Trace, error) {
	r := csv.NewReader(br)
	r.ReuseRecord = true
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if err != nil {
		return nil, lineErr(name, 1, "%v", err)
	}
	header[0] = strings.TrimPrefix(header[0], "\ufeff")
	cols, err := azureColumnsOf(header)
	if err != nil {
		return nil, lineErr(name, 1, "%v", err)
	}
	need := max(cols.ts, cols.ctx, cols.gen) + 1
	t := &Trace{}
	var first time.Time
	var at []time.Time
	for row := 1; ; row++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		line, _ := r.FieldPos(0)
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, lineErr(name, pe.Line, "%v", pe.Err)
			}
			return nil, err
		}
		if len(rec) < need {
			return nil, lineErr(name, line, "want %d fields, got %d", need, len(rec))
		}
		ts, err := time.Parse(azureTimeLayout, strings.TrimSpace(rec[cols.ts]))
		if err != nil {
			return nil, lineErr(name, line, "TIMESTAMP: %q is not a time like 2023-11-16 18:15:46.6805900", rec[cols.ts])
		}
		ctx, err1 := count(rec[cols.ctx])
		gen, err2 := count(rec[cols.gen])
		if err1 != nil {
			return nil, lineErr(name, line, "ContextTokens: %v", err1)
		}
		if err2 != nil {
			return nil, lineErr(name, line, "GeneratedTokens: %v", err2)
		}
		if row == 1 || ts.Before(first) {
			first = ts
		}
		at = append(at, ts)
		t.Sessions = append(t.Sessions, Session{ID: strconv.Itoa(row), Turns: []Turn{{InputTokens: ctx, OutputTokens: gen}}})
	}
	for i := range t.Sessions {
		t.Sessions[i].Start = at[i].Sub(first)
	}
	sortSessions(t.Sessions)
	return t, nil
}

func count(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("%q is not a whole number", s)
	}
	if n < 0 {
		return 0, fmt.Errorf("must be ≥ 0 (got %d)", n)
	}
	return n, nil
}
