package record

import "time"

// Request is one planned request: its pinned lengths, the seed of its
// prompt text and, in open loop, when it is due.
type Request struct {
	// Index is the request's position in the plan, from 0.
	Index int
	// Class is the mix class's name; empty when the mix has no classes.
	Class string
	// Content is the class of the prompt's text ("prose", "code", "json",
	// "tool-calls", "repetitive", "from-logs"; see scenario.ContentClasses
	// and scenario.ContentFromLogs); empty is prose.
	Content string
	// PromptTokens and OutputTokens are the pinned lengths in tokens.
	PromptTokens int
	OutputTokens int
	// Seed seeds the synthesis of this request's prompt text.
	Seed uint64
	// PrefixGroup is the shared prefix the prompt starts with, from 0; -1
	// when prompts share no prefix (see scenario.Plan.SharedPrefix).
	PrefixGroup int
	// Arrival is the scheduled send time as an offset from the start of
	// load (open loop); 0 in closed loop and from scenario.Plan.Request.
	Arrival time.Duration
}
