//go:build race

package ide

const raceDetector = true
