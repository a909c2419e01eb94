//go:build linux

package serve

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A plan of another workspace's store (same user, real and signed) planted into this
// one is set aside, unapplied, and this store stays decidable; the workspace it came
// from completes its own.
func TestPlanFromAnotherWorkspaceIsSetAside(t *testing.T) {
	t.Parallel()
	requireStrace(t)
	a, aIDs := threeEdits(t)
	b, bIDs := threeEdits(t)
	aBefore := a.Read("a.txt")
	// Kill A's reject right after its commit point: its plan is left in journal/.
	journal := a.Path(".mcp/edit_history/journal")
	for n := 1; ; n++ {
		if n > 20 {
			t.Fatal("no kill left a plan behind")
		}
		code, errOut := straceCLI(t, a.dir, []string{"-o", "/dev/null", "-e", "trace=renameat", "-e", fmt.Sprintf("inject=renameat:signal=SIGKILL:when=%d", n)}, "reject", aIDs[1])
		if code != 128+int(syscall.SIGKILL) {
			t.Fatalf("the kill did not happen: exit %d %s", code, errOut)
		}
		if _, err := os.Stat(filepath.Join(journal, "plan.json")); err == nil {
			break
		}
	}
	bJournal := b.Path(".mcp/edit_history/journal")
	if out, err := exec.Command("cp", "-a", journal, bJournal).CombinedOutput(); err != nil {
		t.Fatal(err, string(out))
	}
	bBefore := b.Read("a.txt")
	out, errOut, code := runLimited(t, b.dir, nil, "", 20*time.Second, "status")
	if code != 0 || !strings.Contains(errOut, "set aside") || !strings.Contains(errOut, "written for another edit history") || strings.Contains(out, aIDs[1]) {
		t.Fatalf("status in B: exit %d %s %s", code, out, errOut)
	}
	if b.Read("a.txt") != bBefore {
		t.Fatal("A's plan changed B's file")
	}
	if out, code := cli(t, b.dir, "reject", bIDs[1]); code != 0 {
		t.Fatalf("B is not decidable: %s", out)
	}
	b.expect("a.txt", "1\ntwo\n3\n4\n5\n6\n7\neight\n9\n")
	_, errOut, _ = runLimited(t, a.dir, nil, "", 20*time.Second, "status")
	if !strings.Contains(errOut, "completed an interrupted reject") {
		t.Fatalf("A did not complete its own decision: %s", errOut)
	}
	if a.Read("a.txt") == aBefore {
		t.Fatal("A's reject was not carried out")
	}
}
