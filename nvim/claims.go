package nvim

import "github.com/mcpdiff/mcpdiff/nvim/neovims"

// claimed answers the hook's question (neovims.AskClaimed), relayed by the plugin (an
// rpcrequest: Neovim waits, so the IDE server bounds its wait).
func (b *bridge) claimed(writes []neovims.Written) ([]bool, error) {
	s := b.ideServer()
	if s == nil {
		return make([]bool, len(writes)), nil
	}
	return s.ClaimWrites(writes), nil
}
