package testenv

import (
	"flag"
)

// Benchmarking tells, from TestMain (after flag.Parse), whether the run benchmarks
// (-bench): a benchmark suite has nothing to build or install under `go test ./...`.
func Benchmarking() bool {
	f := flag.Lookup("test.bench")
	return f != nil && f.Value.String() != ""
}
