//go:build portable || !linux

package main

// dropCodePages does nothing where there is no /proc/self/maps to find the binary's
// pages in: the bridge then keeps the code it touched resident, a few MB more.
func dropCodePages() {}
