package neovims

import "time"

// A diff accepted in Neovim is recorded by the bridge that accepted it. Claude Code's
// PostToolUse hook asks first, through each Neovim that could have accepted the
// write (as the unsaved-buffer guard asks), and its Lua asks its `mcpdiff nvim`,
// whose IDE server answers (ide.Server.ClaimWrites).

// Written is a file as a hook saw it just after a write: what it asks about.
type Written struct {
	Path string `msgpack:"path"` // absolute
	Hash string `msgpack:"hash"` // lowercase hex SHA-256 of the bytes the file holds
}

// AskClaimed asks the Neovims at addrs, all at once, which of writes their bridge
// accepted and recorded, waiting for each at most limit. A write is claimed when one
// of them says so; one that does not answer (in time, or at all), or runs no bridge,
// claims nothing.
func AskClaimed(addrs []string, writes []Written, limit time.Duration) []bool {
	claimed := make([]bool, len(writes))
	answers := make([][]bool, len(addrs))
	each(addrs, limit, func(i int, b *Buffers, err error) {
		if err == nil {
			answers[i] = b.claimed(writes)
		}
	})
	for _, a := range answers {
		for j := range min(len(a), len(writes)) {
			claimed[j] = claimed[j] || a[j]
		}
	}
	return claimed
}

// claimed is this Neovim's answer; nil when it has none (no plugin, no bridge, no
// answer within Timeout).
func (b *Buffers) claimed(writes []Written) []bool {
	if b.dropped.Load() {
		return nil
	}
	ctx, cancel := b.context()
	defer cancel()
	var answer []bool
	if err := CallLua(ctx, b.v, "ask which writes the bridge recorded", "bridge.claimed", &answer, writes); err != nil {
		return nil
	}
	return answer
}
