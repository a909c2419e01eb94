package history

// Decisions on part of an edit. An edit's diff splits into changes, its blocks (the
// zero-context hunks of its unified diff, in order); each can be accepted or
// rejected on its own. The log keeps the edit's status in "status" and, only while
// its blocks differ, the status of each block in the optional "hunk_status" list
// (the key stores already hold; BlockStatus in Go). Stores written before
// blocks could be decided have no such list and read as whole-edit decisions.

// verdict is the decision on one entry: its status, and the status of each block
// while they differ (nil otherwise). A normalised verdict with blocks has status
// pending (some block is pending) or accepted (none is, and some are rejected).
type verdict struct {
	status Status
	blocks []Status
}

func (e *Entry) verdict() verdict { return verdict{status: e.Status, blocks: e.BlockStatus} }

// block is the status of block i.
func (v verdict) block(i int) Status {
	if i < len(v.blocks) && v.blocks[i] != "" {
		return v.blocks[i]
	}
	return v.status
}

// keeps reports whether block i stays in the file.
func (v verdict) keeps(i int) bool { return v.block(i) != Rejected }

// rejectedAll reports whether nothing of the entry stays in the file.
func (v verdict) rejectedAll() bool { return v.status == Rejected && v.blocks == nil }

// set returns the verdict with blocks (of n) whose index pick selects set to to.
func (v verdict) set(n int, to Status, pick func(i int) bool) verdict {
	blocks := make([]Status, n)
	for i := range blocks {
		blocks[i] = v.block(i)
		if pick(i) {
			blocks[i] = to
		}
	}
	return normalVerdict(blocks)
}

// normalVerdict summarises per-block statuses: one status when they agree.
func normalVerdict(blocks []Status) verdict {
	if len(blocks) == 0 {
		return verdict{status: Pending}
	}
	same, pending := true, false
	for _, b := range blocks {
		same = same && b == blocks[0]
		pending = pending || b == Pending
	}
	if same {
		return verdict{status: blocks[0]}
	}
	if pending {
		return verdict{status: Pending, blocks: blocks}
	}
	return verdict{status: Accepted, blocks: blocks}
}

// equal reports whether two verdicts say the same about every block.
func (v verdict) equal(w verdict) bool {
	if v.status != w.status || len(v.blocks) != len(w.blocks) {
		return false
	}
	for i := range v.blocks {
		if v.blocks[i] != w.blocks[i] {
			return false
		}
	}
	return true
}

// sameKept reports whether two verdicts keep the same blocks in the file.
func sameKept(v, w verdict) bool {
	n := max(len(v.blocks), len(w.blocks), 1)
	for i := 0; i < n; i++ {
		if v.keeps(i) != w.keeps(i) {
			return false
		}
	}
	return true
}

// apply writes the verdict into e.
func (v verdict) apply(e *Entry) {
	e.Status, e.BlockStatus = v.status, v.blocks
}

// PartlyRejected reports whether some blocks of the edit are rejected and others
// stay in the file.
func (e *Entry) PartlyRejected() bool {
	if e.Status == Rejected {
		return false
	}
	for _, h := range e.BlockStatus {
		if h == Rejected {
			return true
		}
	}
	return false
}

// StatusText is the status as people read it: "partly rejected" for an edit of
// which some blocks are rejected and others stay.
func (e *Entry) StatusText() string {
	if e.invalid != "" {
		return "invalid"
	}
	if e.PartlyRejected() {
		return "partly rejected"
	}
	return string(e.Status)
}
