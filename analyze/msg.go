package analyze

import (
	"slices"
	"strings"
)

// msg is one message as a reader found it, before de-duplication: what
// it is, and for an assistant message what its JSON and parts say.
type msg struct {
	id string
	// layout is the opencode layout it came from (0 for other sources);
	// updated its row's time_updated.
	layout  int
	updated int64
	kind    int
	// name names a message of kindOther or kindUnknown
	// ("session_message.type=compaction").
	name  string
	info  info
	parts parts
}

// Message kinds.
const (
	kindAssistant = iota
	kindUser
	// kindOther is a known kind that is not a model call (opencode 2's
	// compaction or model-switched rows, Claude Code's summaries).
	kindOther
	// kindUnknown is a kind analyze does not know.
	kindUnknown
	// kindMalformed is data that cannot be read.
	kindMalformed
)

// parseRow reads an opencode row of either layout.
func parseRow(r *row) msg {
	m := msg{id: r.id, layout: r.layout, updated: r.updated}
	if r.layout == layoutV2 {
		switch {
		case r.typ == "user":
			m.kind = kindUser
			// The created time of a user row is its fingerprint.
			m.info, _ = parseInfo(r.data)
			m.info.role = "user"
		case r.typ == "assistant":
			i, p, err := parseV2(r.data)
			if err != nil {
				m.kind = kindMalformed
				return m
			}
			m.info, m.parts = i, p
		case slices.Contains(v2Types, r.typ):
			m.kind, m.name = kindOther, "session_message.type="+r.typ
		default:
			m.kind, m.name = kindUnknown, "session_message.type="+r.typ
		}
		return m
	}
	i, err := parseInfo(r.data)
	switch {
	case err != nil:
		m.kind = kindMalformed
	case i.role == "assistant":
		m.info, m.parts = i, r.parts
	case i.role == "user":
		m.kind, m.info = kindUser, i
	case i.role == "":
		m.kind = kindMalformed
	default:
		m.kind, m.name = kindUnknown, "message.role="+i.role
	}
	return m
}

// fingerprint identifies a message across layouts when its id changed
// in the migration: role, times, model and tokens.
type fingerprint struct {
	role                string
	created, completed  float64
	provider, model     string
	input, output, read float64
}

func (m *msg) fingerprint() (fingerprint, bool) {
	i := &m.info
	if (m.kind != kindAssistant && m.kind != kindUser) || !i.hasCreated {
		return fingerprint{}, false
	}
	return fingerprint{i.role, i.created, i.completed, i.provider, i.model, i.input, i.output, i.cacheRead}, true
}

// dedupe returns a session's messages, each once, in order of creation.
// A message read more than once (from several databases, or from both
// opencode layouts) is taken from its OpenCode 2 row, else from the row
// updated last. A v1 message whose id is not in session_message but whose
// fingerprint is (OpenCode 2 migrated it under a new id) is a copy too.
func (a *acc) dedupe(ms []msg) []*msg {
	out := make([]*msg, 0, len(ms))
	byID := make(map[string]int, len(ms))
	for k := range ms {
		m := &ms[k]
		if m.id == "" {
			out = append(out, m)
			continue
		}
		j, seen := byID[m.id]
		if !seen {
			byID[m.id] = len(out)
			out = append(out, m)
			continue
		}
		a.counts.Duplicates++
		old := out[j]
		if old.layout != m.layout {
			a.counts.LayoutDuplicates++
		}
		if m.layout > old.layout || (m.layout == old.layout && m.updated >= old.updated) {
			out[j] = m
		}
	}
	var v2 map[fingerprint]bool
	for _, m := range out {
		if fp, ok := m.fingerprint(); ok && m.layout == layoutV2 {
			if v2 == nil {
				v2 = map[fingerprint]bool{}
			}
			v2[fp] = true
		}
	}
	if v2 != nil {
		out = slices.DeleteFunc(out, func(m *msg) bool {
			fp, ok := m.fingerprint()
			if ok && m.layout == layoutV1 && v2[fp] {
				a.counts.Duplicates++
				a.counts.LayoutDuplicates++
				return true
			}
			return false
		})
	}
	slices.SortStableFunc(out, func(x, y *msg) int {
		if x.info.created != y.info.created {
			if x.info.created < y.info.created {
				return -1
			}
			return 1
		}
		return strings.Compare(x.id, y.id)
	})
	return out
}
