//go:build unix

package nvimtest

import (
	"fmt"
	"testing"

	"github.com/mcpdiff/mcpdiff/internal/testenv/ideclient"
)

type (
	ideClient  = ideclient.Client
	rpcMessage = ideclient.Message
)

func connect(t *testing.T, port int, token string) *ideClient {
	t.Helper()
	return ideclient.Connect(t, port, token)
}

func tabName(file string, n int) string {
	return fmt.Sprintf("✻ [Claude Code] %s (%06x) ⧉", file, n)
}

// expectTexts fails unless got equals want item by item.
func expectTexts(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d text items %q, want %q", what, len(got), got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s: item %d = %q, want %q", what, i, got[i], want[i])
		}
	}
}
