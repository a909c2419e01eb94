package ide

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	bide "github.com/mcpdiff/mcpdiff/bridge/ide"
	"github.com/mcpdiff/mcpdiff/internal/testenv/ideclient"
)

// instantEditor shows nothing: with it the IDE server's own share of the times
// above can be measured (JSON, WebSocket, state machine), Neovim left out.
type instantEditor struct{ shown chan instantView }

// instantView is a proposal "shown" at a time; the benchmark answers it.
type instantView struct {
	at      time.Time
	answers chan bide.Answer
}

func (e instantEditor) Show(context.Context, bide.DiffRequest) (bide.View, error) {
	v := instantView{at: time.Now(), answers: make(chan bide.Answer, 1)}
	e.shown <- v
	return v, nil
}

func (v instantView) Answer() <-chan bide.Answer               { return v.answers }
func (instantView) Close(context.Context, bide.Teardown) error { return nil }
func (instantView) Written(context.Context) error              { return nil }

func (instantEditor) Query(context.Context, string, map[string]any) (string, error) {
	return "[]", nil
}

func BenchmarkProtocolOnly(b *testing.B) {
	for _, c := range []struct {
		lines int
		reps  int
		name  string
	}{{10_000, 10, "10,000"}, {100_000, 5, "100,000"}} {
		b.Run("lines="+strconv.Itoa(c.lines), func(b *testing.B) {
			dir := b.TempDir()
			ed := instantEditor{shown: make(chan instantView, 1)}
			s := bide.NewServer(bide.Options{Editor: ed, LockDir: dir, PID: os.Getpid(), Workspace: []string{dir}})
			if err := s.Start(); err != nil {
				b.Fatal(err)
			}
			defer s.Stop()
			client := ideclient.Connect(b, s.Port(), s.Token())
			e := &editor{ws: dir}
			path, proposal := e.files(b, c.lines)
			for range b.N {
				var opens, answers []time.Duration
				for i := range c.reps {
					tab := fmt.Sprintf("tab %d", i)
					answer, sent := client.OpenDiffAt(path, proposal, tab)
					view := <-ed.shown
					opens = append(opens, view.at.Sub(sent))
					start := time.Now()
					view.answers <- bide.Answer{Accepted: true, Text: proposal}
					answers = append(answers, client.Await(answer, "openDiff").Received.Sub(start))
					client.Texts(client.CallTool("close_tab", map[string]any{"tab_name": tab}), "close_tab")
				}
				recordDuration("IDE server alone (an editor that draws nothing): openDiff → Show, "+c.name+" lines", opens, "", 0)
				recordDuration("IDE server alone (an editor that draws nothing): the answer → FILE_SAVED, "+c.name+" lines", answers, "", 0)
			}
		})
	}
}
