package nvim

import (
	"time"

	"github.com/mcpdiff/mcpdiff/bridge/ide"
)

// A diff accepted in Neovim is recorded by the bridge that accepted it. Claude Code's
// PostToolUse hook asks first, through each Neovim that could have accepted the
// write (as the unsaved-buffer guard asks), and its Lua asks its `mcpdiff nvim`,
// whose IDE server answers (ide.Server.ClaimWrites).

// AskClaimed asks the Neovims at addrs, all at once, which of writes their bridge
// accepted and recorded, waiting for each at most limit. A write is claimed when one
// of them says so; one that does not answer (in time, or at all), or runs no bridge,
// claims nothing.
func AskClaimed(addrs []string, writes []ide.Written, limit time.Duration) []bool {
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
func (b *Buffers) claimed(writes []ide.Written) []bool {
	if b.dropped.Load() {
		return nil
	}
	ctx, cancel := b.context()
	defer cancel()
	var answer []bool
	if err := callLua(ctx, b.v, "ask which writes the bridge recorded", "bridge.claimed", &answer, writes); err != nil {
		return nil
	}
	return answer
}

// claimed answers the hook's question, relayed by the plugin (an rpcrequest: Neovim
// waits, so the IDE server bounds its wait).
func (b *bridge) claimed(writes []ide.Written) ([]bool, error) {
	s := b.ideServer()
	if s == nil {
		return make([]bool, len(writes)), nil
	}
	return s.ClaimWrites(writes), nil
}
