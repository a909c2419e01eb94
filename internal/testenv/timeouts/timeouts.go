// Package timeouts holds the one factor every deadline of the tests is multiplied
// by, $MCPDIFF_TEST_TIMEOUT_SCALE (default 1; 3 on a slow or busy machine, say), so
// that a slower machine needs one setting and never a changed test. It imports
// nothing of mcpdiff, so that the unit tests of the packages below internal/testenv
// (which cannot import testenv) scale their deadlines by it too.
package timeouts

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

// Scale is $MCPDIFF_TEST_TIMEOUT_SCALE. A value that is not a positive number stops
// the tests at their start, rather than being taken as 1 unnoticed.
var Scale = scale()

func scale() float64 {
	v := os.Getenv("MCPDIFF_TEST_TIMEOUT_SCALE")
	if v == "" {
		return 1
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f <= 0 {
		panic(fmt.Sprintf("MCPDIFF_TEST_TIMEOUT_SCALE=%q: want a positive number such as 2 or 0.5", v))
	}
	return f
}

// Scaled is d times Scale.
func Scaled(d time.Duration) time.Duration { return time.Duration(float64(d) * Scale) }
