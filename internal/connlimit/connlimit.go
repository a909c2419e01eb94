// Package connlimit bounds the connections of an HTTP server without letting idle or
// half-open ones keep a new client out: at the limit, a new connection takes the
// place of the oldest one that is not serving a request.
//
// A limit that makes new connections wait for a free place (as a semaphore around
// Accept does) lets a few hundred half-open connections hold every place for the
// header timeout, in turns, so a well-formed request waits for several timeouts.
// Here nothing waits: a connection that has not sent its headers, or sits idle
// between requests, is closed to make room, oldest first; one whose handler runs is
// never closed, and when every place is taken by such, the newcomer is closed.
package connlimit

import (
	"context"
	"net"
	"net/http"
	"sync"
)

// Limit makes srv hold at most n connections at once, the one being accepted
// included, and returns the listener to serve on (srv.Serve(Limit(srv, ln, n))).
// It wraps srv.Handler and sets srv.ConnState (calling the one already set) and
// srv.ConnContext, which must not be changed afterwards. n below 2 is taken as 2.
func Limit(srv *http.Server, ln net.Listener, n int) net.Listener {
	l := &limiter{max: max(n, 2), conns: map[*conn]struct{}{}}
	next := srv.Handler
	if next == nil {
		next = http.DefaultServeMux
	}
	srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := r.Context().Value(connKey{}).(*conn)
		l.mark(c, serving)
		defer l.mark(c, finishing)
		next.ServeHTTP(w, r)
	})
	prev := srv.ConnState
	srv.ConnState = func(nc net.Conn, st http.ConnState) {
		if c, ok := nc.(*conn); ok {
			switch st {
			case http.StateIdle:
				l.mark(c, waiting)
			case http.StateHijacked:
				l.mark(c, serving) // the handler owns it now; it is counted until closed
			}
		}
		if prev != nil {
			prev(nc, st)
		}
	}
	srv.ConnContext = func(ctx context.Context, nc net.Conn) context.Context {
		return context.WithValue(ctx, connKey{}, nc)
	}
	return &listener{Listener: ln, l: l}
}

type connKey struct{}

// What a connection is doing, in the order they are given up at the limit.
const (
	waiting   = iota // for its request's headers: half-open, or idle between requests
	finishing        // its handler has returned; the server finishes the response
	serving          // a handler is running: never closed to make room
)

type limiter struct {
	max   int
	mu    sync.Mutex
	conns map[*conn]struct{}
	clock uint64 // orders the connections by when they last changed phase
}

type conn struct {
	net.Conn
	l     *limiter
	phase int
	since uint64
	once  sync.Once
}

// Close forgets the connection, then closes it.
func (c *conn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}

func (l *limiter) mark(c *conn, phase int) {
	if c == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.clock++
	c.phase, c.since = phase, l.clock
}

type listener struct {
	net.Listener
	l *limiter
}

// Accept returns the next connection once there is room for it: with max-1 held,
// the oldest of those not serving a request is closed first; when all of them are
// serving, the new connection is closed instead and the next one is accepted.
func (ln *listener) Accept() (net.Conn, error) {
	for {
		nc, err := ln.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if c := ln.l.admit(nc); c != nil {
			return c, nil
		}
		nc.Close()
	}
}

// admit makes room for nc and returns it tracked, or returns nil when every place is
// serving a request. The place is made before admit returns, so that the sockets
// open never exceed max.
func (l *limiter) admit(nc net.Conn) *conn {
	l.mu.Lock()
	var victim *conn
	if len(l.conns) >= l.max-1 {
		for c := range l.conns {
			if c.phase != serving && (victim == nil || c.phase < victim.phase ||
				c.phase == victim.phase && c.since < victim.since) {
				victim = c
			}
		}
		if victim == nil {
			l.mu.Unlock()
			return nil
		}
		delete(l.conns, victim) // chosen once, even before it is closed
	}
	l.clock++
	c := &conn{Conn: nc, l: l, phase: waiting, since: l.clock}
	l.conns[c] = struct{}{}
	l.mu.Unlock()
	if victim != nil {
		victim.Close()
	}
	return c
}
