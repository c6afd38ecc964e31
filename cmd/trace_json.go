package cmd

import "github.com/kseg/kseg/inspect"

// traceStepJSON is one element of a lookup's "trace" array: the step's
// kind, its message in words, and the fields its kind shows.
type traceStepJSON struct {
	Step       string `json:"step"`
	Message    string `json:"message"`
	Segment    string `json:"segment,omitempty"`
	Candidates int    `json:"candidates,omitempty"`
	// probe
	Index   string `json:"index,omitempty"` // "offset" or "time"
	Phase   string `json:"phase,omitempty"`
	Slot    *int   `json:"slot,omitempty"`
	Key     *int64 `json:"key,omitempty"`
	Compare *int   `json:"compare,omitempty"`
	// batch
	Position   *int64 `json:"position,omitempty"`
	BaseOffset *int64 `json:"base_offset,omitempty"`
	LastOffset *int64 `json:"last_offset,omitempty"`
	MaxTS      *int64 `json:"max_timestamp,omitempty"`
}

// traceJSON is a lookup's "trace" array (nil, so left out, without steps).
func traceJSON(steps []inspect.TraceStep) []traceStepJSON {
	if len(steps) == 0 {
		return nil
	}
	out := make([]traceStepJSON, len(steps))
	for i, s := range steps {
		out[i] = traceStepJSON{Step: s.Step, Message: s.Message()}
		if s.Step == inspect.StepNote {
			continue // a note is its message
		}
		j := &out[i]
		j.Segment, j.Candidates = s.Segment, s.Candidates
		j.Index, j.Phase, j.Slot, j.Key, j.Compare = s.Index, s.Phase, s.Slot, s.Key, s.Compare
		j.Position, j.BaseOffset, j.LastOffset, j.MaxTS = s.Position, s.BaseOffset, s.LastOffset, s.MaxTS
	}
	return out
}
