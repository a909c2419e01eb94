package files

import (
	"bytes"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// Repetitions timed inside one benchmark iteration, so that `-benchtime 1x` still
// gives a median worth reading.
const (
	startReps    = 5
	readReps     = 20
	editReps     = 10
	pipelineReps = 5
	pipelined    = 20 // concurrent edits per pipelined repetition
)

// figure is what one (workload, server) sub-benchmark measured.
type figure struct {
	samples []time.Duration // the timed repetitions
	first   time.Duration   // the untimed warm-up call (first of its kind for the process)
	rss     float64         // server's peak resident memory in bytes; 0 if not measured
	// pipelined edits only, per repetition: edits that are in the file afterwards,
	// and calls that reported success.
	survived, acked []int
}

func (f *figure) median() time.Duration {
	s := slices.Clone(f.samples)
	slices.Sort(s)
	return s[len(s)/2]
}

func (f *figure) min() time.Duration { return slices.Min(f.samples) }

// figures[workload][column]; a column is a server's name, or "mcpdiff <tool>" when
// mcpdiff offers two tools for the workload.
var figures = map[string]map[string]*figure{}

// record stores f and reports its median as ns/op (so benchstat and the plain
// `go test -bench` output show it) and its minimum.
func record(b *testing.B, workload, column string, f *figure) {
	if figures[workload] == nil {
		figures[workload] = map[string]*figure{}
	}
	figures[workload][column] = f
	b.ReportMetric(float64(f.median().Nanoseconds()), "ns/op")
	b.ReportMetric(float64(f.min().Nanoseconds()), "min-ns/op")
	if f.first > 0 {
		b.ReportMetric(float64(f.first.Nanoseconds()), "first-ns")
	}
	if f.rss > 0 {
		b.ReportMetric(f.rss/(1<<20), "peak-RSS-MB")
	}
}

// timed runs op and returns how long it took.
func timed(op func()) time.Duration {
	start := time.Now()
	op()
	return time.Since(start)
}

// BenchmarkStart times starting a server until it has answered initialize.
func BenchmarkStart(b *testing.B) {
	for _, srv := range servers {
		b.Run(srv.name, func(b *testing.B) {
			dir := testenv.TempDir(b)
			f := &figure{}
			for range startReps * b.N {
				var cn *conn
				f.samples = append(f.samples, timed(func() { cn = connect(b, srv, dir) }))
				cn.close()
			}
			record(b, "start", srv.name, f)
		})
	}
}

// BenchmarkRead10kLines reads a whole 10,000-line file. mcpdiff is measured with
// both its reads: read_text_file (hash-tagged lines, what an agent reads before
// edit_text_file) and read_files (the batch toolkit's numbered lines).
func BenchmarkRead10kLines(b *testing.B) {
	content := testenv.CodeLines(10000)
	firstLine := string(content[:bytes.IndexByte(content, '\n')])
	lastLine := string(content[bytes.LastIndexByte(content[:len(content)-1], '\n')+1 : len(content)-1])
	variants := []struct {
		column string
		srv    server
		read   func(path string) call
	}{
		{"mcpdiff read_text_file", mcpdiff, mcpdiff.read},
		{"mcpdiff read_files", mcpdiff, readFiles},
		{reference.name, reference, reference.read},
		{mark3labs.name, mark3labs, mark3labs.read},
	}
	for _, v := range variants {
		b.Run(strings.ReplaceAll(v.column, " ", "-"), func(b *testing.B) {
			dir := testenv.TempDir(b)
			path := filepath.Join(dir, "ten-thousand-lines.go")
			writeFile(b, path, content)
			cn := connect(b, v.srv, dir)
			defer cn.close()
			f := &figure{}
			var text string
			f.first = timed(func() { text = cn.call(b, v.read(path)) })
			for range readReps * b.N {
				f.samples = append(f.samples, timed(func() { text = cn.call(b, v.read(path)) }))
			}
			if !strings.Contains(text, firstLine) || !strings.Contains(text, lastLine) || strings.Count(text, "\n") < 9999 {
				b.Fatalf("%s did not return the whole file (%d bytes, %d lines)", v.column, len(text), strings.Count(text, "\n"))
			}
			record(b, "read", v.column, f)
			b.ReportMetric(float64(len(text)), "reply-bytes")
		})
	}
}

// BenchmarkEditOneLine changes one line in the middle of a 1 MB and an 11 MB file,
// checking after every call that the file on disk holds exactly the edit.
func BenchmarkEditOneLine(b *testing.B) {
	for _, size := range []struct {
		name  string
		bytes int
	}{{"1MB", 1 << 20}, {"11MB", 11 << 20}} {
		fx := newEditFixture(size.bytes)
		b.Run(size.name, func(b *testing.B) {
			for _, srv := range servers {
				b.Run(srv.name, func(b *testing.B) {
					dir := testenv.TempDir(b)
					path := filepath.Join(dir, "big.go")
					writeFile(b, path, fx.content(0))
					cn := connect(b, srv, dir)
					defer cn.close()
					f := &figure{}
					editTo := func(k int) {
						elapsed := timed(func() { cn.call(b, cn.edit(path, target(k-1), target(k))) })
						if !bytes.Equal(readFile(b, path), fx.content(k)) {
							b.Fatalf("%s: after edit %d the file does not hold exactly the edit", srv.name, k)
						}
						if k == 1 {
							f.first = elapsed
						} else {
							f.samples = append(f.samples, elapsed)
						}
					}
					for k := 1; k <= 1+editReps*b.N; k++ {
						editTo(k)
					}
					f.rss = cn.peakRSS()
					record(b, "edit-"+size.name, srv.name, f)
				})
			}
		})
	}
}

// BenchmarkPipelinedEdits sends 20 edits to one file at once (20 goroutines on one
// client), each changing a different line, and counts the edits that survive: a
// server that reads, edits and writes without serialising loses updates.
func BenchmarkPipelinedEdits(b *testing.B) {
	for _, srv := range servers {
		b.Run(srv.name, func(b *testing.B) {
			dir := testenv.TempDir(b)
			warm := filepath.Join(dir, "warm.go")
			writeFile(b, warm, pipelineFile(1))
			cn := connect(b, srv, dir)
			defer cn.close()
			f := &figure{}
			// One edit first: warms the server up and, for mcpdiff, opens the
			// conversation the pipelined calls then share.
			f.first = timed(func() { cn.call(b, cn.edit(warm, slot(0, false), slot(0, true))) })
			for r := range pipelineReps * b.N {
				path := filepath.Join(dir, "pipelined-"+strconv.Itoa(r)+".go")
				writeFile(b, path, pipelineFile(pipelined))
				var acked sync.WaitGroup
				var mu sync.Mutex
				ok := 0
				f.samples = append(f.samples, timed(func() {
					for j := range pipelined {
						acked.Go(func() {
							if _, err := cn.try(cn.edit(path, slot(j, false), slot(j, true))); err == nil {
								mu.Lock()
								ok++
								mu.Unlock()
							}
						})
					}
					acked.Wait()
				}))
				content := string(readFile(b, path))
				survived := 0
				for j := range pipelined {
					if strings.Contains(content, slot(j, true)+"\n") {
						survived++
					}
				}
				f.survived = append(f.survived, survived)
				f.acked = append(f.acked, ok)
			}
			record(b, "pipelined", srv.name, f)
			b.ReportMetric(float64(slices.Min(f.survived)), "min-survivors")
		})
	}
}
