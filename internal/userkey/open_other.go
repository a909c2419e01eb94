//go:build !unix

package userkey

// openNoFollow: Windows has no FIFOs to block on; the key file's type and owner are
// checked after it is opened.
const openNoFollow = 0
