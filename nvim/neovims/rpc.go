package neovims

import (
	"context"
	"fmt"

	nvimrpc "github.com/neovim/go-client/nvim"
)

// Call runs one blocking go-client request and gives up when ctx ends, so a Neovim
// that is busy (a prompt) or gone never hangs the caller. go-client's own calls take
// no context; an abandoned request finishes in the background.
func Call(ctx context.Context, what string, fn func() error) error {
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("neovim: %s: %w", what, err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("neovim: %s: no answer: %w", what, ctx.Err())
	}
}

// ExecLua runs a Lua chunk (its arguments are `...`) with a deadline.
func ExecLua(ctx context.Context, v *nvimrpc.Nvim, what, code string, result any, args ...any) error {
	return Call(ctx, what, func() error { return v.ExecLua(code, result, args...) })
}

// CallLua calls the plugin's function listed under name in lua/mcpdiff/rpc.lua, the
// one list of the Lua functions Go calls, with a deadline. name must be a string
// literal: TestGoCallsOnlyTheseLuaFunctions reads it from the source.
func CallLua(ctx context.Context, v *nvimrpc.Nvim, what, name string, result any, args ...any) error {
	return ExecLua(ctx, v, what, `return require("mcpdiff.rpc").call(...)`, result, append([]any{name}, args...)...)
}
