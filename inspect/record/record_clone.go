package record

// Clone returns a copy of r whose byte slices are its own: a Record's
// views are valid only during the decoder's callback, and a caller that
// keeps records past it (a search handing matches to another goroutine, a
// comparison of two replicas) clones them.
func (r *Record) Clone() Record {
	c := *r
	c.Key = cloneBytes(r.Key)
	c.Value = cloneBytes(r.Value)
	c.headers = cloneBytes(r.headers) // still encoded: EachHeader walks them
	return c
}

// cloneBytes copies b, keeping nil (null) apart from empty.
func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}
